import { MemoryStore } from '../../src/store/memory-store';

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
