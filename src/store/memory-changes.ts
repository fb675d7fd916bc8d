/**
 * The memory store's changes (contract section 13.1), per account: numbered as they are applied (units run one at
 * a time, so apply order is commit order), kept for their retention and at most `perAccount` of an account's
 * newest, so one account's traffic never evicts another's. Each account's are kept outside V8's heap
 * (memory-change-log.ts).
 */
import type { Logger } from '../process/logger';
import { MemoryChangeLog, type PackedChanges } from './memory-change-log';
import type { Change, ChangeQuery, ChangesRead, NewChange } from './store';

/** One account's changes, and how many of them were dropped for the bound before their retention ended. */
interface AccountChanges {
  log: MemoryChangeLog;
  dropped: number;
}

export class MemoryChanges {
  private readonly accounts = new Map<string, AccountChanges>();
  /** Changes dropped for the per-account bound before their retention ended, in all: counted and logged. */
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
      account = { log: new MemoryChangeLog(), dropped: 0 };
      this.accounts.set(change.sourceId, account);
    }
    const { log } = account;
    const createdAtMs = change.createdAt.getTime();
    log.append(change.id, change.type, createdAtMs, JSON.stringify(change.body));
    const cutoffMs = createdAtMs - this.retentionMs;
    while (log.count > 0 && (log.oldestCreatedAtMs() as number) < cutoffMs) log.dropOldest();
    if (log.count > this.perAccount) {
      log.dropOldest();
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
  }

  /** Every account with changes, and its last seq (dropped and forgotten changes keep their numbers). */
  heads(): Map<string, number> {
    return new Map([...this.accounts].map(([sourceId, { log }]) => [sourceId, log.lastSeq]));
  }

  /** The account's kept changes with seq above `after`, oldest first, at most `limit`, each its own objects. */
  after(sourceId: string, after: number, limit: number): Change[] {
    return this.read(sourceId, { after, limit }).changes;
  }

  /** The same changes as `after`, copied out for another thread (MemoryChangeLog.packed). */
  packedAfter(sourceId: string, after: number, limit: number): PackedChanges {
    const log = this.accounts.get(sourceId)?.log ?? new MemoryChangeLog();
    return log.packed(sourceId, log.indexAfter(after), limit);
  }

  /**
   * The account's kept changes the query matches, each its own objects, and its first and last seq. A types filter
   * looks at each kept change after `after` until the page is full: at most MEMORY_CHANGES_PER_ACCOUNT of them.
   */
  read(sourceId: string, { after, limit, types }: ChangeQuery): ChangesRead {
    const log = this.accounts.get(sourceId)?.log;
    if (!log) return { changes: [], lastSeq: 0, oldestSeq: undefined };
    const changes: Change[] = [];
    const wanted: ReadonlySet<string> | undefined = types && new Set(types);
    for (let index = log.indexAfter(after); index < log.count && changes.length < limit; index += 1) {
      if (!wanted || wanted.has(log.typeAt(index))) changes.push(log.changeAt(sourceId, index));
    }
    return { changes, lastSeq: log.lastSeq, oldestSeq: log.count > 0 ? log.firstSeq : undefined };
  }
}
