import type { z } from 'zod';
import { LISTED_PROBLEMS, type FieldProblem } from '../domain/field-problem';
import { shownField, ValidationError } from '../errors';

/** A strict object's unknown keys are one issue; each is a field of its own here, so a caller sees each one named. */
function perKey(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  return issues.flatMap((issue): z.core.$ZodIssue[] =>
    issue.code === 'unrecognized_keys' ? issue.keys.map((key) => ({ ...issue, path: [...issue.path, key] })) : [issue],
  );
}

/** One problem per field (the first zod found), so a caller sees every bad field once. */
export function fieldProblems(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): FieldProblem[] {
  const byField = new Map<string, string>();
  for (const issue of perKey(issues)) {
    const path = [...prefix, ...issue.path];
    const field = path.length === 0 ? 'body' : path.map(String).join('.');
    const message = path.length === 0 && issue.code === 'invalid_type' ? 'must be a JSON object' : issue.message;
    if (!byField.has(field)) byField.set(field, message);
  }
  return [...byField].map(([field, message]) => ({ field, message }));
}

/** The message names the fields the answer lists (errors.ts, LISTED_PROBLEMS), and how many more there were. */
export function validationError(problems: FieldProblem[], reason?: string): ValidationError {
  const listed = problems.slice(0, LISTED_PROBLEMS).map((problem) => shownField(problem.field));
  const more = problems.length > LISTED_PROBLEMS ? ` and ${problems.length - LISTED_PROBLEMS} more` : '';
  return new ValidationError(`Invalid ${problems.length === 1 ? 'field' : 'fields'}: ${listed.join(', ')}${more}`, problems, reason);
}

/** Parses with a schema, or throws a ValidationError naming every bad field. */
export function parsePayload<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationError(fieldProblems(result.error.issues));
}
