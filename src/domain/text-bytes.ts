import type { FieldProblem } from './field-problem';

/**
 * What a request may make the service keep of an object's free text, in bytes (issue 42): its text fields are up to
 * 255 characters each, but a character is 1 to 3 bytes of UTF-8 (4 for a pair), and 6 as a JSON escape
 * (`\u0001`), which is how a kept answer holds it. The text fields of one object together take at most 255 bytes a
 * field as JSON text: whatever plain ASCII the character limits allow still fits, and 255 CJK characters in
 * every field (about three times that) do not.
 */
export const TEXT_BYTES_PER_FIELD = 255;

/** The bytes a string takes in a JSON answer, UTF-8, without its quotes. */
function jsonTextBytes(value: string): number {
  return Buffer.byteLength(JSON.stringify(value)) - 2;
}

/** A problem when the given text fields of one object take more bytes together than their bound; one field is named as itself. */
export function textBytesProblem<Field extends string>(
  values: Readonly<Partial<Record<Field, string>>>,
  fields: readonly Field[],
): FieldProblem | undefined {
  const limit = TEXT_BYTES_PER_FIELD * fields.length;
  const taken = fields.reduce((sum, field) => sum + jsonTextBytes(values[field] ?? ''), 0);
  if (taken <= limit) return undefined;
  const bytes = 'a character of plain ASCII is one byte, most others two or three';
  if (fields.length === 1) {
    return { field: fields[0], message: `must take at most ${limit} bytes as JSON text in UTF-8 (${bytes}); it takes ${taken}` };
  }
  const listed = `${fields.slice(0, -1).join(', ')} and ${fields.at(-1)}`;
  return {
    field: 'body',
    message: `${listed} together must take at most ${limit} bytes as JSON text in UTF-8 (${TEXT_BYTES_PER_FIELD} a field: ${bytes}); these take ${taken}`,
  };
}
