import type { Change } from '../store/store';

/** Every subject the relay publishes on starts here; the stream the service creates captures `receiver.changes.>`. */
export const CHANGE_SUBJECT_ROOT = 'receiver.changes';

/**
 * A source_id taken as its own subject token: letters, digits, `_` and `-`. NATS allows more in a token, but these
 * mean nothing to a subscriber's wildcards, a shell or a monitoring page, and none of them is the encoded form's mark.
 */
const PLAIN_TOKEN = /^[A-Za-z0-9_-]+$/;

/** Starts an encoded token: never in a plain one, so the two forms can never name the same token. */
const ENCODED_MARK = '~';

/**
 * The subject token of an account (contract section 13.4): the source_id itself when it is a plain token, otherwise
 * `~` and the base64url of its UTF-8 bytes (a `.`, a space, `*`, `>`, a control or non-ASCII character would split,
 * widen or break the subject). Reversible: sourceIdOfToken gives the source_id back.
 */
export function subjectToken(sourceId: string): string {
  return PLAIN_TOKEN.test(sourceId) ? sourceId : ENCODED_MARK + Buffer.from(sourceId, 'utf8').toString('base64url');
}

/** The source_id a subject token stands for: a consumer's decoding, written here once for the tests and the docs. */
export function sourceIdOfToken(token: string): string {
  return token.startsWith(ENCODED_MARK) ? Buffer.from(token.slice(ENCODED_MARK.length), 'base64url').toString('utf8') : token;
}

/**
 * `receiver.changes.<account's token>.<type>`. The type's own dot (`token.withdrawn`) makes it two tokens, so a
 * subscriber takes an account's token changes with `receiver.changes.PDR28.token.>`, and one type of every account
 * with `receiver.changes.*.token.withdrawn`.
 */
export function changeSubject(change: Pick<Change, 'sourceId' | 'type'>): string {
  return `${CHANGE_SUBJECT_ROOT}.${subjectToken(change.sourceId)}.${change.type}`;
}
