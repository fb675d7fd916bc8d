import { Client } from 'pg';
import type { PgStore } from '../../src/store/postgres/pg-store';
import { fixtureSeed } from '../helpers/fixtures';
import { openEmptyPgStore, TEST_DATABASE_URL, warnIfNoDatabase, workerSchema } from '../helpers/postgres';
import { readDelivery } from '../helpers/state';
import { waitFor } from '../helpers/wait';

warnIfNoDatabase();
const HOUR_MS = 60 * 60 * 1000;
const T0 = new Date('2026-01-01T00:00:00.000Z');
const at = (hours: number) => new Date(T0.getTime() + hours * HOUR_MS);

(TEST_DATABASE_URL ? describe : describe.skip)('PostgreSQL retention: a periodic sweep, one instance at a time', () => {
  let store: PgStore;
  afterEach(async () => {
    await store.close();
  });

  async function recordBoth(key: string, stamp: Date) {
    await store.transaction((tx) => tx.recordKeyedRequest({ sourceId: 'ACME', key, fingerprint: key, response: '{}', createdAt: stamp }));
    await store.transaction((tx) =>
      tx.recordDelivery({ sourceId: 'ACME', webhookId: key, bodyDigest: Buffer.alloc(32), response: '{}', receivedAt: stamp }),
    );
  }
  const kept = async (key: string) => ({
    bookingKey: (await store.transaction((tx) => tx.findKeyedRequest('ACME', key))) !== undefined,
    delivery: (await readDelivery(store, key, 'ACME')) !== undefined,
  });

  it('recording does not forget; the sweep forgets booking keys and deliveries older than 24 hours and keeps the rest', async () => {
    store = await openEmptyPgStore({ sweepIntervalMs: 0 });
    await store.loadSeed(fixtureSeed());
    await recordBoth('key-old-00001', at(0));
    await recordBoth('key-day-00002', at(23));
    await recordBoth('key-new-00003', at(24.5));
    expect(await kept('key-old-00001')).toEqual({ bookingKey: true, delivery: true });
    const keysHeld = async () => (await store.transaction((tx) => tx.holdingsForUpdate('ACME'))).keys;
    expect(await keysHeld()).toBe(6);
    expect(await store.sweep(new Date(at(24).getTime() + 1))).toBe(true);
    expect(await kept('key-old-00001')).toEqual({ bookingKey: false, delivery: false });
    // The key limit's count loses what the sweep forgot, in the sweep's transaction (MAX_KEYS_PER_ACCOUNT).
    expect(await keysHeld()).toBe(4);
    expect(await kept('key-day-00002')).toEqual({ bookingKey: true, delivery: true });
    expect(await kept('key-new-00003')).toEqual({ bookingKey: true, delivery: true });
  });

  it('while another instance sweeps (holds the lock), this one skips the round and deletes nothing', async () => {
    store = await openEmptyPgStore({ sweepIntervalMs: 0 });
    await store.loadSeed(fixtureSeed());
    await recordBoth('key-old-00001', at(0));
    const rival = new Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${workerSchema()}` });
    await rival.connect();
    try {
      await rival.query('BEGIN');
      await rival.query('SELECT pg_advisory_xact_lock(72041183, hashtext(current_schema()))');
      expect(await store.sweep(at(48))).toBe(false);
      expect(await kept('key-old-00001')).toEqual({ bookingKey: true, delivery: true });
      await rival.query('COMMIT');
    } finally {
      await rival.end();
    }
    expect(await store.sweep(at(48))).toBe(true);
    expect(await kept('key-old-00001')).toEqual({ bookingKey: false, delivery: false });
  });

  it('runs by itself every sweepIntervalMs', async () => {
    store = await openEmptyPgStore({ sweepIntervalMs: 100, retentionMs: 1_000 });
    await store.loadSeed(fixtureSeed());
    await recordBoth('key-old-00001', new Date(Date.now() - 5_000));
    await recordBoth('key-new-00002', new Date(Date.now() + 60_000));
    await waitFor(async () => !(await kept('key-old-00001')).delivery);
    expect(await kept('key-old-00001')).toEqual({ bookingKey: false, delivery: false });
    expect(await kept('key-new-00002')).toEqual({ bookingKey: true, delivery: true });
  });
});
