import { MemoryStore } from '../../src/store/memory-store';
import type { StoreTransaction } from '../../src/store/store';

/** A seeded memory store whose reads and writes throw what a test says, as a broken database would. */
export class FailingStore extends MemoryStore {
  failure: unknown = undefined;

  private failIfAsked(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  override async findAccount(sourceId: string) {
    this.failIfAsked();
    return super.findAccount(sourceId);
  }

  override async ping() {
    this.failIfAsked();
    return super.ping();
  }
}

/** A memory store that holds every unit of work at its start until the test releases it, so a test can act while a request is in flight. */
export class HoldingStore extends MemoryStore {
  /** Set false to let units run at once again. */
  holdUnits = true;
  private readonly held: Array<() => void> = [];
  private readonly onHold: Array<() => void> = [];

  override transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    if (!this.holdUnits) return super.transaction(work);
    return new Promise<void>((resolve) => {
      this.held.push(resolve);
      this.onHold.splice(0).forEach((notify) => notify());
    }).then(() => super.transaction(work));
  }

  /** Resolves once a unit of work is held. */
  holding(): Promise<void> {
    return this.held.length > 0 ? Promise.resolve() : new Promise((resolve) => this.onHold.push(resolve));
  }

  /** Lets the held units run. */
  release(): void {
    this.held.splice(0).forEach((run) => run());
  }
}
