/**
 * Avro `long` as a JS bigint, for avsc. Iceberg ids (snapshot ids, sequence numbers, sizes) are 64-bit
 * and routinely exceed 2^53, so avsc's default `long` (a JS number) would corrupt them.
 */
import avro from 'avsc';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** Longs in this range zig-zag into at most 53 bits: exact as doubles, no bigint arithmetic needed. */
const FAST_MIN = -(2n ** 52n);
const FAST_MAX = 2n ** 52n - 1n;

/** avsc's Tap (lib/utils.js), the cursor its `_read` / `_write` methods move: a buffer and a position. */
export interface Tap {
  buf: Buffer;
  pos: number;
}

export const isInt64 = (n: unknown): n is bigint => typeof n === 'bigint' && n >= INT64_MIN && n <= INT64_MAX;

/**
 * Reads a zig-zag varint long as a bigint. Like avsc's own reads it never throws: past the end of the
 * buffer it reads zeros and leaves `pos` beyond it, which avsc's `decode` reports (offset -1).
 */
export function readLong(tap: Tap): bigint {
  const buf = tap.buf;
  let pos = tap.pos;
  let b = buf[pos++];
  let n = b & 0x7f;
  // Up to 7 bytes (49 bits) in double arithmetic, which is exact there.
  for (let scale = 128; b & 0x80 && scale <= 2 ** 42; scale *= 128) {
    b = buf[pos++];
    n += (b & 0x7f) * scale;
  }
  if (!(b & 0x80)) {
    tap.pos = pos;
    return BigInt(n % 2 === 1 ? -(n + 1) / 2 : n / 2);
  }
  return readLongSlowly(tap);
}

/**
 * A long of 8+ bytes (a snapshot id): the low 28 bits and the rest as two exact doubles, one bigint
 * made of them. Bytes past the tenth cannot belong to a 64-bit value: skipped, as avsc skips them.
 */
function readLongSlowly(tap: Tap): bigint {
  const buf = tap.buf;
  let pos = tap.pos;
  let b = 0;
  let low = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    b = buf[pos++];
    low |= (b & 0x7f) << shift;
  }
  let high = 0;
  for (let scale = 1; b & 0x80; scale *= 128) {
    b = buf[pos++];
    if (scale <= 2 ** 35) high += (b & 0x7f) * scale;
  }
  tap.pos = pos;
  // zig-zag: the magnitude is the value without its lowest bit, which gives the sign
  const magnitude = (BigInt(high) << 27n) | BigInt(low >>> 1);
  return BigInt.asIntN(64, low & 1 ? -magnitude - 1n : magnitude);
}

export function writeLong(tap: Tap, n: unknown): void {
  if (!isInt64(n)) throw new Error(`invalid "long": ${String(n)}`);
  // Writes past the end of the buffer are dropped by the typed array; avsc sees `pos` beyond the end
  // and encodes again into a buffer of the right size.
  const buf = tap.buf;
  let pos = tap.pos;
  if (n >= FAST_MIN && n <= FAST_MAX) {
    const v = Number(n);
    let z = v >= 0 ? v * 2 : -v * 2 - 1;
    while (z >= 128) {
      buf[pos++] = (z % 128) | 0x80;
      z = Math.floor(z / 128);
    }
    buf[pos++] = z;
  } else {
    // Beyond 2^52 a long takes 8+ bytes: the low 28 bits (4 bytes) and the rest as exact doubles.
    const z = n >= 0n ? n << 1n : (-n << 1n) - 1n;
    let low = Number(z & 0xfffffffn);
    for (let i = 0; i < 4; i++, low >>>= 7) buf[pos++] = (low & 0x7f) | 0x80;
    let high = Number(z >> 28n);
    while (high >= 128) {
      buf[pos++] = (high % 128) | 0x80;
      high = Math.floor(high / 128);
    }
    buf[pos++] = high;
  }
  tap.pos = pos;
}

/**
 * Avro long ↔ bigint. avsc's LongType.__with hands `fromBuffer` the 8-byte little-endian two's
 * complement of the value, one Buffer per long read or written; a manifest entry holds a hundred
 * longs (its column statistics), so the hot `_read` / `_write` are replaced by a varint codec that
 * makes a bigint straight from the bytes (same bytes, same values: checked in avro-type.test.ts).
 */
const stockBigintLongType = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer): bigint => buf.readBigInt64LE(0),
  toBuffer: (n: bigint): Buffer => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  fromJSON: (json: unknown): bigint => BigInt(json as string | number),
  toJSON: (n: bigint): string => n.toString(),
  isValid: isInt64,
  compare: (a: bigint, b: bigint): number => (a === b ? 0 : a < b ? -1 : 1),
});
// `__with` freezes the type it makes: the faster methods go on an object derived from it.
export const bigintLongType: avro.types.LongType = Object.freeze(
  Object.create(stockBigintLongType, {
    _read: { value: readLong },
    _write: { value: writeLong },
  }) as avro.types.LongType,
);
