/**
 * A small Parquet file made of only the pages of one row group that hold some rows, so a decoder that
 * reads whole column chunks (parquet-wasm: arrow-rs without the page index) decodes those pages and not
 * the ones before them. Measured on the bench's compacted 50,000-row file (5,000-row pages): one row of
 * every column near the end of the file cost 14.6 ms through offset/limit, ~4 ms from its slice.
 *
 * The slice keeps the file's schema bytes as they are and, per column chunk, the dictionary page and the
 * data pages covering one row range [from, to) common to every column (pages are located by the
 * OffsetIndex's page locations and first_row_index; the range is widened until it starts and ends on a
 * page boundary of every column). The footer is hostile input, so the page index is believed only as far
 * as it can be checked: pages one after the other inside the chunk, first_row_index 0 first and
 * increasing, each page header's sizes matching its location, and, for every page up to the last one
 * taken, its rows matching its header (exactly for a column outside lists: num_values of a V1 page,
 * num_rows of a V2 page, so the rows before a page add up to its first_row_index; at least one value
 * per row inside lists). Anything else gives undefined and the caller reads the file as it is. What the
 * checks cannot see: a V1 page of a list column carries no row count, so an index that moves a list
 * column's page starts onto other rows (and onto page starts of the other columns) would shift that
 * column's values between rows in the slice; rows are never dropped, and knowing would take decoding
 * the repetition levels of every page before.
 *
 * A file read by ranges (ranged-file.ts) has only the pages taken: their headers are checked as
 * above, the chunk's pages must also start at its first data page and end where the chunk ends, and the
 * first_row_index of the pages before them is believed unread, as arrow-rs believes it in the
 * whole-file route (an offset/limit read skips pages by the same index; test/unit/scan/range-read.test.ts
 * shows both routes reading the same rows from an index that moves the pages before a row).
 */
import { type ByteRange, type ByteSource, wholeSource } from './byte-source.js';
import * as footerFields from './file-footer.js';
import { rawFooterField } from './file-footer.js';
import type { Thrift } from './file-footer.js';
import { CompactReader, decodeThrift, readThriftStruct } from '../thrift/compact-reader.js';
import { type PageLocation, type SourceChunk, writeSlice } from './slice-write.js';

const { thriftField: field, thriftInt: int } = footerFields;
const { thriftStruct: struct, thriftStructs: structs } = footerFields;

/** Rows [from, to) of a file (positions counted from the file's first row) in a file of their own. */
export interface PageSlice {
  bytes: Uint8Array;
  from: number;
  to: number;
}

const DATA_PAGE = 0;
const DICTIONARY_PAGE = 2;
const DATA_PAGE_V2 = 3;

/** Where a slice is cut: row group `group` (whose first row is file position `groupStart`), rows [from, to). */
export interface SliceAt {
  group: number;
  groupStart: number;
  from: number;
  to: number;
  /**
   * The file is read by ranges: a slice may start at the group's first row too (it saves the fetch of
   * the other pages; read whole, such a slice saves nothing), and only the pages taken are checked.
   */
  byRange?: boolean;
}

/**
 * The slice of row group `group` (whose first row is file position `groupStart`) holding group rows
 * [from, to), or undefined when the footer or page index cannot be trusted for it, a byte it needs is
 * not in `file` (a ByteSource of fetched ranges), or the slice would start at the group's first row
 * (reading the file as it is then decodes the same pages). Never throws.
 */
export function slicePages(
  file: Uint8Array | ByteSource,
  footer: Thrift,
  group: number,
  groupStart: number,
  from: number,
  to: number,
  byRange = false,
): PageSlice | undefined {
  try {
    const source = file instanceof Uint8Array ? wholeSource(file) : file;
    return sliceGroup(source, footer, { group, groupStart, from, to, byRange });
  } catch {
    return undefined; // a malformed header or index read past its bounds, or bytes not fetched
  }
}

/**
 * The byte ranges slicePages reads for the same slice of a file read by ranges, the OffsetIndex of every
 * chunk of the group being in `source` already: each chunk's dictionary page and its pages in the
 * slice. Undefined when there is no slice to cut. Never throws.
 */
export function sliceRanges(source: ByteSource, footer: Thrift, at: SliceAt): ByteRange[] | undefined {
  try {
    const located = locate(source, footer, { ...at, byRange: true });
    if (!located) return undefined;
    const ranges: ByteRange[] = [];
    for (const chunk of located.chunks) {
      ranges.push({ offset: chunk.prefix.offset, length: chunk.prefix.size });
      const pages = pagesIn(chunk, located.start, located.end);
      const last = pages[pages.length - 1];
      ranges.push({ offset: pages[0].offset, length: last.offset + last.size - pages[0].offset });
    }
    return ranges;
  } catch {
    return undefined;
  }
}

