import { ConflictError, CursorExpiredError, TooManyRequestsError } from '../errors';
import type { ChangeType } from '../domain/changes';
import type { Change, ChangesRead, Store } from '../store/store';
import type { ChangeSignal } from './change-signal';

/** What one feed request asks (contract section 13.2), validated. */
export interface FeedRequest {
  sourceId: string;
  after: number;
  limit: number;
  types?: readonly ChangeType[];
  /** Seconds to wait for a matching change when none follows `after`; 0: answer at once. */
  waitSeconds: number;
}

/** One page of the feed: `nextAfter` is the seq of its last change, or the request's `after` when it is empty. */
export interface FeedPage {
  changes: Change[];
  nextAfter: number;
  hasMore: boolean;
}

/** Past the account's last seq: a cursor from before the store was reset (a memory store restarted, a database restored). */
function cursorAhead(after: number, lastSeq: number): ConflictError {
  return new ConflictError(
    `Cursor ahead: after=${after} is past the account's last change, seq ${lastSeq}; its changes were reset (a memory store restarted, or a database restored): read again from after=0`,
    'cursor_ahead',
  );
}

/** The page a read makes: it asked for one change more than the page holds, so has_more is exact. */
function pageOf(read: ChangesRead, { after, limit }: FeedRequest): FeedPage {
  const changes = read.changes.slice(0, limit);
  return { changes, nextAfter: changes.at(-1)?.seq ?? after, hasMore: read.changes.length > limit };
}

/**
 * The feed's reads (contract section 13.2): one account's changes after a cursor, one page at a time, with has_more
 * exact for the types asked; a cursor whose next changes are gone is a 410, never a silent jump. A request that
 * finds nothing may wait for its account's next matching change, woken by the ChangeSignal; at most
 * `maxWaitingPerAccount` wait at once per account on this instance (429 past it). A wait holds no database
 * connection, and ends with an empty page at its deadline, when its client goes (`stop`), or when the process drains.
 */
export class ChangeFeed {
  /** The deadlines of each account's waiting requests, for the slots and the 429's Retry-After. */
  private readonly waiting = new Map<string, number[]>();

  constructor(
    private readonly store: Store,
    private readonly signal: ChangeSignal,
    private readonly maxWaitingPerAccount: number,
  ) {}

  async page(request: FeedRequest, stop: AbortSignal): Promise<FeedPage> {
    if (request.waitSeconds === 0 || stop.aborted) return pageOf(await this.read(request), request);
    // Listening before the first read: a change committed between that read and the wait is not missed.
    const subscription = this.signal.listen(request.sourceId);
    try {
      let read = await this.read(request);
      if (read.changes.length > 0) return pageOf(read, request);
      const deadline = Date.now() + request.waitSeconds * 1000;
      const release = this.takeSlot(request.sourceId, deadline);
      try {
        // Bounded by the deadline: each round waits to be told of a change, then reads once.
        for (;;) {
          subscription.seenSeq = read.lastSeq;
          if (!(await subscription.next(deadline, stop))) return pageOf(read, request);
          read = await this.read(request);
          if (read.changes.length > 0) return pageOf(read, request);
        }
      } finally {
        release();
      }
    } finally {
      subscription.close();
    }
  }

  /** The page and one change more, refused when changes after the cursor are gone or the cursor is past every change. */
  private async read(request: FeedRequest): Promise<ChangesRead> {
    const { sourceId, after, limit, types } = request;
    const read = await this.store.readChanges(sourceId, { after, limit: limit + 1, types });
    const expired = read.oldestSeq === undefined ? after < read.lastSeq : after < read.oldestSeq - 1;
    if (expired) throw new CursorExpiredError(after, read.oldestSeq, read.lastSeq);
    if (after > read.lastSeq) throw cursorAhead(after, read.lastSeq);
    return read;
  }

  /** A waiting slot of the account until the returned release; past the bound a 429 whose Retry-After is when the first slot frees. */
  private takeSlot(sourceId: string, deadline: number): () => void {
    const deadlines = this.waiting.get(sourceId) ?? [];
    if (deadlines.length >= this.maxWaitingPerAccount) {
      const retryAfterSeconds = Math.max(1, Math.ceil((Math.min(...deadlines) - Date.now()) / 1000));
      throw new TooManyRequestsError(
        `Too Many Requests: ${deadlines.length} feed requests of this account already wait for changes on this instance, the most MAX_WAITING_FEEDS_PER_ACCOUNT allows`,
        'too_many_waiting',
        retryAfterSeconds,
      );
    }
    deadlines.push(deadline);
    this.waiting.set(sourceId, deadlines);
    return () => {
      deadlines.splice(deadlines.indexOf(deadline), 1);
      if (deadlines.length === 0) this.waiting.delete(sourceId);
    };
  }
}
