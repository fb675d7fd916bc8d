import { DeliveryEngine } from './src/delivery/engine';
import { MemorySinkPositions } from './src/delivery/memory-positions';
import { MemoryStore } from './src/store/memory-store';
import { createLogger } from './src/process/logger';
async function main() {
  const store = new MemoryStore();
  const mk = (id: string, hang: boolean) => ({ id, concurrency: 8, accepts: () => true, orderKey: (c: any) => 'k', send: async (c: any, signal: AbortSignal) => { console.log(id, 'send', c.seq); if (hang) await new Promise((r) => signal.addEventListener('abort', r)); return { result: 'delivered' as const, durationMs: 1 }; }, close: async () => {} });
  const engine = await DeliveryEngine.start({ sinks: [mk('hang', true), mk('ok', false)], positions: new MemorySinkPositions(() => store.changeHeads()), store, retryDelay: () => 100, instanceId: 'x', leaseMs: 3000, logger: createLogger('debug'), busyPollMs: 50, idlePollMs: 100 });
  for (let i = 0; i < 3; i++) await store.transaction(async (tx) => tx.recordChange({ sourceId: 'A', id: 'chg_' + i, type: 'token.created', createdAt: new Date(), body: {} }));
  await new Promise((r) => setTimeout(r, 1000));
  await engine.stop(1000);
}
main();
