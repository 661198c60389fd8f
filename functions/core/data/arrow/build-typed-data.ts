/**
 * Arrow Data of a gathered leaf column in typed storage (leaf-column.ts): the same buffers, validity
 * and stats build-primitive-data.ts / build-binary-data.ts make from the same values, without a JS
 * value per slot. Longs, timestamps and decimals are exact doubles there, written as 64-bit two's
 * complement halves (no BigInt per value); strings (UTF-8) and binary values are already bytes with offsets, so
 * they are handed to Arrow as they are. test/unit/data/leaf-column.test.ts holds both builders equal.
 */
import * as arrow from 'apache-arrow';
import { ValidationError } from '../../errors.js';
import { decimalParams } from '../../spec/conversions.js';
import type { PrimitiveType } from '../../spec/types.js';
import { FloatBounds, floatingData } from './build-primitive-data.js';
import type { StatsSink } from './column-stats.js';
import { type ColumnTarget, nullsOf, ValidityBuilder } from './column-target.js';
import { type LeafColumn, SLOT_NULL, SLOT_VALUE, utf8Text } from './leaf-column.js';

const TWO_32 = 4294967296;

function validityOf(leaf: LeafColumn, col: ColumnTarget): ValidityBuilder {
  const n = leaf.length;
  const validity = new ValidityBuilder(n);
  const state = leaf.state;
  for (let i = 0; i < n; i++) {
    const s = state[i];
    if (s === SLOT_VALUE) continue;
    if (s === SLOT_NULL && col.required) throw new ValidationError(`required field '${col.path}' is null`);
    validity.setNull(i);
  }
  return validity;
}

/** Writes safe integer v at words[at], words[at + 1] as a little-endian int64. */
function writeInt64(words: Uint32Array, at: number, v: number): number {
  const hi = Math.floor(v / TWO_32);
  words[at] = v - hi * TWO_32;
  words[at + 1] = hi;
  return hi;
}

/**
 * Arrow Data of a leaf in typed storage; records its stats in `stats` under `col.id`.
 * @throws ValidationError for a null in a required field
 */
