import { hash, timingSafeEqual } from 'node:crypto';

/**
 * Keys are long random strings issued to partners, so one SHA-256 is enough
 * to keep them out of the store in plain text while staying cheap per request.
 */
export function hashKey(key: string): Buffer {
  // One-shot: createHash builds a stream object for every key (docs/BENCHMARKS.md, "Counting instructions"). Its own
  // memory: a kept hash never holds, nor carries to another thread, the bytes that share Node's buffer pool.
  return hash('sha256', key, 'buffer');
}

/** Compares a presented key with a stored hash in constant time. */
export function keyMatches(presented: string, storedHash: Buffer): boolean {
  // Hex decoded into Node's pool, for this comparison only: hash()'s 'buffer' output gives each digest a memory block
  // of its own, 1.3-2 µs a key against 0.8 this way (docs/BENCHMARKS.md, "Issues 43 and 44: the serving thread's cuts").
  const presentedHash = Buffer.from(hash('sha256', presented, 'hex'), 'hex');
  return presentedHash.length === storedHash.length && timingSafeEqual(presentedHash, storedHash);
}
