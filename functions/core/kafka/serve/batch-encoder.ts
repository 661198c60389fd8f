/**
 * One magic-v2 record batch (uncompressed) written in one pass into one buffer: sizes first, then
 * every field at its place, then the CRC-32C over attributes..end (crc32c.ts).
 *
 * Written by hand: kafkajs's record and batch encoders take headers keyed by name, so a header list
 * that interleaves names (a, b, a) came out grouped (a, a, b), and they allocate a buffer per field and
 * per record (most of a first cold read's CPU went to them and the garbage they left).
 *
 * Layout (Kafka's DefaultRecordBatch): baseOffset int64, batchLength int32, partitionLeaderEpoch int32,
 * magic int8 = 2, crc uint32, attributes int16, lastOffsetDelta int32, baseTimestamp int64,
 * maxTimestamp int64, producerId int64, producerEpoch int16, baseSequence int32, records count int32,
 * then each record: length varint, attributes int8, timestampDelta varlong, offsetDelta varint, key
 * (varint length, -1 for null), value (the same), header count varint, and per header its key (varint
 * length + UTF-8) and value (varint length, -1 for null). Varints are zigzag, as Kafka's.
 */
import { crc32c } from './crc32c.js';

/** A record as the batch holds it: offset and timestamp absolute (the batch writes them as deltas). */
export interface BatchRecord {
  offset: bigint;
  /** CreateTime in epoch ms (-1: none). */
  timestampMs: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: readonly { key: string; value: Buffer | null }[];
}

export interface BatchFields {
  baseOffset: bigint;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  lastOffsetDelta: number;
  partitionLeaderEpoch: number;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
}

/** Bytes from the start of the batch to its first record. */
const HEADER_BYTES = 61;
/** Where the CRC'd part starts (the attributes). */
const CRC_FROM = 21;

const zigzag32 = (n: number) => ((n << 1) ^ (n >> 31)) >>> 0;
const zigzag64 = (n: bigint) => BigInt.asUintN(64, (n << 1n) ^ (n >> 63n));

function uvarintSize(u: number): number {
  let size = 1;
  while (u >= 0x80) {
    u >>>= 7;
    size++;
  }
  return size;
}

function uvarlongSize(u: bigint): number {
  let size = 1;
  while (u >= 0x80n) {
    u >>= 7n;
    size++;
  }
  return size;
}

const varintSize = (n: number) => uvarintSize(zigzag32(n));

