/** @type {import('jest').Config} */
const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
};

/** One project per kind of test; `npm run test:fast` runs unit and api (on the memory store unless TEST_DATABASE_URL is set). */
module.exports = {
  // The machine is shared: a test may take several times its idle time, and must not fail for that.
  testTimeout: 30_000,
  projects: ['unit', 'api', 'store', 'process'].map((name) => ({ ...shared, displayName: name, testMatch: [`<rootDir>/test/${name}/**/*.test.ts`] })),
  collectCoverageFrom: ['src/**/*.ts'],
  coverageReporters: ['text-summary', 'json-summary'],
};
