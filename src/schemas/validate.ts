import type { z } from 'zod';
import type { FieldProblem } from '../domain/field-problem';
import { ValidationError } from '../errors';

/** One problem per field (the first zod found), so a caller sees every bad field once. */
export function fieldProblems(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): FieldProblem[] {
  const byField = new Map<string, string>();
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    const field = path.length === 0 ? 'body' : path.map(String).join('.');
    const message = path.length === 0 && issue.code === 'invalid_type' ? 'must be a JSON object' : issue.message;
    if (!byField.has(field)) byField.set(field, message);
  }
  return [...byField].map(([field, message]) => ({ field, message }));
}

export function validationError(problems: FieldProblem[], reason?: string): ValidationError {
  const fields = problems.map((problem) => problem.field).join(', ');
  return new ValidationError(`Invalid ${problems.length === 1 ? 'field' : 'fields'}: ${fields}`, problems, reason);
}

/** Parses with a schema, or throws a ValidationError naming every bad field. */
export function parsePayload<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationError(fieldProblems(result.error.issues));
}
