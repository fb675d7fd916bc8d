import type { FieldProblem } from '../../src/domain/field-problem';
import { waitFor } from './wait';

/** The contract's error envelope, written out literally so tests do not trust the code under test. */
export function errorBody(status: number, message: string, details?: FieldProblem[]) {
  return { success: 'false', errors: { code: String(status), message, ...(details ? { details } : {}) } };
}

export const SUCCESS_BODY = { success: true, message: 'Success' };

/** /readyz answers from a check at most a second old: polls until it answers `status`, for 30 s at most (a loaded machine); resolves with the last status. */
export async function readinessWithin(get: () => PromiseLike<{ status: number }>, status: number, ms = 30_000): Promise<number> {
  let seen = 0;
  // Past the deadline the last status is returned, so the test's own assertion names what was seen.
  await waitFor(async () => (seen = (await get()).status) === status, ms).catch(() => undefined);
  return seen;
}
