/**
 * The layers of docs/DEVELOPMENT.md, checked: npm run lint:architecture (CI runs it) fails on any import that
 * points the wrong way. Type-only imports count too, since they tie the modules together as much as values do.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'A cycle leaves no module that can be read, or changed, first.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-stands-alone',
      comment: 'src/domain is the bottom layer: it imports nothing of src outside itself.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'services-know-no-http',
      comment: 'A service is called by a route with validated input; it knows nothing of routes, middleware, the app, the catalogue, its documents, the process or the seed.',
      severity: 'error',
      from: { path: '^src/services/' },
      to: { path: '^src/(routes/|middleware/|app\\.ts$|operations/|openapi/|process/|seed/)' },
    },
    {
      name: 'store-below-services',
      comment: 'The store persists the domain: it knows nothing of the services, the HTTP layers or the payload schemas.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/(services/|routes/|middleware/|schemas/|app\\.ts$)' },
    },
    {
      name: 'routes-mounted-by-app-only',
      comment: 'Only src/app.ts mounts the routers; a route may use its siblings.',
      severity: 'error',
      from: { pathNot: '^src/(app\\.ts$|routes/)' },
      to: { path: '^src/routes/' },
    },
    {
      name: 'schemas-below-services-and-store',
      comment: 'A payload schema describes the wire format; it calls no service, store or route.',
      severity: 'error',
      from: { path: '^src/schemas/' },
      to: { path: '^src/(services/|store/|routes/)' },
    },
    {
      name: 'process-around-the-app',
      comment:
        'src/process is what runs around the app (config, logger, metrics, redis, the HTTP server, shutdown, traces): it knows no routes, services, catalogue, documents, seed or app; of the middleware, only the signature scheme (webhooks.ts), whose secrets config parses, and the request context, which names the traces\' spans.',
      severity: 'error',
      from: { path: '^src/process/' },
      to: { path: '^src/(routes/|services/|operations/|openapi/|seed/|app\\.ts$|middleware/(?!(webhooks|request-context)\\.ts$))' },
    },
    {
      name: 'process-wiring-by-server-only',
      comment: 'The HTTP server, shutdown and traces are wired by server.ts alone: app.ts builds the app and never listens.',
      severity: 'error',
      from: { pathNot: '^src/(server\\.ts$|process/)' },
      to: { path: '^src/process/(http-server|shutdown|tracing)\\.ts$' },
    },
    {
      name: 'seed-read-at-start-only',
      comment: 'The seed file is read and checked at start (server.ts) and by the CLI, never on a request\'s path.',
      severity: 'error',
      from: { pathNot: '^src/(server\\.ts$|cli/|seed/)' },
      to: { path: '^src/seed/' },
    },
    {
      name: 'seed-below-the-app',
      comment: 'The seed is checked with the domain and the field schemas; it knows no routes, services, catalogue, documents or app, and of the middleware only the signature scheme (webhooks.ts), whose secrets it parses.',
      severity: 'error',
      from: { path: '^src/seed/' },
      to: { path: '^src/(routes/|services/|operations/|openapi/|app\\.ts$|middleware/(?!webhooks\\.ts$))' },
    },
    {
      name: 'catalogue-below-routes',
      comment: 'The catalogue wires schemas to services; the routes and the OpenAPI document read it, never the other way.',
      severity: 'error',
      from: { path: '^src/operations/' },
      to: { path: '^src/(routes/|middleware/|openapi/|process/|seed/|app\\.ts$)' },
    },
    {
      name: 'operation-docs-for-the-document-only',
      comment: "An operation's documentation (summary, description, examples) is read by its catalogue entry and the OpenAPI document only, never by a request's chain.",
      severity: 'error',
      from: { pathNot: '^src/(operations|openapi)/' },
      to: { path: '^src/operations/docs\\.ts$' },
    },
    {
      name: 'openapi-served-and-written-only',
      comment: 'The OpenAPI document is built by its route (routes/openapi.ts) and its CLI (cli/openapi.ts), nothing else.',
      severity: 'error',
      from: { pathNot: '^src/(openapi/|routes/openapi\\.ts$|cli/openapi\\.ts$)' },
      to: { path: '^src/openapi/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