/** Where the OffsetIndex of each column chunk of row group `group` is, as the footer states it. */
export function offsetIndexRanges(footer: Thrift, group: number): ByteRange[] {
  return structs(structs(footer, 4)[group], 1).map((chunk) => ({
    offset: int(chunk, 4) ?? -1,
    length: int(chunk, 5) ?? 0,
  }));
}

/** The group's chunks and the page-aligned row range [start, end) holding [from, to). */
function locate(
  source: ByteSource,
  footer: Thrift,
  { group, from, to, byRange }: SliceAt,
): { rows: number; chunks: SourceChunk[]; start: number; end: number } | undefined {
  const rowGroup = structs(footer, 4)[group];
  const rows = int(rowGroup, 3) ?? 0;
  if (!(from >= 0 && from < to && to <= rows)) return undefined;
  const repeated = repeatedLeaves(structs(footer, 2));
  const raw = structs(rowGroup, 1);
  if (raw.length === 0 || raw.length !== repeated.length) return undefined;
  const chunks: SourceChunk[] = [];
  for (let k = 0; k < raw.length; k++) {
    const chunk = sourceChunk(source, raw[k], rows, repeated[k], byRange === true);
    if (!chunk) return undefined;
    chunks.push(chunk);
  }
  const [start, end] = commonRange(chunks, from, to, rows);
  // From the group's first row a slice saves nothing: arrow-rs stops decoding at the span's end.
  if (start === 0 && !byRange) return undefined;
  return { rows, chunks, start, end };
}

function pagesIn(chunk: SourceChunk, start: number, end: number): PageLocation[] {
  return chunk.pages.filter((p) => p.firstRow >= start && p.firstRow < end);
}

/** @throws RangeError on bytes not fetched, ValidationError on a malformed page header or index (slicePages catches both) */
function sliceGroup(source: ByteSource, footer: Thrift, at: SliceAt): PageSlice | undefined {
  const located = locate(source, footer, at);
  if (!located) return undefined;
  const { rows, chunks, start, end } = located;
  const length = new DataView(source.bytes(source.size - 8, 4).slice().buffer).getUint32(0, true);
  const schema = rawFooterField(source.bytes(source.size - 8 - length, length + 8), 2);
  if (!schema) return undefined;
  const picked: { chunk: SourceChunk; pages: PageLocation[]; values: number; uncompressed: number }[] = [];
  for (const chunk of chunks) {
    const pages = pagesIn(chunk, start, end);
    const checked = checkPages(source, chunk, pages, rows, at.byRange === true);
    if (!checked) return undefined;
    picked.push({ chunk, pages, ...checked });
  }
  return {
    bytes: writeSlice(source, schema, footer, picked, end - start),
    from: at.groupStart + start,
    to: at.groupStart + end,
  };
}

/** Whether each leaf column (in chunk order) lies under a repeated field. */
function repeatedLeaves(elements: Thrift[]): boolean[] {
  const out: boolean[] = [];
  let at = 1;
  const walk = (repeated: boolean): void => {
    const e = elements[at++];
    const isRepeated = repeated || int(e, 3) === 2;
    const children = int(e, 5) ?? 0;
    if (children === 0) out.push(isRepeated);
    for (let c = 0; c < children && at < elements.length; c++) walk(isRepeated);
  };
  const rootChildren = int(elements[0], 5) ?? 0;
  for (let c = 0; c < rootChildren && at < elements.length; c++) walk(false);
  return out;
}

/**
 * Where a column chunk's bytes are, as its metadata states them: from its first page (the dictionary page
 * when it has one) to its end, and where its first data page starts; undefined without those fields.
 */
export function chunkExtent(md: Thrift): { start: number; end: number; dataOffset: number } | undefined {
  const dataOffset = int(md, 9);
  const compressed = int(md, 7);
  if (dataOffset === undefined || compressed === undefined) return undefined;
  const dictionary = int(md, 11);
  const start = dictionary !== undefined && dictionary > 0 ? Math.min(dictionary, dataOffset) : dataOffset;
  return { start, end: start + compressed, dataOffset };
}

