/** A rule a request breaks, named by the field that breaks it: what a validation error lists, one per field. */
export interface FieldProblem {
  field: string;
  message: string;
}

/**
 * Contract section 11: an answer to a bad request lists at most this many problems, and how many there were, whatever
 * the request's size (2,198 unknown fields of a 32 KB body had made a 259 KB answer). It is above the fields of the
 * largest payload (a booking's 20 fields and the 4 that name it), so every field a payload defines is still named at once
 * (section 3); only unknown fields past it (Status Change's status typos) go uncounted in the list.
 */
export const LISTED_PROBLEMS = 30;
