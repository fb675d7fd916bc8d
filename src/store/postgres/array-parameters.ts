/**
 * A column's values as one array parameter in PostgreSQL's binary form (array_send: dimensions, whether any element
 * is NULL, the element type, the length and lower bound, then each element's length, -1 for NULL, and its bytes),
 * which node-postgres sends as it is for a Buffer (pg-seam.test.ts holds that). As an array literal each element
 * was converted to text, scanned for quotes and backslashes and joined into one more string: per batch, for every
 * column of every read and write, about 1.7 µs of the serving thread a withdrawal with its change (V8's profile of
 * the store alone, docs/BENCHMARKS.md, issue 44). A value no element of its type can hold (1.5 as a bigint, 2^31 as an
 * integer, an invalid date) throws here, before anything is sent; what PostgreSQL checks (JSON, a NUL in text, its
 * range of times) it still refuses, failing the batch, as it did the literals.
 */

/** PostgreSQL's type oids (pg_type) of the elements. */
const OID = { int4: 23, int8: 20, text: 25, json: 114, jsonb: 3802, bytea: 17, timestamptz: 1184 } as const;

/** 2000-01-01T00:00:00Z, from which PostgreSQL counts a timestamp's microseconds. */
const POSTGRES_EPOCH_MS = Date.UTC(2000, 0, 1);
const TWO_TO_32 = 2 ** 32;

type Element<Value> = {
  oid: number;
  /** The most bytes the value can take. */
  room(value: Value): number;
  /** Writes the value at `offset`; answers how many bytes it wrote. */
  write(bytes: Buffer, offset: number, value: Value): number;
};

function arrayParameter<Value>(element: Element<Value>, values: ReadonlyArray<Value | null | undefined>): Buffer {
  let room = 20;
  let hasNull = 0;
  for (const value of values) {
    if (value === null || value === undefined) hasNull = 1;
    else room += element.room(value);
    room += 4;
  }
  const bytes = Buffer.allocUnsafe(room);
  let offset = bytes.writeInt32BE(1, 0); // one dimension
  offset = bytes.writeInt32BE(hasNull, offset);
  offset = bytes.writeInt32BE(element.oid, offset);
  offset = bytes.writeInt32BE(values.length, offset);
  offset = bytes.writeInt32BE(1, offset); // the lower bound
  for (const value of values) {
    if (value === null || value === undefined) {
      offset = bytes.writeInt32BE(-1, offset);
      continue;
    }
    const length = element.write(bytes, offset + 4, value);
    bytes.writeInt32BE(length, offset);
    offset += 4 + length;
  }
  return bytes.subarray(0, offset);
}

/**
 * UTF-8 takes at most 3 bytes for each UTF-16 unit of a string: room enough for a short string without measuring
 * it; a long one (a change's body) is measured, so that the buffer is not three times what it holds.
 */
function text(oid: number): Element<string> {
  return {
    oid,
    room: (value) => (value.length <= 64 ? 3 * value.length : Buffer.byteLength(value)),
    write: (bytes, offset, value) => bytes.write(value, offset, 'utf8'),
  };
}
const TEXT = text(OID.text);
const JSON_TEXT = text(OID.json);

/** A whole number from -2^63 to 2^63 - 1 as JavaScript holds it: a safe integer, or a bigint's text. */
function int8Of(value: number | string): [high: number, low: number] {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`not a 64-bit integer: ${value}`);
    const high = Math.floor(value / TWO_TO_32);
    return [high, value - high * TWO_TO_32];
  }
  const whole = /^-?\d+$/.test(value) ? BigInt(value) : undefined;
  if (whole === undefined || BigInt.asIntN(64, whole) !== whole) throw new RangeError(`not a 64-bit integer: ${value}`);
  return [Number(whole >> 32n), Number(BigInt.asUintN(32, whole))];
}

const INT8: Element<number | string> = {
  oid: OID.int8,
  room: () => 8,
  write(bytes, offset, value) {
    const [high, low] = int8Of(value);
    bytes.writeInt32BE(high, offset);
    bytes.writeUInt32BE(low, offset + 4);
    return 8;
  },
};

const INT4: Element<number> = {
  oid: OID.int4,
  room: () => 4,
  write(bytes, offset, value) {
    if (!Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) throw new RangeError(`not a 32-bit integer: ${value}`);
    bytes.writeInt32BE(value, offset);
    return 4;
  },
};

const TIMESTAMPTZ: Element<Date> = {
  oid: OID.timestamptz,
  room: () => 8,
  write(bytes, offset, value) {
    const ms = value.getTime();
    if (!Number.isFinite(ms)) throw new RangeError('not a valid time: an Invalid Date');
    const micros = (ms - POSTGRES_EPOCH_MS) * 1000;
    // Past 2^53 µs of 2000 (before 1714, after 2285) the product is not exact: PostgreSQL holds those times too.
    if (Number.isSafeInteger(micros)) return INT8.write(bytes, offset, micros);
    bytes.writeBigInt64BE(BigInt(ms - POSTGRES_EPOCH_MS) * 1000n, offset);
    return 8;
  },
};

const BYTEA: Element<Uint8Array> = {
  oid: OID.bytea,
  room: (value) => value.length,
  write(bytes, offset, value) {
    bytes.set(value, offset);
    return value.length;
  },
};

/** jsonb's binary form is a version byte (1) and the JSON text. */
const JSONB: Element<string> = {
  oid: OID.jsonb,
  room: (value) => 1 + TEXT.room(value),
  write(bytes, offset, value) {
    bytes[offset] = 1;
    return 1 + bytes.write(value, offset + 1, 'utf8');
  },
};

export const textArrayParameter = (values: ReadonlyArray<string | null | undefined>): Buffer => arrayParameter(TEXT, values);
/** JSON texts as a json[], each sent as it is: PostgreSQL checks it, and keeps its keys in the order written. */
export const jsonArrayParameter = (values: ReadonlyArray<string | null | undefined>): Buffer => arrayParameter(JSON_TEXT, values);
export const jsonbArrayParameter = (values: ReadonlyArray<string | null | undefined>): Buffer => arrayParameter(JSONB, values);
export const bigintArrayParameter = (values: ReadonlyArray<number | string | null | undefined>): Buffer => arrayParameter(INT8, values);
export const integerArrayParameter = (values: ReadonlyArray<number | null | undefined>): Buffer => arrayParameter(INT4, values);
export const timestamptzArrayParameter = (values: ReadonlyArray<Date | null | undefined>): Buffer => arrayParameter(TIMESTAMPTZ, values);
export const byteaArrayParameter = (values: ReadonlyArray<Uint8Array | null | undefined>): Buffer => arrayParameter(BYTEA, values);
