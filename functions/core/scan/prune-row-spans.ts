/**
 * Which rows of a Parquet data file might match a filter, judged by the file's own statistics: row
 * groups by their column-chunk statistics, then pages inside a surviving row group by the page index
 * (ColumnIndex + OffsetIndex). The answer is a list of row spans; every row outside them is known not to
 * match, so the reader decodes only the spans.
 *
 * Each statistic is turned into the metrics of a one-chunk or one-page "data file" and judged by the
 * same evaluator that prunes whole files by their manifest metrics (evaluate-metrics.ts), so "might
 * match" means exactly what it means there. Parquet's PLAIN statistics are Iceberg's single-value
 * binary for ints, longs, floats, doubles, dates, times, timestamps (micros), strings and booleans;
 * decimals stored as INT32/INT64 are little-endian and are turned big-endian; anything else (INT96,
 * unsigned, millisecond or nanosecond times, columns inside lists or maps) is left out, which
 * evaluates as "might".
 */
import {
  decodeThriftAt as deserializeTCompactProtocol,
  type ThriftValue as ThriftType,
} from '../data/parquet/thrift/compact-reader.js';
import { type ByteRange, type ByteSource, wholeSource } from '../data/parquet/read/byte-source.js';
import {
  readFileFooter,
  type Thrift,
  thriftField as field,
  thriftInt as int,
  thriftList as list,
  thriftStruct as struct,
  thriftStructs as structs,
} from '../data/parquet/read/file-footer.js';
import type { RowSpan } from '../data/parquet/read/read-data-file.js';
import type { DataFile } from '../spec/types.js';
import { fileMightMatch } from './evaluate-metrics.js';
import type { BoundExpression, BoundPredicate } from './expression.js';
import { collectFieldIds, rewriteNot } from './expression-helpers.js';

interface Leaf {
  fieldId: number;
  /** How the statistics' bytes become Iceberg's: as they are, reversed (LE decimals), or not at all. */
  bounds: 'as-is' | 'reverse' | 'none';
}

interface Chunk {
  numValues: number;
  stats?: Thrift;
  columnIndex?: { offset: number; length: number };
  offsetIndex?: { offset: number; length: number };
}

interface Group {
  start: number;
  rows: number;
  chunks: Map<number, Chunk>;
}

/**
 * The spans of `file` (a whole Parquet file, or the ranges of one fetched so far: a page index not among
 * them prunes nothing) that might hold rows matching `filter`, merged and in order; an empty list when
 * none can. Undefined when the footer cannot be read (the caller reads everything). `parsed` is the
 * file's footer when the caller has it already (read-data-file.ts parses it on open; it must be given
 * with a ByteSource).
 */
export function pruneRowSpans(
  file: Uint8Array | ByteSource,
  filter: BoundExpression,
  parsed?: Thrift,
): RowSpan[] | undefined {
  let footer: Thrift;
  try {
    if (!parsed && !(file instanceof Uint8Array)) return undefined;
    footer = parsed ?? readFileFooter(file as Uint8Array);
  } catch {
    return undefined;
  }
  const source = file instanceof Uint8Array ? wholeSource(file) : file;
  const expr = rewriteNot(filter);
  const leaves = leavesOf(structs(footer, 2));
  const spans: RowSpan[] = [];
  for (const group of groupsOf(footer, expr, leaves)) {
    const start = group.start;
    if (group.rows > 0 && fileMightMatch(expr, groupMetrics(group, leaves))) {
      for (const s of groupSpans(expr, group, source, leaves)) {
        const last = spans.at(-1);
        if (last && last.to === start + s.from) last.to = start + s.to;
        else spans.push({ from: start + s.from, to: start + s.to });
      }
    }
  }
  return spans;
}

/**
 * Where pruneRowSpans and a page slice of a row group read the page index: in every row group the
 * chunk statistics leave, the ColumnIndex of each filter column and the OffsetIndex of every column.
 * Locations are as the footer states them (the reader checks them against the file). Never throws.
 */
export function pageIndexRanges(footer: Thrift, filter: BoundExpression): ByteRange[] {
  const expr = rewriteNot(filter);
  const leaves = leavesOf(structs(footer, 2));
  const raws = structs(footer, 4);
  const ranges: ByteRange[] = [];
  groupsOf(footer, expr, leaves).forEach((group, g) => {
    if (group.rows <= 0 || !fileMightMatch(expr, groupMetrics(group, leaves))) return;
    for (const chunk of structs(raws[g], 1)) {
      const offset = int(chunk, 4);
      const length = int(chunk, 5);
      if (offset !== undefined && length !== undefined) ranges.push({ offset, length });
    }
    for (const c of group.chunks.values()) if (c.columnIndex) ranges.push(c.columnIndex);
  });
  return ranges;
}

