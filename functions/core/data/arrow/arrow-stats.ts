/**
 * Column statistics of a RecordBatch in the writer's layout, read from its buffers: what the column
 * builders (build-primitive-data.ts, build-binary-data.ts) record while building the same batch from
 * rows — per leaf, in the same order, NaN counts for floats, and bounds outside lists and maps only
 * (Iceberg's order: code points, unsigned bytes, -0 < +0, NaN kept out). A slot counts only where it
 * and every struct and list above it are present (a value under a null parent is masked, as the row
 * path masks it).
 */
import type * as arrow from 'apache-arrow';
import { ValidationError } from '../../errors.js';
import { decimalParams, fixedLength } from '../../spec/conversions.js';
import type { IcebergType, PrimitiveType, StructType } from '../../spec/types.js';
import type { LeafStats, StatsSink } from './column-stats.js';

/** 1 where a slot is present (it and all its parents are non-null); null when every slot is. */
type Presence = Uint8Array | null;

/**
 * Fills `stats` with every primitive leaf of `schema` as found in `batch` (built for `schema`).
 * @throws ValidationError when the batch does not have the schema's shape (a bug upstream)
 */
export function collectBatchStats(schema: StructType, batch: arrow.RecordBatch, stats: StatsSink): void {
  const root = batch.data;
  schema.fields.forEach((f, j) => {
    collect(f.type, f.id, root.children[j], null, true, stats);
  });
}

function validAt(d: arrow.Data): Uint8Array | undefined {
  const bits = d.nullBitmap;
  return bits && bits.byteLength > 0 && d.nullCount > 0 ? bits : undefined;
}

/** Presence of `d`'s own slots: the parents' presence and its own validity. */
function presenceOf(d: arrow.Data, parent: Presence): Presence {
  const bits = validAt(d);
  if (!bits) return parent;
  const out = parent ? parent.slice() : new Uint8Array(d.length).fill(1);
  for (let i = 0; i < d.length; i++) if (((bits[i >> 3] >> (i & 7)) & 1) === 0) out[i] = 0;
  return out;
}

function collect(
  type: IcebergType,
  id: number,
  d: arrow.Data,
  parent: Presence,
  bounded: boolean,
  stats: StatsSink,
): void {
  const present = presenceOf(d, parent);
  if (typeof type === 'string') {
    stats.set(id, leafStats(type, d, present, bounded));
    return;
  }
  if (type.type === 'struct') {
    type.fields.forEach((f, j) => {
      collect(f.type, f.id, d.children[j], present, bounded, stats);
    });
    return;
  }
  const child = d.children[0];
  const inner = elementPresence(d, present, child.length);
  if (type.type === 'list') {
    collect(type.element, type['element-id'], child, inner, false, stats);
    return;
  }
  collect(type.key, type['key-id'], child.children[0], inner, false, stats);
  collect(type.value, type['value-id'], child.children[1], inner, false, stats);
}

/** Elements are present where their list (or map) slot is. */
function elementPresence(d: arrow.Data, present: Presence, elements: number): Presence {
  if (!present) return null;
  const offsets = d.valueOffsets as Int32Array;
  const out = new Uint8Array(elements);
  for (let i = 0; i < d.length; i++) if (present[i]) out.fill(1, offsets[i], offsets[i + 1]);
  return out;
}

