/**
 * Sinks' positions in memory, beside the memory store: one process, so the lease is always its own; nothing survives
 * a restart, as nothing of the memory store does (contract section 8).
 */
import { ATTEMPTS_KEPT, type AttemptRecord, type SenderWrite, type SinkPositions, type SinkSnapshot, type SinkState } from './positions';

interface MemorySink {
  state: SinkState;
  positions: Map<string, number>;
  /** By account, then seq. */
  window: Map<string, Map<number, SinkSnapshot['window'][number]>>;
  /** Oldest first, at most `attemptsKept`. */
  attempts: AttemptRecord[];
}

export class MemorySinkPositions implements SinkPositions {
  private readonly sinks = new Map<string, MemorySink>();
  private lastAttemptId = 0;

  /** `heads`: every account with changes and its last seq (MemoryStore.changeHeads, or asked of it by message). */
  constructor(
    private readonly heads: () => Map<string, number> | Promise<Map<string, number>>,
    private readonly attemptsKept = ATTEMPTS_KEPT,
  ) {}

  async register(sinkIds: readonly string[]): Promise<void> {
    for (const sinkId of sinkIds) {
      if (this.sinks.has(sinkId)) continue;
      const state: SinkState = { sinkId, enabled: true, reason: null, disabledAt: null, generation: 1 };
      this.sinks.set(sinkId, { state, positions: await this.heads(), window: new Map(), attempts: [] });
    }
  }

  async accountHeads(): Promise<Map<string, number>> {
    return this.heads();
  }

  async lease(sinkId: string): Promise<SinkState | undefined> {
    return this.state(sinkId);
  }

  async release(): Promise<void> {}

  async state(sinkId: string): Promise<SinkState | undefined> {
    const sink = this.sinks.get(sinkId);
    return sink && { ...sink.state };
  }

  async snapshot(sinkId: string): Promise<SinkSnapshot | undefined> {
    const sink = this.sinks.get(sinkId);
    if (!sink) return undefined;
    const window = [...sink.window.values()].flatMap((rows) => [...rows.values()].map((row) => ({ ...row })));
    return { state: { ...sink.state }, positions: new Map(sink.positions), window };
  }

  async record(sinkId: string, _owner: string, generation: number, write: SenderWrite): Promise<boolean> {
    const sink = this.sinks.get(sinkId);
    if (!sink || sink.state.generation !== generation) return false;
    if (write.attempt) {
      sink.attempts.push({ ...write.attempt, id: ++this.lastAttemptId, sinkId });
      if (sink.attempts.length > this.attemptsKept) sink.attempts.shift();
    }
    let rows = sink.window.get(write.sourceId);
    if (!rows) sink.window.set(write.sourceId, (rows = new Map()));
    for (const row of write.window) rows.set(row.seq, { ...row });
    for (const seq of rows.keys()) if (seq <= write.position) rows.delete(seq);
    sink.positions.set(write.sourceId, write.position);
    if (write.disable !== undefined) {
      sink.state = { ...sink.state, enabled: false, reason: write.disable, disabledAt: new Date(), generation: generation + 1 };
    }
    return true;
  }

  async enable(sinkId: string): Promise<boolean> {
    const sink = this.sinks.get(sinkId);
    if (!sink) return false;
    sink.state = { ...sink.state, enabled: true, reason: null, disabledAt: null, generation: sink.state.generation + 1 };
    for (const rows of sink.window.values()) for (const [seq, row] of rows) if (!row.delivered) rows.delete(seq);
    return true;
  }

  async replay(sinkId: string, sourceId: string, after: number): Promise<boolean> {
    const sink = this.sinks.get(sinkId);
    if (!sink) return false;
    sink.state = { ...sink.state, generation: sink.state.generation + 1 };
    sink.positions.set(sourceId, after);
    sink.window.delete(sourceId);
    return true;
  }

  async attempts(sinkId: string, limit: number, before?: number): Promise<AttemptRecord[]> {
    const attempts = this.sinks.get(sinkId)?.attempts ?? [];
    const newestFirst = attempts.filter((attempt) => before === undefined || attempt.id < before).reverse();
    return newestFirst.slice(0, limit).map((attempt) => ({ ...attempt }));
  }

  async close(): Promise<void> {}
}
