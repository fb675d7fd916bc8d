import type { Express } from 'express';
import { createApp } from '../../src/app';
import { createLogger } from '../../src/logger';
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

const INTAKE = ['refuseWhileDraining', 'limitPerAddress', 'jsonBody', 'verifySignature'];
const AFTER_AUTHENTICATION = ['limitPerAccount'];

describe('the app createApp builds', () => {
  const app = createApp({
    store: new MemoryStore(),
    logger: createLogger('silent'),
    config: testConfig({ bodyLimitBytes: 1024, rateLimitPerMinute: 10, rateLimitPerAddressPerMinute: 10 }),
  });
  const routes = routesOf(app);

  it('serves each operation as a route of an Express router, its middleware in the contract order before one handler', () => {
    const chain = (...schemaAndAuth: string[]) => ['nameOperation', ...INTAKE, ...schemaAndAuth, ...AFTER_AUTHENTICATION, 'respond'];
    expect(routes.get('/v1/tokens/status-change')).toEqual({
      post: chain('validate', 'authenticate'),
      all: ['methodNotAllowed'],
    });
    expect(routes.get('/v1/tokens/withdraw')).toEqual({
      head: ['methodNotAllowed'],
      get: chain('validate', 'authenticate'),
      post: chain('validate', 'authenticate'),
      all: ['methodNotAllowed'],
    });
    for (const path of ['/v1/tokens/loaded', '/v1/tokens/unloaded', '/v1/tokens/load-schedule', '/v1/tokens/expiry-date', '/v1/tokens/available-date']) {
      expect([path, routes.get(path)]).toEqual([path, { post: chain('validate', 'authenticate'), all: ['methodNotAllowed'] }]);
    }
    const keyed = (...beforeSchema: string[]) => ['nameOperation', 'supportedVersion', ...INTAKE, ...beforeSchema, 'validate', 'authenticate', ...AFTER_AUTHENTICATION, 'respond'];
    expect(routes.get('/:version/token/:partnerid/:randomkey')).toEqual({ post: keyed(), all: ['methodNotAllowed'] });
    const booking = keyed('refuseOtherOperation');
    expect(routes.get('/:version/booking/:partnerid/:randomkey')).toEqual({ post: booking, patch: booking, delete: booking, all: ['methodNotAllowed'] });
  });

  it('serves /v1/events through the same intake, then the chain of the operation its read_event names', () => {
    expect(routes.get('/v1/events')).toEqual({
      post: ['nameOperation', ...INTAKE, 'dispatchOnReadEvent'],
      all: ['methodNotAllowed'],
    });
  });
});
