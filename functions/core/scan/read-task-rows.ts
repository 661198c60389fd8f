/**
 * The rows of one data file that match a scan's filter, filter column first: the file's own statistics
 * (row groups, page index) leave the spans that might match; the filter is evaluated on the Arrow
 * columns it needs (evaluate-columns.ts, no row objects); where that leaves a small part of the file,
 * the other projected columns are decoded only over the spans holding the matches; and rows are built
 * only for the matches. The caller applies deletes to what comes back.
 *
 * A large file under a filter is not fetched whole: its tail (footer) first, then the page index of the
 * row groups its statistics leave, then the pages of the spans read (data/ranged-file.ts); the whole
 * file once only when a read needs more (most of its rows, a page index missing or failing its checks).
 */
import { batchRows, type DataBatch } from '../data/parquet/read/data-batch.js';
import { LakeError, ValidationError } from '../errors.js';
import { openDataFile, type RowSpan } from '../data/parquet/read/read-data-file.js';
import type { FileIO } from '../io/file-io.js';
import type { Row, StructType } from '../spec/types.js';
import { columnBatchOf, selectRows } from './evaluate-columns.js';
import type { BoundExpression } from './expression.js';
import { collectFieldIds } from './expression-helpers.js';
import { pageIndexRanges, pruneRowSpans } from './prune-row-spans.js';
import { thriftInt, thriftStructs } from '../data/parquet/read/file-footer.js';
import { pruneStruct, refuseMissingDefaults } from './read-columns.js';

/** Rows read and the file position of each (position deletes name positions). */
export interface TaskRows {
  rows: Row[];
  positions: number[] | undefined; // undefined: row i is at position i
  /** Whether the filter was applied exactly (else the caller still evaluates it on each row). */
  filtered: boolean;
}

/**
 * Surviving rows closer than this are read in one span: each span is a separate decode call, and
 * decoding a few rows in between costs less than another call.
 */
const MERGE_GAP_ROWS = 1024;

/**
 * Filter column first only when the statistics left at most this share of the file's rows. Measured on
 * the bench's orders (`country = 'DE'`, 8 % of rows, spread over every page): filter-first over the
 * whole file cost 1.15× the single pass; a point query on a sorted 50,000-row file, 1/7 of it.
 */
const DENSE_SHARE = 0.5;

/**
 * Files from this size up are read by ranges under a filter. Ranges cost two round trips (tail beside a
 * stat, then the pages; the page index is mostly in the tail) for the one of a whole read, and on S3 a
 * round trip (10-20 ms to the first byte) is worth about 1-2 MB of transfer: below this a whole read is
 * about as fast and the bytes saved are few. Locally each range read costs ~0.1 ms CPU.
 */
export const RANGED_MIN_BYTES = 1024 * 1024;

/**
 * Batches read and, per batch, the rows of it kept (ascending, within the batch; undefined: every
 * row), with the file position of each kept row, in order over the batches.
 */
export interface TaskBatches {
  parts: { batch: DataBatch; rows: Int32Array | undefined }[];
  positions: number[] | undefined; // undefined: kept row i is at position i
  /** Whether the filter was applied exactly (else the caller still evaluates it on each row). */
  filtered: boolean;
}

/**
 * Rows of `location` for `readStruct` that match `filter` (`filtered: true`), or every row when there
 * is no filter or pruning is off (`filtered: false`: the caller evaluates the filter per row).
 * `sizeHint` is the file's size as its manifest entry states it (file_size_in_bytes): from
 * RANGED_MIN_BYTES up, a filtered read fetches by ranges (the size is checked before it is used).
 * @throws as openDataFile and OpenDataFile.read; ValidationError when a filter column cannot be read
 *   as its type; UnsupportedFeatureError when the file lacks a column with a v3 initial-default
 */
export async function readTaskRows(
  io: FileIO,
  location: string,
  readStruct: StructType,
  filter: BoundExpression | undefined,
  prune: boolean,
  sizeHint?: number,
): Promise<TaskRows> {
  const { parts, positions, filtered } = await readTaskBatches(
    io,
    location,
    readStruct,
    filter,
    prune,
    sizeHint,
  );
  const rows: Row[] = [];
  try {
    for (const { batch, rows: kept } of parts)
      for (const row of batchRows(readStruct, batch, kept)) rows.push(row);
  } catch (error) {
    if (error instanceof LakeError) throw error;
    throw new ValidationError(`cannot read ${location}: ${String(error)}`, { cause: error });
  }
  return { rows, positions, filtered };
}

