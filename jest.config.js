/** @type {import('jest').Config} */
const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
};

/** The projects whose files capture traffic: their logs and answers are checked after each file. */
const TRAFFIC_CHECKED = ['api', 'process'];

/** One project per kind of test; `npm run test:fast` runs unit and api (on the memory store unless TEST_DATABASE_URL is set). */
module.exports = {
  // The machine is shared: a test may take ten times its idle time (a database's CHECKPOINT, a build, a child
  // process's start) and must not fail for that. The limit is there for a test that hangs, not one that is slow;
  // the test waits for events with bounds of their own (test/helpers/wait.ts).
  testTimeout: 120_000,
  // Jest's default leaves a core idle (cores - 1: one worker on a two-core machine); the tests mostly wait on
  // PostgreSQL, child processes and sockets, so a worker per core halves the run (415 s -> 183 s here, CI's flags).
  maxWorkers: '100%',
  // How long a worker may take to exit once the run is over before jest kills it and reports a leak. Jest's 500 ms
  // is a quiet machine's: under load a worker that had nothing left open took longer (every file ended with only
  // its own pipes open), and the report hid nothing. A handle really left open keeps a worker alive for good, so
  // it is still reported, 10 s later.
  workerGracefulExitTimeout: 10_000,
  projects: ['unit', 'api', 'store', 'process'].map((name) => ({
    ...shared,
    displayName: name,
    testMatch: [`<rootDir>/test/${name}/**/*.test.ts`],
    // The projects that serve HTTP check all the traffic of each file once its tests ran (test/helpers/traffic-checks.ts).
    setupFilesAfterEnv: TRAFFIC_CHECKED.includes(name) ? ['<rootDir>/test/helpers/traffic-checks.setup.ts'] : [],
  })),
  collectCoverageFrom: ['src/**/*.ts'],
  coverageReporters: ['text-summary', 'json-summary'],
};
