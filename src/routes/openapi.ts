import { Router } from 'express';
import { methodNotAllowed } from '../middleware/errors';
import { sendJson } from '../middleware/send-json';
import { buildOpenApiDocument } from '../openapi/document';
import { SERVICE_VERSION } from '../process/version';

/** The OpenAPI document, built and encoded once from the zod schemas: about 240 KB, no longer re-encoded per request. */
export function openApiRouter(): Router {
  const document = Buffer.from(JSON.stringify(buildOpenApiDocument(SERVICE_VERSION)));
  const router = Router();
  router
    .route('/openapi.json')
    .get((_req, res) => {
      sendJson(res, 200, document);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  return router;
}