function leafStats(type: PrimitiveType, d: arrow.Data, present: Presence, bounded: boolean): LeafStats {
  const n = d.length;
  const has = (i: number) => present === null || present[i] === 1;
  switch (type) {
    case 'boolean': {
      const bits = d.values as Uint8Array;
      let sawTrue = false;
      let sawFalse = false;
      for (let i = 0; i < n; i++) {
        if (!has(i)) continue;
        if (((bits[i >> 3] >> (i & 7)) & 1) === 1) sawTrue = true;
        else sawFalse = true;
      }
      const seen = bounded && (sawTrue || sawFalse);
      return { type, nanCount: 0, min: seen ? !sawFalse : undefined, max: seen ? sawTrue : undefined };
    }
    case 'int':
    case 'date':
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return integerStats(type, d.values as Int32Array | BigInt64Array, n, has, bounded);
    case 'float':
    case 'double':
      return floatStats(type, d.values as Float32Array | Float64Array, n, has, bounded);
    case 'string':
    case 'binary': {
      const [min, max] = bounded
        ? byteBounds(d.values as Uint8Array, d.valueOffsets as Int32Array, n, has)
        : [undefined, undefined];
      const text = (b: Uint8Array | undefined) =>
        b === undefined ? undefined : Buffer.from(b).toString('utf8');
      if (type === 'string') return { type, nanCount: 0, min: text(min), max: text(max) };
      return { type, nanCount: 0, min, max };
    }
    case 'uuid':
      return fixedStats(type, d, 16, n, has, bounded);
  }
  if (decimalParams(type)) return decimalStats(type, d.values as Uint32Array, n, has, bounded);
  const length = fixedLength(type);
  if (length !== undefined) return fixedStats(type, d, length, n, has, bounded);
  throw new ValidationError(`unknown primitive type '${type}'`);
}

function integerStats(
  type: PrimitiveType,
  v: Int32Array | BigInt64Array,
  n: number,
  has: (i: number) => boolean,
  bounded: boolean,
): LeafStats {
  if (!bounded) return { type, nanCount: 0, min: undefined, max: undefined };
  const [lo, hi] = v instanceof BigInt64Array ? int64Extremes(v, n, has) : int32Extremes(v, n, has);
  return { type, nanCount: 0, min: lo < 0 ? undefined : v[lo], max: hi < 0 ? undefined : v[hi] };
}

/** Slots of the smallest and largest present value (-1 when none). */
function int32Extremes(v: Int32Array, n: number, has: (i: number) => boolean): [number, number] {
  let lo = -1;
  let hi = -1;
  for (let i = 0; i < n; i++) {
    if (!has(i)) continue;
    if (lo < 0 || v[i] < v[lo]) lo = i;
    if (hi < 0 || v[i] > v[hi]) hi = i;
  }
  return [lo, hi];
}

/** As int32Extremes, comparing the halves of each 64-bit value (no bigint per value). */
function int64Extremes(v: BigInt64Array, n: number, has: (i: number) => boolean): [number, number] {
  const w = new Int32Array(v.buffer, v.byteOffset, n * 2);
  let lo = -1;
  let hi = -1;
  let loHigh = 0;
  let loLow = 0;
  let hiHigh = 0;
  let hiLow = 0;
  for (let i = 0; i < n; i++) {
    if (!has(i)) continue;
    const high = w[2 * i + 1];
    const low = w[2 * i] >>> 0;
    if (lo < 0 || high < loHigh || (high === loHigh && low < loLow)) {
      lo = i;
      loHigh = high;
      loLow = low;
    }
    if (hi < 0 || high > hiHigh || (high === hiHigh && low > hiLow)) {
      hi = i;
      hiHigh = high;
      hiLow = low;
    }
  }
  return [lo, hi];
}

function floatStats(
  type: PrimitiveType,
  v: Float32Array | Float64Array,
  n: number,
  has: (i: number) => boolean,
  bounded: boolean,
): LeafStats {
  let nanCount = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let seen = false;
  for (let i = 0; i < n; i++) {
    if (!has(i)) continue;
    const x = v[i];
    if (Number.isNaN(x)) {
      nanCount++;
      continue;
    }
    seen = true;
    if (x < min || (x === 0 && min === 0 && Object.is(x, -0))) min = x;
    if (x > max || (x === 0 && max === 0 && Object.is(max, -0))) max = x;
  }
  const keep = bounded && seen;
  return { type, nanCount, min: keep ? min : undefined, max: keep ? max : undefined };
}

