import fc from 'fast-check';
import { CHANGE_TYPES } from '../../src/domain/changes';
import { MemoryChangeLog, unpackedChanges } from '../../src/store/memory-change-log';
import { MemoryChanges } from '../../src/store/memory-changes';
import type { Change, ChangeType, NewChange } from '../../src/store/store';

const DAY_MS = 24 * 60 * 60 * 1000;
const START_MS = 1_700_000_000_000;

/** A change whose body is `text` (any length, any script: chunks of 4 KB to 1 MB must hold it whole). */
const changeOf = (sourceId: string, n: number, text: string, atMs: number): NewChange => ({
  sourceId,
  id: `chg_${sourceId}_${n}`,
  type: CHANGE_TYPES[n % CHANGE_TYPES.length],
  createdAt: new Date(atMs),
  body: { request: { operation: 'withdraw', n }, note: text },
});

describe('MemoryChanges', () => {
  it("keeps each account's newest changes, within the bound and the retention, and gives them back as recorded", () => {
    const step = fc.record({
      account: fc.constantFrom('ACME', 'OTHER', 'ü.*>'),
      text: fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 3_000 })),
      // Mostly the same millisecond; now and then a day later, which forgets what is past the retention.
      laterMs: fc.oneof(fc.constant(0), fc.constant(DAY_MS)),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), fc.integer({ min: 1, max: 40 }), (steps, perAccount) => {
        const changes = new MemoryChanges(2 * DAY_MS, perAccount, undefined);
        const recorded = new Map<string, Change[]>();
        let nowMs = START_MS;
        steps.forEach(({ account, text, laterMs }, n) => {
          nowMs += laterMs;
          const change = changeOf(account, n, text, nowMs);
          changes.append(change);
          const kept = recorded.get(account) ?? [];
          kept.push({ ...change, seq: kept.length === 0 ? 1 : kept[kept.length - 1].seq + 1 });
          recorded.set(account, kept);
        });
        for (const [account, all] of recorded) {
          // An account's changes are forgotten as it records its next: past the retention of its newest.
          const cutoffMs = all[all.length - 1].createdAt.getTime() - 2 * DAY_MS;
          const expected = all.filter((change) => change.createdAt.getTime() >= cutoffMs).slice(-perAccount);
          const read = changes.read(account, { after: 0, limit: 1_000 });
          expect(read.changes).toEqual(expected);
          expect(read.lastSeq).toBe(all.length);
          // A page from the middle, and a types filter.
          const after = all.length - 3;
          expect(changes.after(account, after, 2)).toEqual(read.changes.filter((change) => change.seq > after).slice(0, 2));
          // Copied out for the delivery thread and read there: the same changes, after a message's structured clone.
          for (const [from, limit] of [
            [0, 1_000],
            [after, 2],
            [all.length, 5],
          ]) {
            expect(unpackedChanges(structuredClone(changes.packedAfter(account, from, limit)))).toEqual(
              changes.after(account, from, limit),
            );
          }
          const types: ChangeType[] = [CHANGE_TYPES[0]];
          expect(changes.read(account, { after: 0, limit: 5, types }).changes).toEqual(
            read.changes.filter((change) => types.includes(change.type)).slice(0, 5),
          );
        }
        expect(unpackedChanges(structuredClone(changes.packedAfter('NONE', 0, 10)))).toEqual([]);
        expect(changes.heads()).toEqual(new Map([...recorded].map(([account, all]) => [account, all.length])));
      }),
    );
  });

  it('frees what it forgot: 200,000 changes at a bound of 1,000 keep the chunks of about 1,000', () => {
    const log = new MemoryChangeLog();
    const body = JSON.stringify({ note: 'x'.repeat(400) });
    for (let n = 0; n < 200_000; n += 1) {
      log.append(`chg_${n}`, 'token.withdrawn', START_MS, body);
      if (log.count > 1_000) log.dropOldest();
    }
    expect(log.count).toBe(1_000);
    expect(log.changeAt('ACME', 0)).toEqual({
      sourceId: 'ACME',
      id: 'chg_199000',
      type: 'token.withdrawn',
      createdAt: new Date(START_MS),
      body: { note: 'x'.repeat(400) },
      seq: 199_001,
    });
    // 1,000 changes of about 425 bytes, in chunks of at most 1 MB: not the 85 MB of 200,000.
    expect(log.chunkBytes()).toBeLessThanOrEqual(3 * 1024 * 1024);
  });

  it('gives back text of two, three and four UTF-8 bytes a character whole, through chunks freed and taken again', () => {
    const log = new MemoryChangeLog();
    // 4,500 bytes a body: 20,000 of them fill and free a megabyte chunk about 90 times at a bound of 50.
    const bodyOf = (n: number) => JSON.stringify({ note: `é€😀${n}`.repeat(500) });
    const misread: number[] = [];
    for (let n = 0; n < 20_000; n += 1) {
      log.append(`chg_${n}`, 'token.withdrawn', START_MS, bodyOf(n));
      if (log.count > 50) log.dropOldest();
      // Each read back at once: a chunk's last change is the one that would lose its end.
      const newest = log.changeAt('ACME', log.count - 1);
      if (newest.id !== `chg_${n}` || JSON.stringify(newest.body) !== bodyOf(n)) misread.push(n);
    }
    expect(misread).toEqual([]);
    const kept = Array.from({ length: log.count }, (_, index) => log.changeAt('ACME', index));
    expect(kept.map((change) => [change.id, change.seq, change.body])).toEqual(
      Array.from({ length: 50 }, (_, i) => [`chg_${19_950 + i}`, 19_951 + i, JSON.parse(bodyOf(19_950 + i))]),
    );
    expect(log.chunkBytes()).toBeLessThanOrEqual(3 * 1024 * 1024);
  });
});
