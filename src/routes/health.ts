import { Router } from 'express';
import { ServiceUnavailableError } from '../errors';
import { methodNotAllowed } from '../middleware/errors';
import { sendJson } from '../middleware/send-json';
import type { Store } from '../store/store';

/** Contract section 11: /readyz asks the store at most this often per instance, however many probes arrive. */
const READINESS_CHECK_INTERVAL_MS = 1_000;

/** The store's answer to its last ping, asked again once it is READINESS_CHECK_INTERVAL_MS old; probes meanwhile share it. */
function readinessCheck(store: Store): () => Promise<boolean> {
  let checkedAt = 0;
  let ready: Promise<boolean> | undefined;
  return () => {
    if (!ready || Date.now() - checkedAt >= READINESS_CHECK_INTERVAL_MS) {
      checkedAt = Date.now();
      ready = store.ping().then(
        () => true,
        () => false,
      );
    }
    return ready;
  };
}

/** Liveness answers while the process serves; readiness asks the store (at most once a second) and turns 503 once the stop's signal came. */
export function healthRouter(store: Store, isStopping: () => boolean): Router {
  const isReady = readinessCheck(store);
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
      // A stop is expected (contract section 8): its 503 carries the drain's reason, logged below error level.
      if (isStopping()) throw new ServiceUnavailableError('shutting_down');
      if (!(await isReady())) throw new ServiceUnavailableError();
      sendJson(res, 200, '{"status":"ready"}');
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  return router;
}