function decimalStats(
  type: PrimitiveType,
  words: Uint32Array,
  n: number,
  has: (i: number) => boolean,
  bounded: boolean,
): LeafStats {
  if (!bounded) return { type, nanCount: 0, min: undefined, max: undefined };
  // Slots compared on their four 32-bit words (high word signed), no bigint per value.
  let lo = -1;
  let hi = -1;
  for (let i = 0; i < n; i++) {
    if (!has(i)) continue;
    if (lo < 0) {
      lo = i;
      hi = i;
      continue;
    }
    if (compareDecimal(words, i, lo) < 0) lo = i;
    else if (compareDecimal(words, i, hi) > 0) hi = i;
  }
  const at = (i: number) => (i < 0 ? undefined : decimalAt(words, i));
  return { type, nanCount: 0, min: at(lo), max: at(hi) };
}

/** Order of the Decimal128 values in slots a and b (little-endian words, two's complement). */
function compareDecimal(words: Uint32Array, a: number, b: number): number {
  const x = 4 * a;
  const y = 4 * b;
  const high = (words[x + 3] | 0) - (words[y + 3] | 0);
  if (high !== 0) return high;
  for (let w = 2; w >= 0; w--) {
    const d = words[x + w] - words[y + w];
    if (d !== 0) return d;
  }
  return 0;
}

function decimalAt(words: Uint32Array, i: number): bigint {
  const view = new DataView(words.buffer, words.byteOffset + 16 * i, 16);
  return (view.getBigInt64(8, true) << 64n) | view.getBigUint64(0, true);
}

function compareRanges(b: Uint8Array, a0: number, a1: number, c0: number, c1: number): number {
  const n = Math.min(a1 - a0, c1 - c0);
  for (let k = 0; k < n; k++) {
    const d = b[a0 + k] - b[c0 + k];
    if (d !== 0) return d;
  }
  return a1 - a0 - (c1 - c0);
}

/** First byte of a value, -1 when empty (it sorts first). */
function firstByte(b: Uint8Array, from: number, to: number): number {
  return from < to ? b[from] : -1;
}

/**
 * Min and max of variable-width values as unsigned bytes (UTF-8 byte order = code-point order). The
 * first byte settles most comparisons; only ties on it compare further.
 */
function byteBounds(
  b: Uint8Array,
  o: Int32Array,
  n: number,
  has: (i: number) => boolean,
): [Uint8Array | undefined, Uint8Array | undefined] {
  let lo = -1;
  let hi = -1;
  let loFirst = 0;
  let hiFirst = 0;
  for (let i = 0; i < n; i++) {
    if (!has(i)) continue;
    const a0 = o[i];
    const a1 = o[i + 1];
    const first = firstByte(b, a0, a1);
    if (lo < 0 || first < loFirst || (first === loFirst && compareRanges(b, a0, a1, o[lo], o[lo + 1]) < 0)) {
      lo = i;
      loFirst = first;
    }
    if (hi < 0 || first > hiFirst || (first === hiFirst && compareRanges(b, a0, a1, o[hi], o[hi + 1]) > 0)) {
      hi = i;
      hiFirst = first;
    }
  }
  const at = (i: number) => (i < 0 ? undefined : b.slice(o[i], o[i + 1]));
  return [at(lo), at(hi)];
}

/** Fixed-width bytes (fixed, uuid): bounds never truncated, as Iceberg Java keeps them. */
function fixedStats(
  type: PrimitiveType,
  d: arrow.Data,
  width: number,
  n: number,
  has: (i: number) => boolean,
  bounded: boolean,
): LeafStats {
  if (!bounded) return { type, nanCount: 0, min: undefined, max: undefined };
  const offsets = new Int32Array(n + 1);
  for (let i = 0; i <= n; i++) offsets[i] = i * width;
  const [min, max] = byteBounds(d.values as Uint8Array, offsets, n, has);
  return { type, nanCount: 0, min, max };
}
