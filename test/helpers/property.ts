import fc from 'fast-check';

/**
 * How long one long property may run. Each finishes its runs in a few seconds on a quiet machine and in several
 * times that on a loaded one; past this budget fast-check starts no new run and the property passes on the runs it
 * made (it fails if it made none, and any run that failed fails it), saying so on stderr. The budget leaves room for
 * a machine ten times slower, and keeps a property from being killed by jest's timeout with nothing said.
 */
export const PROPERTY_BUDGET_MS = 60_000;

/** Jest's limit for a test of one long property: its budget, the run under way when it ends, and the test's set-up. */
export const PROPERTY_TEST_TIMEOUT_MS = PROPERTY_BUDGET_MS + 60_000;

/** fast-check's parameters for a long property: `numRuns` runs within PROPERTY_BUDGET_MS. */
export function withinBudget<Ts>(numRuns: number): fc.Parameters<Ts> {
  return {
    numRuns,
    // The plugin works on any property; fast-check types it for unknown values only.
    plugins: [fc.interruptAfterTimeLimit(PROPERTY_BUDGET_MS) as fc.Plugin<Ts>],
    reporter: (details) => {
      // fast-check's own report of a failure (counterexample, seed, path), as fc.assert would throw it.
      if (details.failed) throw new Error(fc.defaultReportMessage(details), { cause: details.errorInstance ?? undefined });
      if (details.interrupted) {
        process.stderr.write(
          `${expect.getState().currentTestName}: ${details.numRuns} of ${numRuns} runs within the ${PROPERTY_BUDGET_MS / 1000} s budget of a property\n`,
        );
      }
    },
  };
}