/** The footer's row groups with the chunks of the filter's columns that have bounds. */
function groupsOf(footer: Thrift, expr: BoundExpression, leaves: (Leaf | undefined)[]): Group[] {
  const wanted = collectFieldIds(expr);
  const groups: Group[] = [];
  let start = 0;
  for (const raw of structs(footer, 4)) {
    const rows = int(raw, 3) ?? 0;
    const chunks = new Map<number, Chunk>();
    structs(raw, 1).forEach((chunk, k) => {
      const leaf = leaves[k];
      if (leaf === undefined || !wanted.has(leaf.fieldId) || leaf.bounds === 'none') return;
      chunks.set(leaf.fieldId, chunkOf(chunk, leaf));
    });
    groups.push({ start, rows, chunks });
    start += rows;
  }
  return groups;
}

/** Leaf columns in chunk order; a leaf under a repeated field gets no bounds (they are not per row). */
function leavesOf(elements: Thrift[]): (Leaf | undefined)[] {
  const leaves: (Leaf | undefined)[] = [];
  let at = 1; // element 0 is the root
  const walk = (repeated: boolean): void => {
    const e = elements[at++];
    const isRepeated = repeated || int(e, 3) === 2;
    const children = int(e, 5) ?? 0;
    if (children > 0) {
      for (let c = 0; c < children; c++) walk(isRepeated);
      return;
    }
    const id = int(e, 9);
    leaves.push(
      typeof id === 'number' ? { fieldId: id, bounds: isRepeated ? 'none' : boundsOf(e) } : undefined,
    );
  };
  const rootChildren = int(elements[0], 5) ?? 0;
  for (let c = 0; c < rootChildren && at < elements.length; c++) walk(false);
  return leaves;
}

/** parquet.thrift Type and ConvertedType codes this module looks at. */
const INT32 = 1;
const INT64 = 2;
const INT96 = 3;
const DECIMAL = 5;
const MILLIS_OR_UNSIGNED = new Set([7, 9, 11, 12, 13, 14]); // TIME_MILLIS, TIMESTAMP_MILLIS, UINT_*

function boundsOf(e: Thrift): Leaf['bounds'] {
  const type = int(e, 1);
  const converted = int(e, 6);
  if (type === INT96 || (converted !== undefined && MILLIS_OR_UNSIGNED.has(converted))) return 'none';
  const logical = struct(e, 10);
  const unit = struct(struct(logical, 7), 2) ?? struct(struct(logical, 8), 2); // TIME, TIMESTAMP
  if (unit && field(unit, 2) === undefined) return 'none'; // not MICROS
  if (field(struct(logical, 10), 2) === false) return 'none'; // unsigned INTEGER
  const decimal = converted === DECIMAL || field(logical, 5) !== undefined;
  return decimal && (type === INT32 || type === INT64) ? 'reverse' : 'as-is';
}

function chunkOf(chunk: Thrift, leaf: Leaf): Chunk {
  const md = struct(chunk, 3);
  const location = (offset: number | undefined, length: number | undefined) =>
    offset !== undefined && length !== undefined && length > 0 ? { offset, length } : undefined;
  return {
    numValues: int(md, 5) ?? -1,
    stats: leaf.bounds === 'none' ? undefined : struct(md, 12),
    offsetIndex: location(int(chunk, 4), int(chunk, 5)),
    columnIndex: location(int(chunk, 6), int(chunk, 7)),
  };
}

function toIceberg(bytes: ThriftType | undefined, leaf: Leaf): Uint8Array | undefined {
  if (!(bytes instanceof Uint8Array) || leaf.bounds === 'none') return undefined;
  return leaf.bounds === 'reverse' ? bytes.slice().reverse() : bytes;
}

/** The row group's chunk statistics as the metrics of a data file. */
function groupMetrics(group: Group, leaves: (Leaf | undefined)[]): DataFile {
  const file = emptyMetrics(group.rows);
  for (const [id, chunk] of group.chunks) {
    const leaf = leaves.find((l) => l?.fieldId === id);
    if (!leaf || !chunk.stats) continue;
    if (chunk.numValues >= 0) file.value_counts?.set(id, BigInt(chunk.numValues));
    const nulls = int(chunk.stats, 3);
    if (nulls !== undefined) file.null_value_counts?.set(id, BigInt(nulls));
    // Only min_value/max_value: the deprecated min/max of byte arrays were compared signed by old writers.
    const min = toIceberg(field(chunk.stats, 6), leaf);
    const max = toIceberg(field(chunk.stats, 5), leaf);
    if (min && max) {
      file.lower_bounds?.set(id, min);
      file.upper_bounds?.set(id, max);
    }
  }
  return file;
}

