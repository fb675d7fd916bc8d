import type { LedgerEntry } from '../../src/domain/ledger';
import { applyOnce, ledgerReplay, type DeliveryKey, type RandomKey } from '../../src/services/apply-once';
import { MemoryStore } from '../../src/store/memory-store';

const NOW = new Date('2024-01-21T10:00:00.000Z');
const now = () => NOW;
const DELIVERY: DeliveryKey = { sourceId: 'ACME', webhookId: 'msg_1', bodyDigest: Buffer.alloc(32, 1) };
const KEY: RandomKey = { sourceId: 'ACME', key: 'k1', fingerprint: '["create_token"]' };

describe('applyOnce', () => {
  it('when a signed delivery applies, its answer is kept under its id in the unit, and the same body again is answered with those bytes without applying', async () => {
    const store = new MemoryStore();
    const apply = jest.fn(async () => ({ replayed: false, body: '{"first":true}' }));
    await expect(store.transaction((tx) => applyOnce(tx, now, DELIVERY, 0, apply))).resolves.toEqual({
      replayed: false,
      body: '{"first":true}',
    });
    await expect(store.transaction((tx) => applyOnce(tx, now, DELIVERY, 0, apply))).resolves.toEqual({
      replayed: true,
      body: '{"first":true}',
    });
    expect(apply).toHaveBeenCalledTimes(1);
  });

  it('when the same webhook-id comes with another body, it is a 422 and nothing applies', async () => {
    const store = new MemoryStore();
    await store.transaction((tx) => applyOnce(tx, now, DELIVERY, 0, async () => ({ replayed: false, body: '{}' })));
    const apply = jest.fn();
    await expect(
      store.transaction((tx) => applyOnce(tx, now, { ...DELIVERY, bodyDigest: Buffer.alloc(32, 2) }, 0, apply)),
    ).rejects.toMatchObject({
      message: 'webhook-id was already used for a different request',
      reason: 'webhook_id_reused',
    });
    expect(apply).not.toHaveBeenCalled();
  });

  it('when a request applies under a {randomkey}, the same request replays the first bytes and another is a 422', async () => {
    const store = new MemoryStore();
    const first = await store.transaction((tx) =>
      applyOnce(tx, now, undefined, 0, async (keys) => ({ replayed: (await keys.underRandomKey(KEY)) !== undefined, body: '{"made":1}' })),
    );
    expect(first).toEqual({ replayed: false, body: '{"made":1}' });
    await expect(
      store.transaction((tx) =>
        applyOnce(tx, now, undefined, 0, async (keys) => {
          const replay = await keys.underRandomKey(KEY);
          return { replayed: true, body: replay?.response ?? 'none' };
        }),
      ),
    ).resolves.toEqual({ replayed: true, body: '{"made":1}' });
    await expect(
      store.transaction((tx) =>
        applyOnce(tx, now, undefined, 0, async (keys) => {
          await keys.underRandomKey({ ...KEY, fingerprint: 'other' });
          return { replayed: false, body: '{}' };
        }),
      ),
    ).rejects.toMatchObject({ message: 'randomkey was already used for a different request', reason: 'key_reused' });
  });

  it('when a unit fails, nothing is kept under its keys, so a corrected retry applies', async () => {
    const store = new MemoryStore();
    await expect(
      store.transaction((tx) =>
        applyOnce(tx, now, DELIVERY, 0, async (keys) => {
          await keys.underRandomKey(KEY);
          throw new Error('refused');
        }),
      ),
    ).rejects.toThrow('refused');
    await store.transaction(async (tx) => {
      expect(await tx.findKeyedRequest(KEY.sourceId, KEY.key)).toBeUndefined();
      expect(await tx.findDelivery(DELIVERY.sourceId, DELIVERY.webhookId)).toBeUndefined();
    });
  });

  it('a check given before the reuse runs after a replay is found and before a reused key is refused', async () => {
    const store = new MemoryStore();
    await store.transaction((tx) =>
      applyOnce(tx, now, undefined, 0, async (keys) => ({ replayed: !!(await keys.underRandomKey(KEY)), body: '{}' })),
    );
    const exists = () => {
      throw new Error('already exists');
    };
    await expect(
      store.transaction(async (tx) =>
        applyOnce(tx, now, undefined, 0, async (keys) => ({ replayed: !!(await keys.underRandomKey(KEY, exists)), body: '' })),
      ),
    ).resolves.toMatchObject({ replayed: true });
    await expect(
      store.transaction(async (tx) =>
        applyOnce(tx, now, undefined, 0, async (keys) => ({
          replayed: !!(await keys.underRandomKey({ ...KEY, fingerprint: 'x' }, exists)),
          body: '',
        })),
      ),
    ).rejects.toThrow('already exists');
  });
});

describe('ledgerReplay', () => {
  const recorded = { transactionId: '00000000000000000001' } as LedgerEntry;

  it('a free ledger key applies, the same request is a replay, another a 422 that does not reveal it', () => {
    expect(ledgerReplay(undefined, () => true)).toBeUndefined();
    expect(ledgerReplay(recorded, () => true)).toEqual({ replayed: true });
    expect(() => ledgerReplay(recorded, () => false)).toThrow(
      expect.objectContaining({ message: 'transaction_id was already used for a different request', reason: 'key_reused' }),
    );
  });

  describe('the key limit (contract section 11: MAX_KEYS_PER_ACCOUNT)', () => {
    const apply = async () => ({ replayed: false, body: '{}' });
    const delivery = (webhookId: string): DeliveryKey => ({ ...DELIVERY, webhookId });

    it('signed deliveries count: past the limit a new one is a 403 naming the setting and applies nothing; a kept one still replays', async () => {
      const store = new MemoryStore();
      await store.transaction((tx) => applyOnce(tx, now, delivery('msg_a'), 2, apply));
      await store.transaction((tx) => applyOnce(tx, now, delivery('msg_b'), 2, apply));
      const refused = jest.fn(apply);
      await expect(store.transaction((tx) => applyOnce(tx, now, delivery('msg_c'), 2, refused))).rejects.toMatchObject({
        reason: 'key_limit',
      });
      await expect(store.transaction((tx) => applyOnce(tx, now, delivery('msg_a'), 2, apply))).resolves.toEqual({
        replayed: true,
        body: '{}',
      });
      expect(await store.transaction((tx) => tx.holdingsForUpdate('ACME', NOW))).toEqual({ tokens: 0, bookings: 0, keys: 2 });
    });

    it('keys stop counting once forgotten after their retention', async () => {
      const store = new MemoryStore({ retentionMs: 60_000 });
      await store.transaction((tx) => applyOnce(tx, now, delivery('msg_a'), 1, apply));
      await expect(store.transaction((tx) => applyOnce(tx, now, delivery('msg_b'), 1, apply))).rejects.toMatchObject({
        reason: 'key_limit',
      });
      const later = () => new Date(NOW.getTime() + 60_001);
      await expect(store.transaction((tx) => applyOnce(tx, later, delivery('msg_b'), 1, apply))).resolves.toEqual({
        replayed: false,
        body: '{}',
      });
      expect(await store.transaction((tx) => tx.holdingsForUpdate('ACME', later()))).toEqual({ tokens: 0, bookings: 0, keys: 1 });
    });
  });
});
