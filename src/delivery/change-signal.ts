import type { ChangeListener, Store } from '../store/store';

/**
 * One reader's ear on an account's changes: told of every change of the account committed after it began to listen
 * (and of some that may not be: a store that reconnected tells everyone), so a read made after `listen` and a change
 * committed after that read are never missed, whichever comes first.
 */
export class ChangeSubscription {
  /** The account's last seq the reader has read: a store that polls tells it of changes past this. */
  seenSeq = Number.MAX_SAFE_INTEGER;
  /** Told since the reader last asked. */
  private told = false;
  private wake: (() => void) | undefined;

  constructor(
    readonly sourceId: string,
    private readonly leave: (subscription: ChangeSubscription) => void,
  ) {}

  /** Called by the signal: the account's changes moved on, or may have. */
  tell(): void {
    this.told = true;
    this.wake?.();
  }

  /**
   * Resolves true once told of a change since the last call (at once if told already), false at `deadline` (a
   * Date.now() time) or when `stop` aborts, whichever comes first.
   */
  async next(deadline: number, stop: AbortSignal): Promise<boolean> {
    if (!this.told && !stop.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        const done = () => {
          clearTimeout(timer);
          stop.removeEventListener('abort', done);
          this.wake = undefined;
          resolve();
        };
        this.wake = done;
        stop.addEventListener('abort', done, { once: true });
      });
    }
    const told = this.told && !stop.aborted;
    this.told = false;
    return told;
  }

  close(): void {
    this.leave(this);
  }
}

/**
 * The wake-up of the feed's waiting requests (contract section 13.2): it listens to the store's committed changes
 * (Store.watchChanges) while anyone listens here, and tells each subscription of its account's. It only wakes;
 * how many may wait is the feed's to bound (feed.ts).
 */
export class ChangeSignal implements ChangeListener {
  private readonly subscriptions = new Map<string, Set<ChangeSubscription>>();
  private unwatch: (() => void) | undefined;

  constructor(private readonly store: Store) {}

  /** Begins listening for the account's changes; close the subscription when done. */
  listen(sourceId: string): ChangeSubscription {
    const subscription = new ChangeSubscription(sourceId, (leaving) => this.leave(leaving));
    let ofAccount = this.subscriptions.get(sourceId);
    if (!ofAccount) this.subscriptions.set(sourceId, (ofAccount = new Set()));
    ofAccount.add(subscription);
    this.unwatch ??= this.store.watchChanges(this);
    return subscription;
  }

  /** Each account listened for, with the lowest seq its readers have read. */
  watched(): ReadonlyMap<string, number> {
    const seen = new Map<string, number>();
    for (const [sourceId, ofAccount] of this.subscriptions) {
      seen.set(sourceId, Math.min(...[...ofAccount].map((subscription) => subscription.seenSeq)));
    }
    return seen;
  }

  changed(sourceId: string): void {
    for (const subscription of this.subscriptions.get(sourceId) ?? []) subscription.tell();
  }

  private leave(subscription: ChangeSubscription): void {
    const ofAccount = this.subscriptions.get(subscription.sourceId);
    if (!ofAccount?.delete(subscription) || ofAccount.size > 0) return;
    this.subscriptions.delete(subscription.sourceId);
    if (this.subscriptions.size > 0) return;
    this.unwatch?.();
    this.unwatch = undefined;
  }
}
