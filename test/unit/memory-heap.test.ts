import { heapShareGauge, WRITE_GROWTH_BOUND_BYTES } from '../../src/store/memory-heap';

const LIMIT_BYTES = 100 * WRITE_GROWTH_BOUND_BYTES;
const WATCH_FROM = 0.85;

/** A heap whose bytes in use the test sets, counting how often the gauge reads it. */
function fakeHeap(usedBytes: number) {
  const heap = { usedBytes, reads: 0 };
  const gauge = heapShareGauge(
    () => {
      heap.reads += 1;
      return heap.usedBytes;
    },
    LIMIT_BYTES,
    WATCH_FROM,
  );
  return { heap, gauge };
}

describe('the memory store heap gauge', () => {
  it('reads the heap on every write from watchFrom up, so a heap back under it is seen at once', () => {
    const { heap, gauge } = fakeHeap(0.9 * LIMIT_BYTES);
    expect([gauge(), gauge(), gauge()]).toEqual([0.9, 0.9, 0.9]);
    heap.usedBytes = 0.5 * LIMIT_BYTES;
    expect(gauge()).toBe(0.5);
    expect(heap.reads).toBe(4);
  });

  it('far under watchFrom, answers with one reading for as many writes as could not fill the room left', () => {
    const { heap, gauge } = fakeHeap(0.5 * LIMIT_BYTES);
    for (let write = 0; write < 36; write += 1) gauge();
    expect(heap.reads).toBe(1); // the reading and 35 writes of WRITE_GROWTH_BOUND_BYTES: 85 of the limit's 100
    gauge();
    expect(heap.reads).toBe(2);
  });

  it('whatever each write keeps, up to the bound, or frees: an answer at or under watchFrom means the heap is, and past it the answer is the heap', () => {
    let seed = 22;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let run = 0; run < 50; run += 1) {
      const { heap, gauge } = fakeHeap(random() * LIMIT_BYTES);
      for (let write = 0; write < 500; write += 1) {
        const share = gauge();
        const actual = heap.usedBytes / LIMIT_BYTES;
        if (share <= WATCH_FROM) expect(actual).toBeLessThanOrEqual(WATCH_FROM);
        else expect(share).toBe(actual);
        const freed = random() < 0.05 ? random() * heap.usedBytes : 0;
        heap.usedBytes += random() * WRITE_GROWTH_BOUND_BYTES - freed;
      }
    }
  });

  it('with every write keeping the most it can, the first answer past watchFrom comes at the same write as with a reading on every write', () => {
    for (const startShare of [0, 0.3, 0.5, 0.84, 0.849]) {
      const { heap, gauge } = fakeHeap(startShare * LIMIT_BYTES);
      let write = 0;
      while (gauge() <= WATCH_FROM) {
        heap.usedBytes += WRITE_GROWTH_BOUND_BYTES;
        write += 1;
      }
      let everyWrite = 0;
      while ((startShare * LIMIT_BYTES + everyWrite * WRITE_GROWTH_BOUND_BYTES) / LIMIT_BYTES <= WATCH_FROM) everyWrite += 1;
      expect(write).toBe(everyWrite);
    }
  });
});
