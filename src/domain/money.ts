/**
 * Amounts travel as decimal strings ("900", "900.5", "900.50") and are
 * computed as integer minor units (cents). Ten integer digits and two
 * decimals stay far below Number.MAX_SAFE_INTEGER, so plain integers are exact.
 */

export type MinorUnits = number;

export const AMOUNT_PATTERN = /^(\d{1,10})(?:\.(\d{1,2}))?$/;

export const AMOUNT_FORMAT_MESSAGE = 'must be a decimal amount: 1 to 10 digits, optionally a point and 1 or 2 decimals (e.g. "100.00")';

/** Parses a decimal amount string; throws RangeError when it is not one. */
export function parseAmount(text: string): MinorUnits {
  const match = AMOUNT_PATTERN.exec(text);
  if (!match) throw new RangeError(`not an amount: ${JSON.stringify(text)}`);
  const cents = (match[2] ?? '').padEnd(2, '0');
  return Number(match[1]) * 100 + Number(cents);
}

/** Writes minor units back with exactly two decimals: 90000 -> "900.00". */
export function formatAmount(minor: MinorUnits): string {
  if (!Number.isSafeInteger(minor) || minor < 0) throw new RangeError(`not a non-negative whole number of minor units: ${minor}`);
  const whole = Math.trunc(minor / 100);
  const cents = minor % 100;
  return `${whole}.${String(cents).padStart(2, '0')}`;
}
