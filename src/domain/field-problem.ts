/** A rule a request breaks, named by the field that breaks it: what a validation error lists, one per field. */
export interface FieldProblem {
  field: string;
  message: string;
}

/**
 * Contract section 11: an answer to a bad request lists at most this many problems, and how many there were, whatever
 * the request's size (2,198 unknown fields of a 32 KB body had made a 259 KB answer).
 */
export const LISTED_PROBLEMS = 10;
