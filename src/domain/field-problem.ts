/** A rule a request breaks, named by the field that breaks it: what a validation error lists, one per field. */
export interface FieldProblem {
  field: string;
  message: string;
}
