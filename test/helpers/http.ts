import type { FieldProblem } from '../../src/errors';

/** The contract's error envelope, written out literally so tests do not trust the code under test. */
export function errorBody(status: number, message: string, details?: FieldProblem[]) {
  return { success: 'false', errors: { code: String(status), message, ...(details ? { details } : {}) } };
}

export const SUCCESS_BODY = { success: true, message: 'Success' };
