import { grown } from './memory-columns';

const FIRST_CAPACITY = 1024;
const FIRST_ARENA_BYTES = 16 * 1024;
/** The largest code unit an id may have to be kept as one byte a character (Latin-1). */
const LATIN1_MAX = 0xff;

/** FNV-1a over the id's code units, with a final mix so that ids differing in their last digits spread. */
function hashOfText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return finalMix(hash);
}

/** The same hash over an id kept in the arena: its bytes are its code units. */
function hashOfBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i += 1) hash = Math.imul(hash ^ bytes[i], 0x01000193);
  return finalMix(hash);
}

function finalMix(hash: number): number {
  const mixed = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  return (mixed ^ (mixed >>> 13)) >>> 0;
}

function isLatin1(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) if (text.charCodeAt(i) > LATIN1_MAX) return false;
  return true;
}

/**
 * The memory store's token ids, by row, and the row of each id: the ids' characters packed one byte each in
 * one arena, where each row's id starts, and an open-addressing table of rows hashed by id. A million ids of
 * 13 digits take about 29 MB here (13 MB of bytes, 4 MB of starts, 8 MB of slots at most half full) where a
 * Map of a million id strings and the array of them took about 80 MB of heap, for every full collection to
 * trace (docs/BENCHMARKS.md, issue 29). Rows are only appended, in order, and an id never changes. Token ids
 * are digits (src/schemas/fields.ts); an id with a character past Latin-1, which no valid request carries,
 * is kept in a Map beside the arena, so that the table holds any string as a Map would.
 */
export class TokenIdIndex {
  private rows = 0;
  private bytes = Buffer.alloc(FIRST_ARENA_BYTES);
  private bytesUsed = 0;
  /** Row r's id is bytes[starts[r], starts[r + 1]). */
  private starts = new Uint32Array(FIRST_CAPACITY + 1);
  /** Row + 1 per slot, 0 when empty; at most half full. */
  private slots = new Int32Array(FIRST_CAPACITY * 2);
  /** The ids with a character past Latin-1: their rows, and their rows' ids (their arena span is empty). */
  private readonly wideRows = new Map<string, number>();
  private readonly wideIds = new Map<number, string>();

  get size(): number {
    return this.rows;
  }

  /** The id's row, or undefined when the index does not hold it. */
  rowOf(id: string): number | undefined {
    if (this.wideRows.size > 0 && !isLatin1(id)) return this.wideRows.get(id);
    const { bytes, starts, slots } = this;
    const mask = slots.length - 1;
    const length = id.length;
    for (let slot = hashOfText(id) & mask; ; slot = (slot + 1) & mask) {
      const row = slots[slot] - 1;
      if (row < 0) return undefined;
      const start = starts[row];
      // Rows of wide ids are never in the slots.
      if (starts[row + 1] - start !== length) continue;
      // From the end: ids of one length mostly differ in their last digits.
      let i = length - 1;
      while (i >= 0 && bytes[start + i] === id.charCodeAt(i)) i -= 1;
      if (i < 0) return row;
    }
  }

  idOf(row: number): string {
    const start = this.starts[row];
    const end = this.starts[row + 1];
    return start === end && this.wideIds.has(row) ? (this.wideIds.get(row) as string) : this.bytes.toString('latin1', start, end);
  }

  /** Appends a row for an id the index does not hold (the caller has looked), and answers it. */
  add(id: string): number {
    const row = this.rows;
    if (row + 1 === this.starts.length) this.starts = grown(this.starts, this.starts.length * 2 - 1);
    if (isLatin1(id)) {
      if (this.bytesUsed + id.length > this.bytes.length) this.growArena(this.bytesUsed + id.length);
      this.bytesUsed += this.bytes.write(id, this.bytesUsed, 'latin1');
    } else {
      this.wideRows.set(id, row);
      this.wideIds.set(row, id);
    }
    this.starts[row + 1] = this.bytesUsed;
    this.rows += 1;
    if (this.rows * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else if (!this.wideIds.has(row)) this.index(row);
    return row;
  }

  private growArena(atLeast: number): void {
    const next = Buffer.alloc(Math.max(atLeast, this.bytes.length * 2));
    this.bytes.copy(next, 0, 0, this.bytesUsed);
    this.bytes = next;
  }

  private index(row: number): void {
    const mask = this.slots.length - 1;
    let slot = hashOfBytes(this.bytes, this.starts[row], this.starts[row + 1]) & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = row + 1;
  }

  private rehash(slotCount: number): void {
    this.slots = new Int32Array(slotCount);
    for (let row = 0; row < this.rows; row += 1) if (!this.wideIds.has(row)) this.index(row);
  }
}
