/**
 * One account's changes as the memory store keeps them: each change's id and body as UTF-8 bytes in chunks outside
 * V8's heap, and its time and type in typed arrays, as the ledger keeps its rows. Kept as objects, or even as one
 * JSON string each, every change survived into V8's old generation: a withdrawal cost 734,674 instructions with
 * 42,000 kept as objects, and 1,000,000 withdrawals left 942 MB resident (667 MB of heap in use) as strings, 403 MB
 * here (docs/BENCHMARKS.md). Here a change is no object at all until it is read.
 */
import { CHANGE_TYPES, type ChangeType } from '../domain/changes';
import { grown } from './memory-columns';
import type { Change } from './store';

/** The first chunk of an account's bytes; each next one twice the last, up to MAX_CHUNK_BYTES (or one change's size). */
const FIRST_CHUNK_BYTES = 4 * 1024;
const MAX_CHUNK_BYTES = 1024 * 1024;
const FIRST_CAPACITY = 16;
/** UTF-8 takes at most 3 bytes for each UTF-16 unit of a string (4 for a pair of them). */
const MAX_UTF8_BYTES_PER_UNIT = 3;

const TYPE_CODES = new Map<ChangeType, number>(CHANGE_TYPES.map((type, code) => [type, code]));

/** Bytes of changes; a change never spans two chunks. `base`: the log's byte position of the chunk's first byte. */
interface Chunk {
  base: number;
  bytes: Buffer;
  used: number;
}

/** Kept changes copied out of a log (MemoryChangeLog.packed), seq `firstSeq` on without a gap: each a row of the columns. */
export interface PackedChanges {
  sourceId: string;
  firstSeq: number;
  createdAtMs: Float64Array;
  typeCodes: Uint8Array;
  idBytes: Uint32Array;
  totalBytes: Uint32Array;
  /** Each change's id then its body, one change after the other. */
  bytes: Uint8Array;
}

/** The change whose id and body are `total` bytes of `bytes` from `from`, the first `idLength` of them its id. */
function decoded(
  sourceId: string,
  seq: number,
  createdAtMs: number,
  typeCode: number,
  bytes: Buffer,
  from: number,
  idLength: number,
  total: number,
): Change {
  const idEnd = from + idLength;
  return {
    sourceId,
    id: bytes.toString('utf8', from, idEnd),
    type: CHANGE_TYPES[typeCode],
    createdAt: new Date(createdAtMs),
    body: JSON.parse(bytes.toString('utf8', idEnd, from + total)) as Record<string, unknown>,
    seq,
  };
}

/** The changes MemoryChangeLog.packed copied out, as the store gives them out (on whichever thread received them). */
export function unpackedChanges(packed: PackedChanges): Change[] {
  const bytes = Buffer.from(packed.bytes.buffer, packed.bytes.byteOffset, packed.bytes.byteLength);
  const changes: Change[] = [];
  let offset = 0;
  for (let i = 0; i < packed.totalBytes.length; i += 1) {
    const total = packed.totalBytes[i];
    changes.push(
      decoded(packed.sourceId, packed.firstSeq + i, packed.createdAtMs[i], packed.typeCodes[i], bytes, offset, packed.idBytes[i], total),
    );
    offset += total;
  }
  return changes;
}

export class MemoryChangeLog {
  /** The newest change's seq (0: none yet); dropped and forgotten changes keep their numbers. */
  lastSeq = 0;
  /** Changes kept: rows `start` to `start + count - 1` of the columns, seq `lastSeq - count + 1` to `lastSeq`. */
  count = 0;
  private start = 0;
  private createdAtMs = new Float64Array(FIRST_CAPACITY);
  private typeCodes = new Uint8Array(FIRST_CAPACITY);
  /** Where each change's bytes begin in the log, then how many hold its id and how many in all. */
  private positions = new Float64Array(FIRST_CAPACITY);
  private idBytes = new Uint32Array(FIRST_CAPACITY);
  private totalBytes = new Uint32Array(FIRST_CAPACITY);
  /** Oldest first; a chunk is freed once every change in it is forgotten. */
  private readonly chunks: Chunk[] = [];
  /**
   * The last full-size chunk freed, taken again for the next new chunk: an account at its bound frees one as often
   * as it needs one, and a fresh megabyte each time cost its page faults and, as external memory, V8's collections.
   */
  private spare: Buffer | undefined = undefined;

  /** Keeps the change as the next, numbered `lastSeq + 1`. */
  append(id: string, type: ChangeType, createdAtMs: number, bodyJson: string): void {
    // Room for the most UTF-8 the text can take, then the bytes written counted as they are written: measuring
    // each string first (Buffer.byteLength) cost as much as writing it.
    const chunk = this.chunkWithRoom(MAX_UTF8_BYTES_PER_UNIT * (id.length + bodyJson.length));
    const idLength = chunk.bytes.write(id, chunk.used);
    const length = idLength + chunk.bytes.write(bodyJson, chunk.used + idLength);
    const row = this.rowForAppend();
    this.createdAtMs[row] = createdAtMs;
    this.typeCodes[row] = TYPE_CODES.get(type) as number;
    this.positions[row] = chunk.base + chunk.used;
    this.idBytes[row] = idLength;
    this.totalBytes[row] = length;
    chunk.used += length;
    this.count += 1;
    this.lastSeq += 1;
  }

  /** The seq the oldest kept change has (lastSeq + 1 while none is kept). */
  get firstSeq(): number {
    return this.lastSeq - this.count + 1;
  }

