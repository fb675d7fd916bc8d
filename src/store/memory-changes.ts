/**
 * The memory store's changes (contract section 13.1), per account: numbered as they are applied (units run one at
 * a time, so apply order is commit order), kept for their retention and at most `perAccount` of an account's
 * newest, so one account's traffic never evicts another's.
 */
import type { Logger } from '../process/logger';
import { copy } from './records';
import type { Change, NewChange } from './store';

/** One account's changes: `kept[start..]` hold seq `lastSeq - (kept.length - start) + 1` to `lastSeq`. */
interface AccountChanges {
  lastSeq: number;
  /** Dropped for the bound before their retention ended. */
  dropped: number;
  kept: Change[];
  /** The first kept change's index: dropped changes are skipped, and the array compacted once half of it is dropped. */
  start: number;
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
    account.kept.push({ ...change, seq: account.lastSeq });
    const cutoffMs = change.createdAt.getTime() - this.retentionMs;
    while (account.start < account.kept.length && account.kept[account.start].createdAt.getTime() < cutoffMs) account.start += 1;
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

  /** The account's kept changes with seq above `after`, oldest first, at most `limit`, as copies. */
  after(sourceId: string, after: number, limit: number): Change[] {
    const account = this.accounts.get(sourceId);
    if (!account) return [];
    const firstSeq = account.lastSeq - (account.kept.length - account.start) + 1;
    const from = account.start + Math.max(0, after + 1 - firstSeq);
    return account.kept.slice(from, from + limit).map((change) => copy(change));
  }
}
