import { Router } from 'express';
import { methodNotAllowed } from '../middleware/errors';
import type { OperationRoute } from '../operations/catalogue';
import { chainOf, type OperationSteps } from './lifecycle';

/**
 * The router of one path of the catalogue: each operation's chain (routes/lifecycle.ts) on its methods, and a 405
 * (or OPTIONS' 204) for any other method, naming them all. HEAD is refused before Express would run a GET's chain
 * for it: only the listed methods ever move money.
 */
export function operationRouter({ path, operations }: OperationRoute, steps: OperationSteps): Router {
  const allowed = operations.flatMap((entry) => entry.methods.map((method) => method.toUpperCase()));
  const router = Router();
  const route = router.route(path);
  if (allowed.includes('GET')) route.head(methodNotAllowed(allowed));
  for (const entry of operations) {
    const chain = chainOf(entry, steps);
    for (const method of entry.methods) route[method](...chain);
  }
  route.all(methodNotAllowed(allowed));
  return router;
}
