import { Router } from 'express';
import { ServiceUnavailableError } from '../errors';
import { methodNotAllowed } from '../middleware/errors';
import { sendJson } from '../middleware/send-json';
import type { Store } from '../store/store';

/** Liveness answers while the process serves; readiness asks the store and turns 503 once draining starts. */
export function healthRouter(store: Store, isShuttingDown: () => boolean): Router {
  const router = Router();
  router
    .route('/healthz')
    .get((_req, res) => {
      sendJson(res, 200, '{"status":"ok"}');
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  router
    .route('/readyz')
    .get(async (_req, res) => {
      if (isShuttingDown()) throw new ServiceUnavailableError();
      await store.ping().catch(() => {
        throw new ServiceUnavailableError();
      });
      sendJson(res, 200, '{"status":"ready"}');
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  return router;
}
