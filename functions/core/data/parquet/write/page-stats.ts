/**
 * Statistics of a column chunk's data pages (for the ColumnIndex) and of the chunk from them, so the
 * chunk's values are compared once, not once for the chunk and again page by page: a chunk's bounds
 * are the extremes of its pages' bounds (the same bytes chunk-stats.ts would pick, as the bounds are
 * values of the chunk), its null count their sum. A dictionary-encoded chunk's page bounds come from
 * its indices, ranked once by the dictionary's byte order, without comparing the values of every row.
 */
import { type ChunkStats, chunkStats, compareSlots, stringBoundsAt } from './chunk-stats.js';
import type { DictionaryChunk } from './dictionary.js';
import type { LeafLevels } from './levels.js';

/**
 * The stats of each page [pages[p], pages[p + 1]) and of the whole chunk [pages[0], last).
 * Never throws.
 */
export function plainPageStats(
  levels: LeafLevels,
  pages: readonly number[],
): { chunk: ChunkStats; pages: ChunkStats[] } {
  const from = pages[0];
  const to = pages[pages.length - 1];
  if (pages.length <= 2) {
    const chunk = chunkStats(levels, from, to);
    return { chunk, pages: [chunk] };
  }
  const out: ChunkStats[] = [];
  for (let p = 0; p + 1 < pages.length; p++) out.push(chunkStats(levels, pages[p], pages[p + 1]));
  return { chunk: mergeStats(levels, pages, out) ?? chunkStats(levels, from, to), pages: out };
}

/**
 * The chunk's stats from its pages' (the same as chunkStats over the chunk), or undefined when a page
 * holding values has no bounds though its kind has them (a NaN-only page, a string over the bound
 * limit): the chunk's bounds are then not the pages' extremes.
 */
function mergeStats(
  levels: LeafLevels,
  breaks: readonly number[],
  pages: ChunkStats[],
): ChunkStats | undefined {
  const compare = comparator(levels);
  let nullCount = 0;
  let min: Uint8Array | undefined;
  let max: Uint8Array | undefined;
  for (let p = 0; p < pages.length; p++) {
    const s = pages[p];
    nullCount += s.nullCount;
    if (s.min === undefined || s.max === undefined) {
      if (compare !== undefined && s.nullCount < breaks[p + 1] - breaks[p]) return undefined;
      continue;
    }
    if (compare === undefined) continue;
    if (min === undefined || compare(s.min, min) < 0) min = s.min;
    if (max === undefined || compare(s.max, max) > 0) max = s.max;
  }
  const signed = pages[0].signed;
  if (compare === undefined || min === undefined || max === undefined) return { nullCount, signed };
  return { nullCount, signed, min, max };
}

type Compare = (a: Uint8Array, b: Uint8Array) => number;

/** How chunk-stats.ts orders the PLAIN bounds of the leaf's kind; undefined for kinds without bounds. */
function comparator(levels: LeafLevels): Compare | undefined {
  const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
  switch (levels.leaf.kind) {
    case 'int32':
    case 'decimal32':
      return (a, b) => view(a).getInt32(0, true) - view(b).getInt32(0, true);
    case 'int64':
    case 'decimal64':
      return (a, b) => {
        const x = view(a).getBigInt64(0, true);
        const y = view(b).getBigInt64(0, true);
        return x < y ? -1 : x > y ? 1 : 0;
      };
    case 'float':
      return (a, b) => view(a).getFloat32(0, true) - view(b).getFloat32(0, true);
    case 'double':
      return (a, b) => view(a).getFloat64(0, true) - view(b).getFloat64(0, true);
    case 'bytes':
      return levels.leaf.isString ? compareBytes : undefined;
    default:
      return undefined;
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/**
 * Page stats of a dictionary-encoded string chunk: page p holds levels [pageStarts[p], pageStarts[p + 1])
 * and dictionary indices [indexStarts[p], indexStarts[p + 1]); `distinct` holds the Arrow slot of each
 * dictionary entry. Never throws.
 */
export function dictionaryPageStats(levels: LeafLevels, dict: DictionaryChunk): ChunkStats[] {
  const { pageStarts: pages, indexStarts, indices, distinct, size } = dict;
  const offsets = levels.data.valueOffsets as Int32Array;
  const src = levels.data.values as Uint8Array;
  const byRank = Array.from({ length: size }, (_, e) => e).sort((a, b) =>
    compareSlots(offsets, src, distinct[a], distinct[b]),
  );
  const rank = new Int32Array(size);
  for (let r = 0; r < size; r++) rank[byRank[r]] = r;
  const { defs } = levels;
  const maxDef = levels.leaf.maxDef;
  const out: ChunkStats[] = [];
  for (let p = 0; p + 1 < pages.length; p++) {
    let nullCount = 0;
    if (defs !== null) for (let k = pages[p]; k < pages[p + 1]; k++) if (defs[k] !== maxDef) nullCount++;
    let lo = size;
    let hi = -1;
    for (let i = indexStarts[p]; i < indexStarts[p + 1]; i++) {
      const r = rank[indices[i]];
      if (r < lo) lo = r;
      if (r > hi) hi = r;
    }
    if (hi < 0) out.push({ nullCount, signed: false });
    else
      out.push({
        nullCount,
        signed: false,
        ...stringBoundsAt(offsets, src, distinct[byRank[lo]], distinct[byRank[hi]]),
      });
  }
  return out;
}
