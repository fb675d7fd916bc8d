import fc from 'fast-check';
import { dayNumber } from '../../src/domain/calendar-days';
import { calendarDate, tokenId } from '../../src/schemas/fields';

describe('token_id', () => {
  it.each([
    [1010, '1010'],
    ['1010', '1010'],
    [Number.MAX_SAFE_INTEGER, '9007199254740991'],
    ['9'.repeat(32), '9'.repeat(32)],
  ])('reads %p as the token %p', (input, key) => {
    expect(tokenId.parse(input)).toBe(key);
  });

  it('property: an integer and its decimal string name the same token', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (n) => tokenId.parse(n) === tokenId.parse(String(n))));
  });
});

describe('DD-MM-YYYY dates', () => {
  it.each(['29-02-2024', '31-12-1999', '01-01-2000', '28-02-2100'])('accepts %p', (date) => {
    expect(calendarDate.safeParse(date).success).toBe(true);
  });

  it.each(['29-02-2023', '31-04-2024', '00-01-2024', '01-13-2024', '1-1-2024', '2024-01-01', '01-01-0999', '29-02-2100'])(
    'rejects %p',
    (date) => {
      expect(calendarDate.safeParse(date).success).toBe(false);
    },
  );

  it('the one regular expression agrees with the calendar (Date.UTC): every day and month of years around each leap rule, and 29 February of every year', () => {
    const pad = (value: number, width = 2) => String(value).padStart(width, '0');
    const isReal = (day: number, month: number, year: number) => {
      const date = new Date(Date.UTC(year, month - 1, day));
      return year >= 1000 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
    };
    const disagreements: string[] = [];
    const check = (day: number, month: number, year: number) => {
      const written = `${pad(day)}-${pad(month)}-${pad(year, 4)}`;
      if (calendarDate.safeParse(written).success !== isReal(day, month, year)) disagreements.push(written);
    };
    for (const year of [0, 999, 1000, 1200, 1600, 1700, 1900, 1996, 2000, 2023, 2024, 2100, 2400, 9996, 9999]) {
      for (let month = 0; month <= 13; month += 1) for (let day = 0; day <= 32; day += 1) check(day, month, year);
    }
    for (let year = 1000; year <= 9999; year += 1) check(29, 2, year);
    expect(disagreements).toEqual([]);
  });

  it('property: every real date round-trips and orders like the calendar', () => {
    const day = fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2999-12-31T00:00:00Z'), noInvalidDate: true });
    const write = (d: Date) =>
      `${String(d.getUTCDate()).padStart(2, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${d.getUTCFullYear()}`;
    fc.assert(
      fc.property(day, day, (a, b) => {
        const [na, nb] = [dayNumber(write(a)), dayNumber(write(b))];
        if (na === undefined || nb === undefined) return false;
        const calendarOrder = Math.sign(Math.floor(a.getTime() / 86_400_000) - Math.floor(b.getTime() / 86_400_000));
        return Math.sign(na - nb) === calendarOrder;
      }),
    );
  });
});
