/**
 * Column-chunk statistics as parquet-mr writes them, for engines that prune row groups: null_count
 * always; min/max for signed numeric leaves (floats without NaN, a zero bound written as -0 for min and
 * +0 for max) and for strings in unsigned byte order when both bounds are at most 64 bytes. Other
 * types get no bounds (floe keeps its own Iceberg bounds; these only serve other readers).
 */
import type { LeafLevels } from './levels.js';
import { valueBytes } from './plain-values.js';

export interface ChunkStats {
  nullCount: number;
  /** PLAIN-encoded bounds (no length prefix), or undefined when not written. */
  min?: Uint8Array;
  max?: Uint8Array;
  /** Whether the bounds also go in the deprecated min/max fields (signed sort order, as parquet-mr). */
  signed: boolean;
}

/** Longest string bound written; past it both are left out, not truncated (a cut max is no upper bound). */
const MAX_STRING_BOUND = 64;

export function chunkStats(levels: LeafLevels, from: number, to: number): ChunkStats {
  const { defs } = levels;
  const maxDef = levels.leaf.maxDef;
  let nullCount = 0;
  if (defs !== null) for (let k = from; k < to; k++) if (defs[k] !== maxDef) nullCount++;
  switch (levels.leaf.kind) {
    case 'int32':
      return { nullCount, signed: true, ...int32Bounds(levels, from, to, 1) };
    case 'decimal32':
      return { nullCount, signed: true, ...int32Bounds(levels, from, to, 4) };
    case 'int64':
      return { nullCount, signed: true, ...int64Bounds(levels, from, to, 2) };
    case 'decimal64':
      return { nullCount, signed: true, ...int64Bounds(levels, from, to, 4) };
    case 'float':
    case 'double':
      return { nullCount, signed: true, ...floatBounds(levels, from, to) };
    case 'bytes':
      if (levels.leaf.isString) return { nullCount, signed: false, ...stringBounds(levels, from, to) };
      return { nullCount, signed: false };
    default:
      return { nullCount, signed: false };
  }
}

type Bounds = { min?: Uint8Array; max?: Uint8Array };

/** Bounds of 32-bit values read every `stride` int32 words (Decimal128 keeps its low word first). */
function int32Bounds(levels: LeafLevels, from: number, to: number, stride: number): Bounds {
  const { defs, slots } = levels;
  const maxDef = levels.leaf.maxDef;
  const v = levels.data.values as ArrayBufferView;
  const words = new Int32Array(v.buffer, v.byteOffset, v.byteLength >> 2);
  let min = 0;
  let max = 0;
  let seen = false;
  for (let k = from; k < to; k++) {
    if (defs !== null && defs[k] !== maxDef) continue;
    const x = words[(slots === null ? k : slots[k]) * stride];
    if (!seen) {
      min = x;
      max = x;
      seen = true;
    } else if (x < min) min = x;
    else if (x > max) max = x;
  }
  if (!seen) return {};
  return { min: int32Bytes(min), max: int32Bytes(max) };
}

function int32Bytes(x: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setInt32(0, x, true);
  return out;
}

/** Bounds of 64-bit values compared as (signed high word, unsigned low word), without bigints. */
function int64Bounds(levels: LeafLevels, from: number, to: number, stride: number): Bounds {
  const { defs, slots } = levels;
  const maxDef = levels.leaf.maxDef;
  const v = levels.data.values as ArrayBufferView;
  const hi32 = new Int32Array(v.buffer, v.byteOffset, v.byteLength >> 2);
  const lo32 = new Uint32Array(v.buffer, v.byteOffset, v.byteLength >> 2);
  let minAt = -1;
  let maxAt = -1;
  for (let k = from; k < to; k++) {
    if (defs !== null && defs[k] !== maxDef) continue;
    const w = (slots === null ? k : slots[k]) * stride;
    if (minAt < 0) {
      minAt = w;
      maxAt = w;
      continue;
    }
    const h = hi32[w + 1];
    if (h < hi32[minAt + 1] || (h === hi32[minAt + 1] && lo32[w] < lo32[minAt])) minAt = w;
    if (h > hi32[maxAt + 1] || (h === hi32[maxAt + 1] && lo32[w] > lo32[maxAt])) maxAt = w;
  }
  if (minAt < 0) return {};
  const bytes = valueBytes(levels);
  return { min: bytes.slice(minAt * 4, minAt * 4 + 8), max: bytes.slice(maxAt * 4, maxAt * 4 + 8) };
}

