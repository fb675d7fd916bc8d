/** @type {import('jest').Config} */
const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
};

/** One project per kind of test; `npm run test:fast` runs unit and api (on the memory store unless TEST_DATABASE_URL is set). */
module.exports = {
  // The machine is shared: a test may take several times its idle time, and must not fail for that.
  testTimeout: 30_000,
  // Jest's default leaves a core idle (cores - 1: one worker on a two-core machine); the tests mostly wait on
  // PostgreSQL, child processes and sockets, so a worker per core halves the run (415 s -> 183 s here, CI's flags).
  maxWorkers: '100%',
  projects: ['unit', 'api', 'store', 'process'].map((name) => ({ ...shared, displayName: name, testMatch: [`<rootDir>/test/${name}/**/*.test.ts`] })),
  collectCoverageFrom: ['src/**/*.ts'],
  coverageReporters: ['text-summary', 'json-summary'],
};
