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
      comment: 'A service is called by a route with validated input; it knows nothing of routes, middleware or the app.',
      severity: 'error',
      from: { path: '^src/services/' },
      to: { path: '^src/(routes/|middleware/|app\\.ts$)' },
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
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
