import fc from 'fast-check';
import { changeSubject, sourceIdOfToken, subjectToken } from '../../src/delivery/nats-subject';

/**
 * A token every NATS server and subscriber takes literally: no `.` (a token's end), `*` or `>` (wildcards),
 * whitespace, control or non-ASCII characters; and never empty.
 */
const SAFE_TOKEN = /^[A-Za-z0-9_~-]+$/;

/** source_ids as the seed and the schemas take them: 1 to 255 characters, well formed, no NUL. */
const sourceIds = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{1,255}$/),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 255 }).filter((text) => !text.includes('\u0000')),
  fc.string({ unit: fc.constantFrom('.', '*', '>', ' ', '\t', '~', '-', 'a', 'é', '\u0001'), minLength: 1, maxLength: 20 }),
);

describe('subject tokens of source_ids (contract section 13.4)', () => {
  it('every source_id becomes a safe token that gives it back, and two source_ids never share one', () => {
    fc.assert(
      fc.property(sourceIds, sourceIds, (sourceId, other) => {
        const token = subjectToken(sourceId);
        expect(token).toMatch(SAFE_TOKEN);
        expect(sourceIdOfToken(token)).toBe(sourceId);
        if (other !== sourceId) expect(subjectToken(other)).not.toBe(token);
      }),
      { numRuns: 2000 },
    );
  });

  it('a plain source_id is its own token; anything else is ~ and its UTF-8 in base64url', () => {
    expect(subjectToken('PDR28')).toBe('PDR28');
    expect(subjectToken('a_b-C')).toBe('a_b-C');
    expect(subjectToken('acme.eu')).toBe(`~${Buffer.from('acme.eu').toString('base64url')}`);
    // A plain-looking id with the mark is encoded too, so it cannot pose as the encoded form of another.
    expect(subjectToken('~YQ')).toBe(`~${Buffer.from('~YQ').toString('base64url')}`);
    expect(sourceIdOfToken('~YQ')).toBe('a');
    expect(subjectToken('')).toBe('~');
  });

  it('the subject is the root, the token and the type, whose dot makes it two tokens', () => {
    expect(changeSubject({ sourceId: 'PDR28', type: 'token.withdrawn' })).toBe('receiver.changes.PDR28.token.withdrawn');
    expect(changeSubject({ sourceId: 'a.b *', type: 'booking.created' })).toBe('receiver.changes.~YS5iICo.booking.created');
  });
});
