import fc from 'fast-check';
import { calendarDate, dayNumber, tokenId } from '../../src/schemas/fields';

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
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (n) => tokenId.parse(n) === tokenId.parse(String(n))),
    );
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
