import { getHeapStatistics } from 'node:v8';

/**
 * The most one write of the memory store keeps on the heap: a unit's records hold fields of at most 255
 * characters each and an answer made of them, tens of KB at the most; 1 MB leaves room to spare.
 */
export const WRITE_GROWTH_BOUND_BYTES = 1024 * 1024;

/**
 * The heap's limit: --max-old-space-size when the process was given one (command line or NODE_OPTIONS), since
 * V8's heap_size_limit adds the young generation's reserve (48 MB on Node 20) and a small heap dies of its
 * old space long before reaching it; else heap_size_limit, where that reserve is a small part.
 */
export function heapLimitBytes(): number {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const oldSpaceMb = flags
    .map((flag) => /^--max[-_]old[-_]space[-_]size=(\d+)$/.exec(flag)?.[1])
    .filter((mb) => mb !== undefined)
    .pop();
  return oldSpaceMb === undefined ? getHeapStatistics().heap_size_limit : Number(oldSpaceMb) * 1024 * 1024;
}

export function usedHeapBytes(): number {
  return getHeapStatistics().used_heap_size;
}

/**
 * The share of the heap's limit in use, asked before every write, read from V8 only when the writes since the
 * last reading could have taken the heap past `watchFrom` (v8.getHeapStatistics on every write cost 1-2.5% of
 * a request's CPU, docs/BENCHMARKS.md, issue 22). A reading at `r` bytes answers for the next
 * (watchFrom × limit − r) / WRITE_GROWTH_BOUND_BYTES writes, which together cannot keep more than that; from
 * `watchFrom` up, every write reads again, as before. So the answer is at or under `watchFrom` only when the heap
 * in use is, and the heap reaches no higher than with a reading on every write: the limit plus what one write
 * adds at once.
 */
export function heapShareGauge(readUsedBytes: () => number, limitBytes: number, watchFrom: number): () => number {
  let lastShare = 0;
  let writesAnswered = 0;
  return () => {
    if (writesAnswered > 0) {
      writesAnswered -= 1;
      return lastShare;
    }
    const used = readUsedBytes();
    lastShare = used / limitBytes;
    writesAnswered = Math.floor((watchFrom * limitBytes - used) / WRITE_GROWTH_BOUND_BYTES);
    return lastShare;
  };
}