function floatBounds(levels: LeafLevels, from: number, to: number): Bounds {
  const { defs, slots } = levels;
  const maxDef = levels.leaf.maxDef;
  const values = levels.data.values as Float32Array | Float64Array;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let seen = false;
  for (let k = from; k < to; k++) {
    if (defs !== null && defs[k] !== maxDef) continue;
    const x = values[slots === null ? k : slots[k]];
    if (Number.isNaN(x)) continue; // NaN never bounds
    seen = true;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  if (!seen) return {};
  // parquet-mr: a zero bound is written as -0 (min) and +0 (max), so readers never exclude either zero.
  if (min === 0) min = -0;
  if (max === 0) max = 0;
  const single = values instanceof Float32Array;
  return { min: floatBytes(min, single), max: floatBytes(max, single) };
}

function floatBytes(x: number, single: boolean): Uint8Array {
  const out = new Uint8Array(single ? 4 : 8);
  const view = new DataView(out.buffer);
  if (single) view.setFloat32(0, x, true);
  else view.setFloat64(0, x, true);
  return out;
}

function stringBounds(levels: LeafLevels, from: number, to: number): Bounds {
  const { defs, slots } = levels;
  const maxDef = levels.leaf.maxDef;
  const offsets = levels.data.valueOffsets as Int32Array;
  const src = levels.data.values as Uint8Array;
  const view = new DataView(src.buffer, src.byteOffset, src.byteLength);
  let minAt = -1;
  let maxAt = -1;
  for (let k = from; k < to; k++) {
    if (defs !== null && defs[k] !== maxDef) continue;
    const s = slots === null ? k : slots[k];
    if (minAt < 0) {
      minAt = s;
      maxAt = s;
      continue;
    }
    const c = compareWords(view, offsets, src, s, minAt);
    if (c < 0) minAt = s;
    else if (c > 0 && compareWords(view, offsets, src, s, maxAt) > 0) maxAt = s;
  }
  return stringBoundsAt(offsets, src, minAt, maxAt);
}

/** compareSlots four bytes a step (big-endian words order as their bytes do), for long common prefixes. */
function compareWords(view: DataView, offsets: Int32Array, src: Uint8Array, a: number, b: number): number {
  let i = offsets[a];
  let j = offsets[b];
  const aEnd = offsets[a + 1];
  const bEnd = offsets[b + 1];
  const words = Math.min(aEnd - i, bEnd - j) >> 2;
  for (let w = 0; w < words; w++, i += 4, j += 4) {
    const x = view.getUint32(i);
    const y = view.getUint32(j);
    if (x !== y) return x < y ? -1 : 1;
  }
  while (i < aEnd && j < bEnd) {
    const d = src[i++] - src[j++];
    if (d !== 0) return d;
  }
  return aEnd - i - (bEnd - j);
}

/**
 * String bounds of a dictionary-encoded chunk from its distinct values alone (`distinct` holds the
 * Arrow slot of each). Null count still comes from the levels.
 */
export function dictionaryStats(
  levels: LeafLevels,
  from: number,
  to: number,
  distinct: Int32Array,
  size: number,
): ChunkStats {
  const { defs } = levels;
  const maxDef = levels.leaf.maxDef;
  let nullCount = 0;
  if (defs !== null) for (let k = from; k < to; k++) if (defs[k] !== maxDef) nullCount++;
  if (!levels.leaf.isString || size === 0) return { nullCount, signed: false };
  const offsets = levels.data.valueOffsets as Int32Array;
  const src = levels.data.values as Uint8Array;
  let minAt = distinct[0];
  let maxAt = distinct[0];
  for (let e = 1; e < size; e++) {
    const s = distinct[e];
    if (compareSlots(offsets, src, s, minAt) < 0) minAt = s;
    else if (compareSlots(offsets, src, s, maxAt) > 0) maxAt = s;
  }
  return { nullCount, signed: false, ...stringBoundsAt(offsets, src, minAt, maxAt) };
}

export function stringBoundsAt(offsets: Int32Array, src: Uint8Array, minAt: number, maxAt: number): Bounds {
  if (minAt < 0) return {};
  const min = src.slice(offsets[minAt], offsets[minAt + 1]);
  const max = src.slice(offsets[maxAt], offsets[maxAt + 1]);
  if (min.length > MAX_STRING_BOUND || max.length > MAX_STRING_BOUND) return {};
  return { min, max };
}

/** Unsigned byte order of two byte-array slots; a prefix sorts first. */
export function compareSlots(offsets: Int32Array, src: Uint8Array, a: number, b: number): number {
  let i = offsets[a];
  let j = offsets[b];
  const aEnd = offsets[a + 1];
  const bEnd = offsets[b + 1];
  while (i < aEnd && j < bEnd) {
    const d = src[i++] - src[j++];
    if (d !== 0) return d;
  }
  return aEnd - i - (bEnd - j);
}
