import { escapeLiteral } from 'pg';

/**
 * A value as an SQL literal, for the statements a unit of work sends several
 * at a time (pg-store.ts): strings through the driver's escapeLiteral, integers as
 * digits, times as timestamptz, objects as jsonb. Anything else is refused,
 * and so is NUL, which would end the statement's text early.
 */
export function literal(value: unknown): string {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw new Error('a NUL character cannot be stored');
    return escapeLiteral(value);
  }
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`${value} is not a safe integer`);
    return String(value);
  }
  if (value instanceof Date) return `${escapeLiteral(value.toISOString())}::timestamptz`;
  const prototype: unknown = typeof value === 'object' && value !== null ? Object.getPrototypeOf(value) : undefined;
  if (prototype === Object.prototype || prototype === null) {
    return `${literal(JSON.stringify(value))}::jsonb`;
  }
  throw new Error(`cannot write ${typeof value} as an SQL literal`);
}
