import { hash, timingSafeEqual } from 'node:crypto';

/**
 * Keys are long random strings issued to partners, so one SHA-256 is enough
 * to keep them out of the store in plain text while staying cheap per request.
 */
export function hashKey(key: string): Buffer {
  // One-shot: createHash builds a stream object for every key (docs/BENCHMARKS.md, "Counting instructions"). Hex,
  // then decoded into Node's pool: hash()'s own 'buffer' output gives each digest a memory block of its own, and
  // took 1.3-2 µs a key against 0.8 this way (docs/BENCHMARKS.md, "Issues 43 and 44: the serving thread's cuts").
  return Buffer.from(hash('sha256', key, 'hex'), 'hex');
}

/** Compares a presented key with a stored hash in constant time. */
export function keyMatches(presented: string, storedHash: Buffer): boolean {
  const presentedHash = hashKey(presented);
  return presentedHash.length === storedHash.length && timingSafeEqual(presentedHash, storedHash);
}
