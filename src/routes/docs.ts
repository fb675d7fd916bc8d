import path from 'node:path';
import { Router } from 'express';
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path';
import { methodNotAllowed } from '../middleware/errors';
import { commonHeaders } from '../middleware/send-json';

/**
 * Scripts and styles come from the installed swagger-ui-dist package, never a CDN: the service often runs offline.
 * Only the two files the page loads are served: the package's sample page, its package.json and source maps are not.
 */
const STYLESHEET = 'swagger-ui.css';
const BUNDLE = 'swagger-ui-bundle.js';
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Token and booking receiver: API</title>
<link rel="stylesheet" href="/docs/assets/${STYLESHEET}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/${BUNDLE}"></script>
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
  for (const asset of [STYLESHEET, BUNDLE]) {
    const file = path.join(getAbsoluteFSPath(), asset);
    router
      .route(`/docs/assets/${asset}`)
      .get(commonHeaders, (_req, res) => {
        res.sendFile(file, { etag: false });
      })
      .all(methodNotAllowed(['GET', 'HEAD']));
  }
  return router;
}