function emptyMetrics(rows: number): DataFile {
  return {
    content: 0,
    file_path: '',
    file_format: 'PARQUET',
    spec_id: 0,
    partition: {},
    record_count: BigInt(rows),
    file_size_in_bytes: 0n,
    value_counts: new Map(),
    null_value_counts: new Map(),
    lower_bounds: new Map(),
    upper_bounds: new Map(),
  };
}

/** Spans of the group (relative to its first row) that might match: and intersects, or unites. */
function groupSpans(
  expr: BoundExpression,
  group: Group,
  file: ByteSource,
  leaves: (Leaf | undefined)[],
): RowSpan[] {
  const all = [{ from: 0, to: group.rows }];
  switch (expr.op) {
    case 'true':
    case 'not': // rewriteNot leaves none; "might" is the safe answer
      return all;
    case 'false':
      return [];
    case 'and':
      return intersect(
        groupSpans(expr.left, group, file, leaves),
        groupSpans(expr.right, group, file, leaves),
      );
    case 'or':
      return unite(groupSpans(expr.left, group, file, leaves), groupSpans(expr.right, group, file, leaves));
    default:
      return pageSpans(expr, group, file, leaves) ?? all;
  }
}

/** The pages of the predicate's column that might match, or undefined without a page index. */
function pageSpans(
  pred: BoundPredicate,
  group: Group,
  file: ByteSource,
  leaves: (Leaf | undefined)[],
): RowSpan[] | undefined {
  const id = pred.term.fieldId;
  const chunk = group.chunks.get(id);
  const leaf = leaves.find((l) => l?.fieldId === id);
  if (!chunk?.columnIndex || !chunk.offsetIndex || !leaf) return undefined;
  let columnIndex: Thrift;
  let offsetIndex: Thrift;
  try {
    columnIndex = readStruct(file, chunk.columnIndex);
    offsetIndex = readStruct(file, chunk.offsetIndex);
  } catch {
    return undefined;
  }
  const locations = structs(offsetIndex, 1);
  const nullPages = list(columnIndex, 1);
  const mins = list(columnIndex, 2);
  const maxes = list(columnIndex, 3);
  const nullCounts = list(columnIndex, 5);
  if (nullPages.length !== locations.length || !rowsAscend(locations, group.rows)) return undefined;
  const spans: RowSpan[] = [];
  locations.forEach((location, k) => {
    const from = int(location, 3) as number; // rowsAscend checked them
    const to = k + 1 < locations.length ? (int(locations[k + 1], 3) as number) : group.rows;
    const page = emptyMetrics(to - from);
    page.value_counts?.set(id, BigInt(to - from));
    const nulls = nullCounts[k];
    if (typeof nulls === 'bigint' || typeof nulls === 'number')
      page.null_value_counts?.set(id, BigInt(nulls));
    const isNullPage = nullPages[k] === true;
    const min = isNullPage ? undefined : toIceberg(mins[k], leaf);
    const max = isNullPage ? undefined : toIceberg(maxes[k], leaf);
    if (min && max) {
      page.lower_bounds?.set(id, min);
      page.upper_bounds?.set(id, max);
    }
    if (!fileMightMatch(pred, page)) return;
    const last = spans.at(-1);
    if (last && last.to === from) last.to = to;
    else spans.push({ from, to });
  });
  return spans;
}

/**
 * Whether the pages' first_row_index values start at row 0 and increase inside the group: otherwise
 * the index would leave rows in no page (dropped unread) or in two, so it is not used.
 */
function rowsAscend(locations: Thrift[], rows: number): boolean {
  let last = -1;
  for (const location of locations) {
    const first = int(location, 3);
    if (first === undefined || first <= last || first >= rows || (last < 0 && first !== 0)) return false;
    last = first;
  }
  return true;
}

/** @throws RangeError when the index is outside the file or was not fetched */
function readStruct(file: ByteSource, at: { offset: number; length: number }): Thrift {
  const bytes = file.bytes(at.offset, at.length);
  return deserializeTCompactProtocol({
    view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    offset: 0,
  });
}

/** Sorted, disjoint spans common to both lists. */
export function intersect(a: RowSpan[], b: RowSpan[]): RowSpan[] {
  const out: RowSpan[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const from = Math.max(a[i].from, b[j].from);
    const to = Math.min(a[i].to, b[j].to);
    if (from < to) out.push({ from, to });
    if (a[i].to < b[j].to) i++;
    else j++;
  }
  return out;
}

/** Sorted, disjoint spans covering both lists. */
export function unite(a: RowSpan[], b: RowSpan[]): RowSpan[] {
  const all = [...a, ...b].sort((x, y) => x.from - y.from);
  const out: RowSpan[] = [];
  for (const s of all) {
    const last = out.at(-1);
    if (last && s.from <= last.to) last.to = Math.max(last.to, s.to);
    else out.push({ ...s });
  }
  return out;
}
