/**
 * The Parquet page index (parquet.thrift ColumnIndex and OffsetIndex): per data page its location and
 * first row, and its min/max/null count, written after the row groups and pointed at from each
 * ColumnChunk. Readers (floe's scan, DuckDB, arrow-rs, hyparquet) use it to skip pages inside a row
 * group whose statistics cannot match a filter, which is what makes a point query on a large sorted
 * (compacted) file cheap.
 */
import { type ChunkStats, chunkStats } from './chunk-stats.js';
import type { LeafLevels } from './levels.js';
import type { DataPageRecord } from './pages.js';
import { CT, ThriftWriter } from '../thrift/compact-writer.js';

/** A written column chunk, as the page index needs it. */
export interface IndexedChunk {
  levels: LeafLevels;
  /** The chunk's level range [from, to) in `levels`. */
  from: number;
  /** Absolute file offset of the chunk's first byte. */
  start: number;
  pages: DataPageRecord[];
  /** The chunk's statistics (reused when it has a single page). */
  stats: ChunkStats;
  /** Each page's statistics, when the writer computed them already. */
  pageStats?: ChunkStats[];
}

/** BoundaryOrder: UNORDERED is always true; readers then compare every page. */
const UNORDERED = 0;

/** The serialised OffsetIndex of a chunk. */
export function encodeOffsetIndex(chunk: IndexedChunk): Uint8Array {
  const w = new ThriftWriter(16 + chunk.pages.length * 12);
  w.beginList(1, CT.STRUCT, chunk.pages.length);
  const reps = chunk.levels.reps;
  let row = 0;
  let k = chunk.from;
  for (const page of chunk.pages) {
    // Rows before the page: one per level when nothing repeats, else one per repetition level 0.
    if (reps === null) row = page.levelFrom - chunk.from;
    else for (; k < page.levelFrom; k++) if (reps[k] === 0) row++;
    w.beginListStruct();
    w.i64(1, chunk.start + page.offset);
    w.i32(2, page.size);
    w.i64(3, row);
    w.endStruct();
  }
  w.endStruct();
  return w.view().slice();
}

/**
 * The serialised ColumnIndex of a chunk, or undefined when a page holding values has no bounds (the
 * spec then wants no column index: a missing bound cannot be written as "unknown").
 */
export function encodeColumnIndex(chunk: IndexedChunk): Uint8Array | undefined {
  const single = chunk.pages.length === 1;
  const stats =
    chunk.pageStats ??
    chunk.pages.map((p) => (single ? chunk.stats : chunkStats(chunk.levels, p.levelFrom, p.levelTo)));
  const nullPages = chunk.pages.map((p, i) => stats[i].nullCount === p.levelTo - p.levelFrom);
  for (let i = 0; i < stats.length; i++) {
    if (!nullPages[i] && (stats[i].min === undefined || stats[i].max === undefined)) return undefined;
  }
  const empty = new Uint8Array(0);
  const w = new ThriftWriter(64 + chunk.pages.length * 24);
  w.beginList(1, CT.TRUE, nullPages.length);
  for (const isNull of nullPages) w.listBool(isNull);
  w.beginList(2, CT.BINARY, stats.length);
  for (let i = 0; i < stats.length; i++) w.listBinary(nullPages[i] ? empty : (stats[i].min ?? empty));
  w.beginList(3, CT.BINARY, stats.length);
  for (let i = 0; i < stats.length; i++) w.listBinary(nullPages[i] ? empty : (stats[i].max ?? empty));
  w.i32(4, UNORDERED);
  w.beginList(5, CT.I64, stats.length);
  for (const s of stats) w.listI64(s.nullCount);
  w.endStruct();
  return w.view().slice();
}
