/**
 * The memory store's changes (contract section 13.1), per account: numbered as they are applied (units run one at
 * a time, so apply order is commit order), kept for their retention and at most `perAccount` of an account's
 * newest, so one account's traffic never evicts another's.
 */
import type { Logger } from '../process/logger';
import type { Change, ChangeQuery, ChangesRead, NewChange } from './store';

/**
 * A change as kept: its body as JSON text, one string instead of a tree of a dozen objects, which V8's collector
 * would mark again on every major collection while the change is kept (up to 100,000 per account). As objects,
 * a withdrawal cost 734,674 instructions with 42,000 changes kept, 351,609 as text (npm run bench:instructions,
 * docs/BENCHMARKS.md).
 */
interface KeptChange {
  seq: number;
  id: string;
  type: Change['type'];
  createdAtMs: number;
  body: string;
}

/** One account's changes: `kept[start..]` hold seq `lastSeq - (kept.length - start) + 1` to `lastSeq`. */
interface AccountChanges {
  lastSeq: number;
  /** Dropped for the bound before their retention ended. */
  dropped: number;
  kept: KeptChange[];
  /** The first kept change's index: dropped changes are skipped, and the array compacted once half of it is dropped. */
  start: number;
}

/** A kept change as the store gives it out. */
function unpacked(sourceId: string, { seq, id, type, createdAtMs, body }: KeptChange): Change {
  return { sourceId, id, type, createdAt: new Date(createdAtMs), body: JSON.parse(body) as Record<string, unknown>, seq };
}

export class MemoryChanges {
  private readonly accounts = new Map<string, AccountChanges>();
  /** Changes dropped for the per-account bound before their retention ended: counted and logged. */
  private droppedForRoom = 0;

  constructor(
    private readonly retentionMs: number,
    private readonly perAccount: number,
    private readonly logger: Logger | undefined,
  ) {}

  /** Numbers the change next in its account, keeps it, and forgets the account's changes past their retention or bound. */
  append(change: NewChange): void {
    let account = this.accounts.get(change.sourceId);
    if (!account) {
      account = { lastSeq: 0, dropped: 0, kept: [], start: 0 };
      this.accounts.set(change.sourceId, account);
    }
    account.lastSeq += 1;
    const createdAtMs = change.createdAt.getTime();
    account.kept.push({ seq: account.lastSeq, id: change.id, type: change.type, createdAtMs, body: JSON.stringify(change.body) });
    const cutoffMs = createdAtMs - this.retentionMs;
    while (account.start < account.kept.length && account.kept[account.start].createdAtMs < cutoffMs) account.start += 1;
    if (account.kept.length - account.start > this.perAccount) {
      account.start += 1;
      account.dropped += 1;
      this.droppedForRoom += 1;
      // Logged at the account's 1st, 10th, 100th ... drop: an account at its bound drops one a request.
      if (Number.isInteger(Math.log10(account.dropped))) {
        this.logger?.warn(
          { source_id: change.sourceId, dropped: account.dropped, dropped_total: this.droppedForRoom },
          "memory store dropped an account's oldest changes past MEMORY_CHANGES_PER_ACCOUNT",
        );
      }
    }
    if (account.start > account.kept.length / 2) {
      account.kept = account.kept.slice(account.start);
      account.start = 0;
    }
  }

  /** Every account with changes, and its last seq (dropped and forgotten changes keep their numbers). */
  heads(): Map<string, number> {
    return new Map([...this.accounts].map(([sourceId, account]) => [sourceId, account.lastSeq]));
  }

  /** The account's kept changes with seq above `after`, oldest first, at most `limit`, each its own objects. */
  after(sourceId: string, after: number, limit: number): Change[] {
    return this.read(sourceId, { after, limit }).changes;
  }

  /**
   * The account's kept changes the query matches, each its own objects, and its first and last seq. A types filter looks at
   * each kept change after `after` until the page is full: at most MEMORY_CHANGES_PER_ACCOUNT of them.
   */
  read(sourceId: string, { after, limit, types }: ChangeQuery): ChangesRead {
    const account = this.accounts.get(sourceId);
    if (!account) return { changes: [], lastSeq: 0, oldestSeq: undefined };
    const keptCount = account.kept.length - account.start;
    const firstSeq = account.lastSeq - keptCount + 1;
    const changes: Change[] = [];
    const wanted: ReadonlySet<string> | undefined = types && new Set(types);
    for (let i = account.start + Math.max(0, after + 1 - firstSeq); i < account.kept.length && changes.length < limit; i += 1) {
      const change = account.kept[i];
      if (!wanted || wanted.has(change.type)) changes.push(unpacked(sourceId, change));
    }
    return { changes, lastSeq: account.lastSeq, oldestSeq: keptCount > 0 ? firstSeq : undefined };
  }
}
