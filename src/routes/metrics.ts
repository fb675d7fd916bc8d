import { Router } from 'express';
import { methodNotAllowed } from '../middleware/errors';
import { commonHeaders } from '../middleware/send-json';
import type { Metrics } from '../metrics';

/** Prometheus scrape endpoint. Never rate limited. */
export function metricsRouter(metrics: Metrics): Router {
  const router = Router();
  router
    .route('/metrics')
    .get(commonHeaders, async (_req, res) => {
      res.set('Content-Type', metrics.registry.contentType).send(await metrics.registry.metrics());
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  return router;
}