  /** How many places after the oldest kept change the first one after seq `after` is (0 when `after` is older). */
  indexAfter(after: number): number {
    return Math.max(0, after + 1 - this.firstSeq);
  }

  /** The bytes its chunks take, the spare included: what dropping changes gives back is gone from here at once (the memory, at V8's next collection). */
  chunkBytes(): number {
    return this.chunks.reduce((sum, chunk) => sum + chunk.bytes.length, this.spare?.length ?? 0);
  }

  /** The oldest kept change's time; undefined when none is kept. */
  oldestCreatedAtMs(): number | undefined {
    return this.count > 0 ? this.createdAtMs[this.start] : undefined;
  }

  /** Forgets the oldest kept change, and the chunks that held only forgotten ones. */
  dropOldest(): void {
    this.start += 1;
    this.count -= 1;
    const firstKept = this.count > 0 ? this.positions[this.start] : Number.POSITIVE_INFINITY;
    // The newest chunk stays, for the next change.
    while (this.chunks.length > 1 && this.chunks[0].base + this.chunks[0].used <= firstKept) {
      const { bytes } = this.chunks.shift() as Chunk;
      if (bytes.length === MAX_CHUNK_BYTES) this.spare = bytes;
    }
    if (this.count === 0) {
      this.start = 0;
      const [newest] = this.chunks;
      if (newest) newest.used = 0;
    }
  }

  /** The type of the kept change `index` places after the oldest (0: the oldest). */
  typeAt(index: number): ChangeType {
    return CHANGE_TYPES[this.typeCodes[this.start + index]];
  }

  /** The kept change `index` places after the oldest, as the store gives it out. */
  changeAt(sourceId: string, index: number): Change {
    const row = this.start + index;
    const position = this.positions[row];
    const chunk = this.chunkAt(position);
    const seq = this.firstSeq + index;
    return decoded(
      sourceId,
      seq,
      this.createdAtMs[row],
      this.typeCodes[row],
      chunk.bytes,
      position - chunk.base,
      this.idBytes[row],
      this.totalBytes[row],
    );
  }

  /**
   * Up to `limit` kept changes from `index` places after the oldest, copied out for another thread (the delivery
   * thread, which decodes them with unpackedChanges): their bytes in one buffer, their columns as typed arrays, so
   * that a message carries them by a copy of memory, with no object made or walked here.
   */
  packed(sourceId: string, index: number, limit: number): PackedChanges {
    const count = Math.max(0, Math.min(limit, this.count - index));
    const first = this.start + index;
    const totalBytes = this.totalBytes.slice(first, first + count);
    // Its own memory, not a slice of Node's shared pool: a message would carry the whole pool with it.
    const bytes = Buffer.allocUnsafeSlow(totalBytes.reduce((sum, length) => sum + length, 0));
    let offset = 0;
    for (let i = 0; i < count; i += 1) {
      const position = this.positions[first + i];
      const chunk = this.chunkAt(position);
      const from = position - chunk.base;
      offset += chunk.bytes.copy(bytes, offset, from, from + totalBytes[i]);
    }
    return {
      sourceId,
      firstSeq: this.firstSeq + index,
      createdAtMs: this.createdAtMs.slice(first, first + count),
      typeCodes: this.typeCodes.slice(first, first + count),
      idBytes: this.idBytes.slice(first, first + count),
      totalBytes,
      bytes,
    };
  }

  /** The newest chunk when the change fits in it, else a new one. */
  private chunkWithRoom(length: number): Chunk {
    const newest = this.chunks[this.chunks.length - 1];
    if (newest && newest.bytes.length - newest.used >= length) return newest;
    const size = Math.max(length, newest ? Math.min(newest.bytes.length * 2, MAX_CHUNK_BYTES) : FIRST_CHUNK_BYTES);
    const reused = this.spare !== undefined && size <= this.spare.length ? this.spare : undefined;
    if (reused) this.spare = undefined;
    // Its own memory, not a slice of Node's shared pool, so that it is freed when dropped.
    const bytes = reused ?? Buffer.allocUnsafeSlow(size);
    const chunk = { base: newest ? newest.base + newest.used : 0, bytes, used: 0 };
    this.chunks.push(chunk);
    return chunk;
  }

  /** The chunk holding the log's byte `position`: the last whose base is at or before it. */
  private chunkAt(position: number): Chunk {
    let low = 0;
    let high = this.chunks.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.chunks[middle].base <= position) low = middle;
      else high = middle - 1;
    }
    return this.chunks[low];
  }

  /** The row the next change goes in: the columns moved back once half of them are forgotten, else grown. */
  private rowForAppend(): number {
    const end = this.start + this.count;
    if (end < this.createdAtMs.length) return end;
    if (this.start >= this.createdAtMs.length / 2) {
      for (const column of [this.createdAtMs, this.typeCodes, this.positions, this.idBytes, this.totalBytes]) {
        column.copyWithin(0, this.start, end);
      }
      this.start = 0;
      return this.count;
    }
    const capacity = this.createdAtMs.length * 2;
    this.createdAtMs = grown(this.createdAtMs, capacity);
    this.typeCodes = grown(this.typeCodes, capacity);
    this.positions = grown(this.positions, capacity);
    this.idBytes = grown(this.idBytes, capacity);
    this.totalBytes = grown(this.totalBytes, capacity);
    return end;
  }
}