export function buildTypedLeaf(
  type: PrimitiveType,
  arrowType: arrow.DataType,
  col: ColumnTarget,
  leaf: LeafColumn,
  stats: StatsSink,
): arrow.Data {
  const validity = validityOf(leaf, col);
  if (leaf.ends) return buildBytes(arrowType, col, leaf, validity, stats);
  const n = leaf.length;
  const nums = leaf.nums as Float64Array;
  const state = leaf.state;
  const nulls = nullsOf(validity);
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  if (leaf.numberKind === 'boolean') {
    const bits = new Uint8Array((n + 7) >> 3);
    for (let i = 0; i < n; i++) {
      if (state[i] !== SLOT_VALUE) continue;
      const v = nums[i];
      if (v === 1) bits[i >> 3] |= 1 << (i & 7);
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const bounded = col.bounded && min <= max;
    stats.set(col.id, {
      type: 'boolean',
      nanCount: 0,
      min: bounded ? min === 1 : undefined,
      max: bounded ? max === 1 : undefined,
    });
    return arrow.makeData({ type: arrowType as arrow.Bool, length: n, ...nulls, data: bits });
  }
  if (type === 'float' || type === 'double') {
    const out = type === 'float' ? new Float32Array(n) : new Float64Array(n);
    const bounds = new FloatBounds();
    for (let i = 0; i < n; i++) {
      if (state[i] !== SLOT_VALUE) continue;
      out[i] = nums[i];
      bounds.add(nums[i]);
    }
    bounds.record(stats, col, type);
    return floatingData(arrowType, out, nulls);
  }
  if (type === 'int' || type === 'date') {
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      if (state[i] !== SLOT_VALUE) continue;
      const v = nums[i];
      out[i] = v;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const bounded = col.bounded && min <= max;
    stats.set(col.id, { type, nanCount: 0, min: bounded ? min : undefined, max: bounded ? max : undefined });
    return arrow.makeData({ type: arrowType as arrow.Int32, length: n, ...nulls, data: out });
  }
  const decimal = decimalParams(type);
  // Decimal128: 16 bytes per value (the low int64, then the sign); longs and timestamps: 8.
  const width = decimal ? 4 : 2;
  const words = new Uint32Array(n * width);
  for (let i = 0; i < n; i++) {
    if (state[i] !== SLOT_VALUE) continue;
    const v = nums[i];
    const hi = writeInt64(words, i * width, v);
    if (decimal && hi < 0) {
      words[i * width + 2] = 0xffffffff;
      words[i * width + 3] = 0xffffffff;
    }
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const bounded = col.bounded && min <= max;
  stats.set(col.id, {
    type,
    nanCount: 0,
    min: bounded ? BigInt(min) : undefined,
    max: bounded ? BigInt(max) : undefined,
  });
  if (decimal) return arrow.makeData({ type: arrowType as arrow.Decimal, length: n, ...nulls, data: words });
  return arrow.makeData({
    type: arrowType as arrow.Int64,
    length: n,
    ...nulls,
    data: new BigInt64Array(words.buffer),
  });
}

/** Byte-wise order of two UTF-8 ranges: Iceberg's code-point order for strings. */
function compareRanges(bytes: Uint8Array, a: number, aEnd: number, b: number, bEnd: number): number {
  const len = Math.min(aEnd - a, bEnd - b);
  for (let k = 0; k < len; k++) {
    const d = bytes[a + k] - bytes[b + k];
    if (d !== 0) return d;
  }
  return aEnd - a - (bEnd - b);
}

/** Rows of the smallest and largest values of a byte-range leaf (-1: none), when it is bounded. */
function rangeBounds(col: ColumnTarget, leaf: LeafColumn): [number, number] {
  const n = leaf.length;
  const ends = leaf.ends as Int32Array;
  const bytes = leaf.bytes as Uint8Array;
  const state = leaf.state;
  let minAt = -1;
  let maxAt = -1;
  if (!col.bounded) return [minAt, maxAt];
  // First bytes of the bounds so far (-1: empty): a value whose first byte is below the min's is the
  // new min, above the max's the new max, strictly between them neither, with no full comparison
  // (most values of a column); one equal to the min is no new max either.
  let minFirst = 256;
  let maxFirst = -2;
  for (let i = 0; i < n; i++) {
    if (state[i] !== SLOT_VALUE) continue;
    const a = ends[i];
    const e = ends[i + 1];
    const first = a < e ? bytes[a] : -1;
    if (first < minFirst) {
      minAt = i;
      minFirst = first;
      if (maxAt < 0) {
        maxAt = i;
        maxFirst = first;
      }
      continue;
    }
    if (first > maxFirst) {
      maxAt = i;
      maxFirst = first;
      continue;
    }
    if (first === minFirst) {
      const c = compareRanges(bytes, a, e, ends[minAt], ends[minAt + 1]);
      if (c < 0) minAt = i;
      if (c <= 0) continue;
    }
    if (first === maxFirst && compareRanges(bytes, a, e, ends[maxAt], ends[maxAt + 1]) > 0) maxAt = i;
  }
  return [minAt, maxAt];
}

/** Utf8 or Binary Data of a leaf in byte storage, bounds as buildString / buildBinary make them. */
function buildBytes(
  arrowType: arrow.DataType,
  col: ColumnTarget,
  leaf: LeafColumn,
  validity: ValidityBuilder,
  stats: StatsSink,
): arrow.Data {
  const n = leaf.length;
  const ends = leaf.ends as Int32Array;
  const bytes = leaf.bytes as Uint8Array;
  const binary = leaf.binary;
  const total = ends[n];
  if (total > 0x7fffffff)
    throw new ValidationError(
      `field '${col.path}' holds over 2 GiB ${binary ? 'in' : 'of text in'} one file`,
    );
  const [minAt, maxAt] = rangeBounds(col, leaf);
  // A binary bound is a copy: it must not change when the column does.
  const bound = (i: number) =>
    i < 0 ? undefined : binary ? bytes.slice(ends[i], ends[i + 1]) : utf8Text(bytes, ends[i], ends[i + 1]);
  stats.set(col.id, {
    type: binary ? 'binary' : 'string',
    nanCount: 0,
    min: bound(minAt),
    max: bound(maxAt),
  });
  const data = {
    length: n,
    ...nullsOf(validity),
    valueOffsets: ends.length === n + 1 ? ends : ends.subarray(0, n + 1),
    data: bytes.subarray(0, total),
  };
  return binary
    ? arrow.makeData({ type: arrowType as arrow.Binary, ...data })
    : arrow.makeData({ type: arrowType as arrow.Utf8, ...data });
}
