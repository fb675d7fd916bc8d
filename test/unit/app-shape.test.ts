import type { Express } from 'express';
import { createApp } from '../../src/app';
import { createLogger } from '../../src/process/logger';
import { operationRoutes, type Operation } from '../../src/operations/catalogue';
import { MemoryStore } from '../../src/store/memory-store';
import { testConfig } from '../helpers/app';

interface Layer {
  name: string;
  method?: string;
  handle: { stack?: Layer[] };
  route?: { path: string; stack: Layer[] };
}

/** Every route of every router the app mounts: its path and, per method, the names of its chain in order. */
function routesOf(app: Express): Map<string, Record<string, string[]>> {
  const routes = new Map<string, Record<string, string[]>>();
  for (const mounted of (app.router as unknown as { stack: Layer[] }).stack) {
    for (const layer of mounted.handle.stack ?? []) {
      if (!layer.route) continue;
      // Several routers may serve one path, one method each: their chains are gathered under the path.
      const chains = routes.get(layer.route.path) ?? {};
      for (const step of layer.route.stack) (chains[step.method ?? 'all'] ??= []).push(step.name);
      routes.set(layer.route.path, chains);
    }
  }
  return routes;
}

const RECEIVE = ['refuseWhileDraining', 'limitPerAddress', 'readJsonBody', 'findAccount', 'verifySignature'];
const AFTER_AUTHENTICATION = ['limitPerAccount'];

describe('the app createApp builds', () => {
  const app = createApp({
    store: new MemoryStore(),
    logger: createLogger('silent'),
    config: testConfig({ bodyLimitBytes: 1024, rateLimitPerMinute: 10, rateLimitPerAddressPerMinute: 10 }),
  });
  const routes = routesOf(app);

  /** The chain each kind of catalogue entry is served with, in the contract's order of checks. */
  const chainOf = (entry: Operation): string[] => {
    switch (entry.kind) {
      case 'token notification':
        return ['nameOperation', ...RECEIVE, 'validate', 'authenticate', ...AFTER_AUTHENTICATION, 'applyInOneUnit'];
      case 'keyed':
        return [
          'nameOperation',
          'supportedVersion',
          ...RECEIVE,
          ...(entry.otherOperation ? ['refuseOtherOperation'] : []),
          'validate',
          'authenticate',
          ...AFTER_AUTHENTICATION,
          'applyInOneUnit',
        ];
      case 'event dispatch':
        // Received the same way, then the chain of the operation its read_event names.
        return ['nameOperation', ...RECEIVE, 'dispatchOnEvent'];
      case 'token change dispatch':
        // The version and the receiving steps, then the chain of the token change its token_event names.
        return ['nameOperation', 'supportedVersion', ...RECEIVE, 'dispatchOnEvent'];
      case 'feed':
        // No body to read: the query and path, the bearer secret, the account's limit, the page.
        return ['nameOperation', ...RECEIVE.slice(0, 2), 'validateQuery', 'authenticateBearer', ...AFTER_AUTHENTICATION, 'serveFeed'];
    }
  };

  it('serves each operation of the catalogue as a route of an Express router, its middleware in the contract order before one handler', () => {
    for (const { path, operations } of operationRoutes()) {
      const methods = operations.flatMap((entry) => entry.methods);
      const expected: Record<string, string[]> = methods.includes('get') ? { head: ['methodNotAllowed'] } : {};
      for (const entry of operations) for (const method of entry.methods) expected[method] = chainOf(entry);
      expected.all = ['methodNotAllowed'];
      expect([path, routes.get(path)]).toEqual([path, expected]);
    }
  });

  it('mounts the catalogue in its order, one router per path, before the routes that are not operations', () => {
    const paths = operationRoutes().map(({ path }) => path);
    expect([...routes.keys()].slice(0, paths.length)).toEqual(paths);
  });
});
