import type { FieldProblem } from '../../src/domain/field-problem';

/** The contract's error envelope, written out literally so tests do not trust the code under test. */
export function errorBody(status: number, message: string, details?: FieldProblem[]) {
  return { success: 'false', errors: { code: String(status), message, ...(details ? { details } : {}) } };
}

export const SUCCESS_BODY = { success: true, message: 'Success' };

/** /readyz answers from a check at most a second old: polls until it answers `status`, for a few seconds at most; resolves with the last status. */
export async function readinessWithin(get: () => PromiseLike<{ status: number }>, status: number, ms = 5_000): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    const seen = (await get()).status;
    if (seen === status || Date.now() > deadline) return seen;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
