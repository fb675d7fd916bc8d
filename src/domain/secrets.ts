import { hash, timingSafeEqual } from 'node:crypto';

/**
 * Keys are long random strings issued to partners, so one SHA-256 is enough
 * to keep them out of the store in plain text while staying cheap per request.
 */
export function hashKey(key: string): Buffer {
  // One-shot: createHash builds a stream object for every key (docs/BENCHMARKS.md, "Counting instructions").
  return hash('sha256', key, 'buffer');
}

/** Compares a presented key with a stored hash in constant time. */
export function keyMatches(presented: string, storedHash: Buffer): boolean {
  const presentedHash = hashKey(presented);
  return presentedHash.length === storedHash.length && timingSafeEqual(presentedHash, storedHash);
}