/**
 * The same read as readTaskRows, left as Arrow batches and the rows of each kept: no row objects, for
 * readers that take the columns they need straight from the batches.
 * @throws as readTaskRows
 */
export async function readTaskBatches(
  io: FileIO,
  location: string,
  readStruct: StructType,
  filter: BoundExpression | undefined,
  prune: boolean,
  sizeHint?: number,
): Promise<TaskBatches> {
  const byRange = filter !== undefined && prune && sizeHint !== undefined && sizeHint >= RANGED_MIN_BYTES;
  const file = await openDataFile(io, location, byRange ? { rangedSize: sizeHint } : {});
  try {
    // FileMetaData.schema (2): each SchemaElement's field_id (9).
    const fileIds = new Set<number>();
    for (const element of thriftStructs(file.footer, 2)) {
      const id = thriftInt(element, 9);
      if (id !== undefined) fileIds.add(id);
    }
    refuseMissingDefaults(readStruct, fileIds, location);
    if (!filter || !prune) {
      const parts = (await file.readBatches(readStruct)).map((batch) => ({ batch, rows: undefined }));
      return { parts, positions: undefined, filtered: false };
    }
    if (file.ranged) await file.fetch(pageIndexRanges(file.footer, filter));
    const spans = pruneRowSpans(file.source, filter, file.footer) ?? [{ from: 0, to: file.rowCount }];
    if (spans.length === 0) return { parts: [], positions: [], filtered: true };
    const filterStruct = pruneStruct(readStruct, collectFieldIds(filter));
    const candidates = spans.reduce((n, s) => n + s.to - s.from, 0);
    const dense = candidates > file.rowCount * DENSE_SHARE;
    // Most rows are read: one whole fetch, not the pages of most of the file one range at a time.
    if (dense && file.ranged) await file.fetch([{ offset: 0, length: file.source.size }]);
    if (filterStruct.fields.length >= readStruct.fields.length || dense) {
      // One pass: the filter needs every column read anyway, or the statistics left most of the file,
      // where matches are likely spread over it and a second pass would decode nearly everything again.
      return matchingParts(readStruct, filter, await file.readBatches(readStruct, spans), spans);
    }
    const filterBatches = await file.readBatches(filterStruct, spans);
    const survivors = matchingPositions(filterStruct, filter, filterBatches, spans);
    if (survivors.length === 0) return { parts: [], positions: [], filtered: true };
    const readSpans = spansOf(survivors);
    return matchingParts(readStruct, filter, await file.readBatches(readStruct, readSpans), readSpans);
  } finally {
    file.close();
  }
}

/** The batches' rows of `struct` for which the filter is true, with their file positions. */
function matchingParts(
  struct: StructType,
  filter: BoundExpression,
  batches: DataBatch[],
  spans: readonly RowSpan[],
): TaskBatches {
  const all = positionsOf(spans);
  const parts: TaskBatches['parts'] = [];
  const positions: number[] = [];
  let base = 0;
  for (const batch of batches) {
    const selected = selectRows(filter, columnBatchOf(struct, batch));
    if (selected.length > 0) {
      parts.push({ batch, rows: selected });
      for (const k of selected) positions.push(all[base + k]);
    }
    base += batch.length;
  }
  return { parts, positions, filtered: true };
}

/** File positions of the rows for which the filter is true. */
function matchingPositions(
  struct: StructType,
  filter: BoundExpression,
  batches: DataBatch[],
  spans: readonly RowSpan[],
): number[] {
  const all = positionsOf(spans);
  const out: number[] = [];
  let base = 0;
  for (const batch of batches) {
    for (const k of selectRows(filter, columnBatchOf(struct, batch))) out.push(all[base + k]);
    base += batch.length;
  }
  return out;
}

function positionsOf(spans: readonly RowSpan[]): number[] {
  const out: number[] = [];
  for (const s of spans) for (let p = s.from; p < s.to; p++) out.push(p);
  return out;
}

/** Ascending positions → spans covering them, merging gaps up to MERGE_GAP_ROWS. */
function spansOf(positions: number[]): RowSpan[] {
  const spans: RowSpan[] = [];
  for (const p of positions) {
    const last = spans.at(-1);
    if (last && p - last.to <= MERGE_GAP_ROWS) last.to = p + 1;
    else spans.push({ from: p, to: p + 1 });
  }
  return spans;
}
