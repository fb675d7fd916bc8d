import { Router } from 'express';
import { methodNotAllowed } from '../middleware/errors';
import { commonHeaders } from '../middleware/send-json';
import type { Metrics } from '../process/metrics';

/** A scrape renders the page at most this often; scrapes in between get the page last rendered. */
const RENDER_INTERVAL_MS = 1_000;

/**
 * Prometheus scrape endpoint, on the metrics listener alone (contract section 8). Rendering walks every series
 * (about 100 times a /healthz), so a flood of scrapes costs one rendering a second, whoever sends it.
 */
export function metricsRouter(metrics: Metrics, clock: () => number = Date.now): Router {
  let page: Promise<string> | undefined;
  let renderedAt = -Infinity;
  const currentPage = () => {
    const now = clock();
    if (page === undefined || now - renderedAt >= RENDER_INTERVAL_MS) {
      renderedAt = now;
      page = metrics.registry.metrics();
    }
    return page;
  };
  const router = Router();
  router
    .route('/metrics')
    .get(commonHeaders, async (_req, res) => {
      res.set('Content-Type', metrics.registry.contentType).send(await currentPage());
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  return router;
}