function sourceChunk(
  source: ByteSource,
  chunk: Thrift,
  rows: number,
  repeated: boolean,
  byRange: boolean,
): SourceChunk | undefined {
  const md = struct(chunk, 3);
  // External or encrypted chunks, or no OffsetIndex: nothing to slice by.
  if (!md || field(chunk, 1) !== undefined || field(chunk, 8) !== undefined || field(chunk, 9) !== undefined)
    return undefined;
  const indexOffset = int(chunk, 4);
  const indexLength = int(chunk, 5);
  const extent = chunkExtent(md);
  if (indexOffset === undefined || !indexLength || extent === undefined) return undefined;
  const { start: chunkStart, end: chunkEnd, dataOffset } = extent;
  if (chunkStart < 4 || chunkEnd > source.size - 8) return undefined;
  const index = readThrift(source, indexOffset, indexLength);
  const pages: PageLocation[] = [];
  for (const location of structs(index, 1)) {
    const page = {
      offset: int(location, 1) ?? -1,
      size: int(location, 2) ?? -1,
      firstRow: int(location, 3) ?? -1,
    };
    const last = pages.at(-1);
    // Pages follow each other with nothing between them, the first one holding row 0.
    const ordered = last
      ? page.firstRow > last.firstRow && page.offset === last.offset + last.size
      : page.firstRow === 0;
    if (!ordered || page.size <= 0 || page.offset < chunkStart || page.offset + page.size > chunkEnd)
      return undefined;
    if (page.firstRow >= rows) return undefined;
    pages.push(page);
  }
  if (pages.length === 0) return undefined;
  // Read by ranges, nothing else of the chunk is fetched: its pages must fill it from the first data page.
  const lastPage = pages[pages.length - 1];
  if (byRange && (pages[0].offset !== dataOffset || lastPage.offset + lastPage.size !== chunkEnd))
    return undefined;
  const prefix = { offset: chunkStart, size: pages[0].offset - chunkStart };
  return { md, prefix, hasDictionary: prefix.size > 0, pages, repeated };
}

/** [from, to) widened until both ends are page boundaries of every chunk (group rows: the last end). */
function commonRange(chunks: SourceChunk[], from: number, to: number, rows: number): [number, number] {
  let start = from;
  let end = to;
  for (;;) {
    let nextStart = start;
    let nextEnd = end;
    for (const chunk of chunks) {
      const pages = chunk.pages;
      let i = pages.length - 1;
      while (pages[i].firstRow > start) i--;
      nextStart = Math.min(nextStart, pages[i].firstRow);
      let j = pages.length - 1;
      while (pages[j].firstRow >= end) j--;
      nextEnd = Math.max(nextEnd, j + 1 < pages.length ? pages[j + 1].firstRow : rows);
    }
    if (nextStart === start && nextEnd === end) return [start, end];
    start = nextStart;
    end = nextEnd;
  }
}

/**
 * Checks the chunk's pages up to the last chosen one (only the chosen ones `byRange`) against their
 * headers (the prefix is one dictionary page; each location holds exactly one page; outside lists, the
 * rows before each page, summed from the headers, are its first_row_index, so the index cannot shift
 * rows); the chosen pages' values and uncompressed size, or undefined when a header disagrees with the
 * index.
 */
function checkPages(
  source: ByteSource,
  chunk: SourceChunk,
  pages: PageLocation[],
  rows: number,
  byRange: boolean,
): { values: number; uncompressed: number } | undefined {
  let values = 0;
  let uncompressed = 0;
  if (chunk.hasDictionary) {
    const header = pageHeader(source, chunk.prefix);
    if (!header || int(header.header, 1) !== DICTIONARY_PAGE) return undefined;
    uncompressed += header.length + (int(header.header, 2) ?? 0);
  }
  const last = chunk.pages.indexOf(pages[pages.length - 1]);
  for (let k = byRange ? chunk.pages.indexOf(pages[0]) : 0; k <= last; k++) {
    const page = chunk.pages[k];
    const pageRows = (k + 1 < chunk.pages.length ? chunk.pages[k + 1].firstRow : rows) - page.firstRow;
    const read = pageHeader(source, page);
    if (!read) return undefined;
    const { header } = read;
    const type = int(header, 1);
    const v1 = struct(header, 5);
    const v2 = struct(header, 8);
    const count = type === DATA_PAGE ? int(v1, 1) : type === DATA_PAGE_V2 ? int(v2, 1) : undefined;
    if (count === undefined) return undefined;
    const exact =
      type === DATA_PAGE_V2
        ? int(v2, 3) === pageRows
        : chunk.repeated
          ? count >= pageRows
          : count === pageRows;
    if (!exact) return undefined;
    if (page.firstRow >= pages[0].firstRow) {
      values += count;
      uncompressed += read.length + (int(header, 2) ?? 0);
    }
  }
  return { values, uncompressed };
}

/**
 * A page's header and its length, when its compressed size fills the location exactly.
 * @throws RangeError when the page's bytes are not at hand; ValidationError when its header is malformed or runs past them
 */
export function pageHeader(
  source: ByteSource,
  at: { offset: number; size: number },
): { header: Thrift; length: number } | undefined {
  const bytes = source.bytes(at.offset, at.size);
  const reader = new CompactReader(bytes, 0, bytes.byteLength);
  const header = readThriftStruct(reader);
  const compressed = int(header, 3);
  return compressed !== undefined && reader.pos + compressed === at.size
    ? { header, length: reader.pos }
    : undefined;
}

/**
 * The struct in bytes [offset, offset + length) of the file (a ColumnIndex or OffsetIndex).
 * @throws RangeError when the bytes are not at hand; ValidationError when they are malformed
 */
export function readThrift(source: ByteSource, offset: number, length: number): Thrift {
  return decodeThrift(source.bytes(offset, length));
}
