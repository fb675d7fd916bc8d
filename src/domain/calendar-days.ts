/**
 * Token dates are UTC calendar days, written DD-MM-YYYY on the wire and kept as day numbers (days since
 * 1970-01-01), so comparing two dates is comparing two integers.
 */

const DATE_PATTERN = /^(\d{2})-(\d{2})-(\d{4})$/;
const DAY_MS = 86_400_000;

/** Days since an arbitrary origin for a DD-MM-YYYY date, or undefined when it is not a real calendar date. */
export function dayNumber(date: string): number | undefined {
  const match = DATE_PATTERN.exec(date);
  if (!match) return undefined;
  const [day, month, year] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const utc = Date.UTC(year, month - 1, day);
  const parsed = new Date(utc);
  if (year < 1000 || parsed.getUTCFullYear() !== year || parsed.getUTCMonth() !== month - 1 || parsed.getUTCDate() !== day) {
    return undefined;
  }
  return utc / DAY_MS;
}

/** The UTC calendar day of a moment, as dayNumber counts days. */
export function dayOf(moment: Date): number {
  return Math.floor(moment.getTime() / DAY_MS);
}

/** True when both are real DD-MM-YYYY dates and `date` is the earlier; a missing or invalid date orders nothing (its own check reports it). */
export function isBeforeDate(date: string | undefined, other: string | undefined): boolean {
  const [day, otherDay] = [date === undefined ? undefined : dayNumber(date), other === undefined ? undefined : dayNumber(other)];
  return day !== undefined && otherDay !== undefined && day < otherDay;
}

/** A day number back as DD-MM-YYYY. */
export function formatDay(day: number): string {
  const date = new Date(day * DAY_MS);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${pad(date.getUTCDate())}-${pad(date.getUTCMonth() + 1)}-${date.getUTCFullYear()}`;
}
