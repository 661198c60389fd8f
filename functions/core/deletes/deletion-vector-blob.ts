/**
 * The `deletion-vector-v1` Puffin blob (Puffin spec, "deletion-vector-v1 blob type"): a 4-byte
 * big-endian length of what follows up to the CRC, the magic `D1 D3 39 64`, the vector as a portable
 * 64-bit Roaring bitmap (an 8-byte little-endian count of 32-bit bitmaps, then each one's 4-byte
 * little-endian key and its portable serialization, keys ascending), and a big-endian CRC-32 of magic
 * and vector. The big-endian fields are Delta Lake's, kept so both formats share the bytes.
 */
import { crc32 } from 'node:zlib';
import { ValidationError } from '../errors.js';
import { CorruptDeletionVectorError } from './deletes-errors.js';
import { DeletionVector, MAX_KEY } from './deletion-vector.js';
import { type Bitmap32, type PortablePlan, planPortable, readPortable } from './roaring-portable.js';

/** The blob type name in a Puffin footer. */
export const DELETION_VECTOR_BLOB_TYPE = 'deletion-vector-v1';
const MAGIC = [0xd1, 0xd3, 0x39, 0x64];
/** Length field, magic, CRC. */
const FRAMING = 12;

/**
 * The portable 64-bit Roaring serialization of `vector`, as a function of its positions only: bitmaps
 * with no position are left out (Java also writes an empty bitmap for each key below the largest; both
 * read the same), containers take their smallest form.
 */
export function serializePortable64(vector: DeletionVector): Uint8Array {
  const { plans, size } = portable64Size(vector);
  const bytes = new Uint8Array(size);
  writePortable64(plans, new DataView(bytes.buffer), 0);
  return bytes;
}

/**
 * The `deletion-vector-v1` blob holding `vector`.
 * @throws ValidationError when the blob would pass 2 GiB (its length field is a signed 32-bit int)
 */
export function serializeDeletionVector(vector: DeletionVector): Uint8Array {
  const { plans, size } = portable64Size(vector);
  if (size + FRAMING > 0x7fffffff) {
    throw new ValidationError(`a deletion vector of ${size} bytes is past the format's 2 GiB limit`);
  }
  const bytes = new Uint8Array(size + FRAMING);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, size + 4, false);
  bytes.set(MAGIC, 4);
  writePortable64(plans, view, 8);
  view.setUint32(8 + size, crc32(bytes.subarray(4, 8 + size)), false);
  return bytes;
}

/**
 * The deletion vector in a `deletion-vector-v1` blob. The blob is checked whole: its length field
 * against its size, the magic, the CRC, then every part of the bitmap; `expectedCardinality` (the
 * manifest entry's record_count or the blob's `cardinality` property), when given, must match.
 * @throws CorruptDeletionVectorError naming what is wrong
 */
export function parseDeletionVector(blob: Uint8Array, expectedCardinality?: number | bigint): DeletionVector {
  if (blob.byteLength < FRAMING + 8) {
    throw corrupt(`${blob.byteLength} bytes, fewer than the ${FRAMING + 8} of an empty vector`);
  }
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const length = view.getInt32(0, false);
  if (length !== blob.byteLength - 8) {
    throw corrupt(
      `length field says ${length} bytes of magic and vector, the blob holds ${blob.byteLength - 8}`,
    );
  }
  if (MAGIC.some((b, i) => blob[4 + i] !== b)) {
    throw corrupt(`magic is ${hex(blob.subarray(4, 8))}, expected d1d33964`);
  }
  const stored = view.getUint32(4 + length, false);
  const computed = crc32(blob.subarray(4, 4 + length));
  if (stored !== computed) {
    throw corrupt(`CRC-32 is ${hexWord(computed)}, the blob says ${hexWord(stored)}: the bytes were damaged`);
  }
  const limit = expectedCardinality === undefined ? undefined : Number(expectedCardinality);
  const vector = parsePortable64(blob.subarray(8, 4 + length), limit);
  if (expectedCardinality !== undefined && BigInt(vector.cardinality) !== BigInt(expectedCardinality)) {
    throw corrupt(`holds ${vector.cardinality} positions, its metadata says ${expectedCardinality}`);
  }
  return vector;
}

/**
 * A portable 64-bit Roaring bitmap (the whole of `bytes`) as a deletion vector, of at most
 * `maxCardinality` positions (checked before the containers that would pass it are decoded).
 * @throws CorruptDeletionVectorError for a malformed bitmap, keys not strictly ascending, a key past
 *   MAX_KEY (a negative or unreadably large position), or bytes left over
 */
export function parsePortable64(
  bytes: Uint8Array,
  maxCardinality = Number.POSITIVE_INFINITY,
): DeletionVector {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 8) throw corrupt(`vector of ${bytes.byteLength} bytes has no 8-byte bitmap count`);
  const count = view.getBigUint64(0, true);
  // Each bitmap takes at least a 4-byte key and an 8-byte empty serialization.
  if (count > BigInt(Math.floor((bytes.byteLength - 8) / 12))) {
    throw corrupt(`claims ${count} bitmaps, more than its ${bytes.byteLength} bytes can hold`);
  }
  const bitmaps: [number, Bitmap32][] = [];
  let at = 8;
  let previous = -1;
  let seen = 0;
  for (let i = 0; i < Number(count); i++) {
    if (at + 4 > bytes.byteLength) throw corrupt(`bitmap ${i}'s key lies past the end`);
    const key = view.getUint32(at, true);
    if (key > 0x7fffffff) throw corrupt(`bitmap ${i} has key ${key}: positions must be positive (top bit 0)`);
    if (key > MAX_KEY)
      throw corrupt(`bitmap ${i} has key ${key}, past ${MAX_KEY}, the largest Iceberg reads`);
    if (key <= previous) throw corrupt(`bitmap keys are not strictly ascending (${key} after ${previous})`);
    const where = `deletion vector bitmap ${i} (key ${key})`;
    const read = readPortable(bytes, at + 4, bytes.byteLength, where, maxCardinality - seen);
    for (const container of read.bitmap.values()) seen += container.cardinality;
    bitmaps.push([key, read.bitmap]);
    previous = key;
    at = read.end;
  }
  if (at !== bytes.byteLength)
    throw corrupt(`${bytes.byteLength - at} bytes left after its ${count} bitmaps`);
  return DeletionVector.fromBitmaps(bitmaps);
}

type Plans = { key: number; plan: PortablePlan }[];

function portable64Size(vector: DeletionVector): { plans: Plans; size: number } {
  const plans = vector.bitmapsInOrder().map(([key, bitmap]) => ({ key, plan: planPortable(bitmap) }));
  return { plans, size: plans.reduce((sum, p) => sum + 4 + p.plan.size, 8) };
}

function writePortable64(plans: Plans, view: DataView, offset: number): number {
  view.setBigUint64(offset, BigInt(plans.length), true);
  let at = offset + 8;
  for (const { key, plan } of plans) {
    view.setUint32(at, key, true);
    at = plan.write(view, at + 4);
  }
  return at;
}

function corrupt(problem: string): CorruptDeletionVectorError {
  return new CorruptDeletionVectorError(`deletion vector: ${problem}`);
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

function hexWord(word: number): string {
  return word.toString(16).padStart(8, '0');
}
