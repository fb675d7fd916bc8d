import express, { Router } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import { methodNotAllowed } from '../middleware/errors';
import { commonHeaders } from '../middleware/send-json';

/** Scripts and styles come from the installed swagger-ui-dist package, never a CDN: the service often runs offline. */
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Token and booking receiver: API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

/** A file rather than an inline script, so the strict Content-Security-Policy holds. */
const INIT_SCRIPT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });\n`;

export function docsRouter(): Router {
  const router = Router();
  router
    .route('/docs')
    .get(commonHeaders, (_req, res) => {
      res.type('text/html').send(PAGE);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  router
    .route('/docs/init.js')
    .get(commonHeaders, (_req, res) => {
      res.type('application/javascript').send(INIT_SCRIPT);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  router.use('/docs/assets', commonHeaders, express.static(getAbsoluteFSPath(), { index: false, etag: false }));
  return router;
}