function writeUvarint(buffer: Buffer, at: number, u: number): number {
  while (u >= 0x80) {
    buffer[at++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buffer[at++] = u;
  return at;
}

function writeUvarlong(buffer: Buffer, at: number, u: bigint): number {
  while (u >= 0x80n) {
    buffer[at++] = Number(u & 0x7fn) | 0x80;
    u >>= 7n;
  }
  buffer[at++] = Number(u);
  return at;
}

const writeVarint = (buffer: Buffer, at: number, n: number) => writeUvarint(buffer, at, zigzag32(n));

function bytesSize(bytes: Buffer | null): number {
  return bytes === null ? 1 : varintSize(bytes.length) + bytes.length;
}

function writeBytes(buffer: Buffer, at: number, bytes: Buffer | null): number {
  if (bytes === null) return writeVarint(buffer, at, -1);
  const after = writeVarint(buffer, at, bytes.length);
  // Buffer#copy: a third of TypedArray#set's cost per short value before V8 has optimized either.
  bytes.copy(buffer, after);
  return after + bytes.length;
}

/** Whether a 64-bit integer is exact as a double, so deltas can be taken without BigInts. */
const exact = (n: bigint) => n >= -MAX_EXACT && n <= MAX_EXACT;
const MAX_EXACT = 2n ** 52n;

/** The zigzag varlong of `d`, an integer with |d| ≤ 2^52 held exactly as a double. */
function numberVarlongSize(d: number): number {
  let u = d >= 0 ? d * 2 : -d * 2 - 1;
  let size = 1;
  while (u >= 0x80) {
    u = Math.floor(u / 0x80);
    size++;
  }
  return size;
}

function writeNumberVarlong(buffer: Buffer, at: number, d: number): number {
  let u = d >= 0 ? d * 2 : -d * 2 - 1;
  while (u >= 0x80) {
    buffer[at++] = (u % 0x80) | 0x80;
    u = Math.floor(u / 0x80);
  }
  buffer[at++] = u;
  return at;
}

/**
 * The batch's bytes, records as they are (the caller orders them): each record's offset and timestamp
 * written as deltas from the fields' base offset and base timestamp. Two passes over the records
 * (sizes, then bytes) and no object per record: deltas are taken on doubles where every offset and
 * timestamp is exact as one (always, for Kafka's ms timestamps and realistic offsets), else on BigInts.
 * @throws RangeError when an offset delta or a field does not fit its Kafka type
 */
export function encodeBatch(fields: BatchFields, records: readonly BatchRecord[]): Buffer {
  const n = records.length;
  let small = exact(fields.baseOffset) && exact(fields.baseTimestamp);
  for (let i = 0; small && i < n; i++) small = exact(records[i].offset) && exact(records[i].timestampMs);
  const baseOffset = Number(fields.baseOffset);
  const baseTimestamp = Number(fields.baseTimestamp);
  const offsetDelta = small
    ? (r: BatchRecord) => Number(r.offset) - baseOffset
    : (r: BatchRecord) => Number(r.offset - fields.baseOffset);
  const sizes = new Int32Array(n);
  let total = HEADER_BYTES;
  for (let i = 0; i < n; i++) {
    const r = records[i];
    let size =
      1 +
      (small
        ? numberVarlongSize(Number(r.timestampMs) - baseTimestamp)
        : uvarlongSize(zigzag64(r.timestampMs - fields.baseTimestamp))) +
      varintSize(offsetDelta(r)) +
      bytesSize(r.key) +
      bytesSize(r.value) +
      varintSize(r.headers.length);
    for (const h of r.headers) {
      const length = Buffer.byteLength(h.key, 'utf8');
      size += varintSize(length) + length + bytesSize(h.value);
    }
    sizes[i] = size;
    total += varintSize(size) + size;
  }
  const out = Buffer.allocUnsafe(total);
  out.writeBigInt64BE(fields.baseOffset, 0);
  out.writeInt32BE(total - 12, 8);
  out.writeInt32BE(fields.partitionLeaderEpoch, 12);
  out.writeInt8(2, 16);
  out.writeInt16BE(0, 21);
  out.writeInt32BE(fields.lastOffsetDelta, 23);
  out.writeBigInt64BE(fields.baseTimestamp, 27);
  out.writeBigInt64BE(fields.maxTimestamp, 35);
  out.writeBigInt64BE(fields.producerId, 43);
  out.writeInt16BE(fields.producerEpoch, 51);
  out.writeInt32BE(fields.baseSequence, 53);
  out.writeInt32BE(n, 57);
  let at = HEADER_BYTES;
  for (let i = 0; i < n; i++) {
    const r = records[i];
    at = writeVarint(out, at, sizes[i]);
    out[at++] = 0;
    at = small
      ? writeNumberVarlong(out, at, Number(r.timestampMs) - baseTimestamp)
      : writeUvarlong(out, at, zigzag64(r.timestampMs - fields.baseTimestamp));
    at = writeVarint(out, at, offsetDelta(r));
    at = writeBytes(out, at, r.key);
    at = writeBytes(out, at, r.value);
    at = writeVarint(out, at, r.headers.length);
    for (const h of r.headers) {
      const length = Buffer.byteLength(h.key, 'utf8');
      at = writeVarint(out, at, length);
      at += out.write(h.key, at, length, 'utf8');
      at = writeBytes(out, at, h.value);
    }
  }
  out.writeUInt32BE(crc32c(out.subarray(CRC_FROM)), 17);
  return out;
}
