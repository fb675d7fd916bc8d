/**
 * The in-batch locks (batch.ts): a unit holds every row it read and every key it looked up until it ends, so units
 * of one batch on the same row apply one after the other, each seeing the ones before, as transactions would.
 */
import type { ReadKind } from '../unit/kinds';

/** A lock's name: a kind of read and a row's key within it, as the batch files the row. */
export type LockKey = `${ReadKind}:${string}`;

export function lockKey(kind: ReadKind, key: string): LockKey {
  return `${kind}:${key}`;
}

interface Lock<Holder> {
  holder: Holder;
  /** Who waits for it, in the order they asked; each told true when it holds the lock, false when it gave up. */
  waiting: Array<{ holder: Holder; tell: (granted: boolean) => void }>;
}

export class BatchLocks<Holder> {
  private readonly locks = new Map<LockKey, Lock<Holder>>();
  private readonly held = new Map<Holder, LockKey[]>();

  /** The lock for `holder`: undefined when it holds it at once (free, or already its own), else a promise of whether it got it. */
  acquire(holder: Holder, key: LockKey): Promise<boolean> | undefined {
    const lock = this.locks.get(key);
    if (!lock) {
      this.locks.set(key, { holder, waiting: [] });
      this.keep(holder, key);
      return undefined;
    }
    if (lock.holder === holder) return undefined;
    return new Promise<boolean>((tell) => lock.waiting.push({ holder, tell }));
  }

  /** Every lock `holder` holds passes to the next in line. */
  release(holder: Holder): void {
    for (const key of this.held.get(holder) ?? []) {
      const lock = this.locks.get(key) as Lock<Holder>;
      const next = lock.waiting.shift();
      if (next) {
        lock.holder = next.holder;
        this.keep(next.holder, key);
        next.tell(true);
      } else {
        this.locks.delete(key);
      }
    }
    this.held.delete(holder);
  }

  /**
   * Everyone waiting stops waiting, told false; returns who they are. When no unit of a batch can go on, those
   * waiting wait on each other (each holds what another wants): they give up, and each runs alone later.
   */
  abandonWaiting(): Set<Holder> {
    const abandoned = new Set<Holder>();
    for (const lock of this.locks.values()) {
      for (const { holder, tell } of lock.waiting.splice(0)) {
        abandoned.add(holder);
        tell(false);
      }
    }
    return abandoned;
  }

  private keep(holder: Holder, key: LockKey): void {
    const keys = this.held.get(holder);
    if (keys) keys.push(key);
    else this.held.set(holder, [key]);
  }
}
