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
 */
import { deserializeTCompactProtocol } from 'hyparquet/src/thrift.js';
import * as footerFields from './file-footer.js';
import type { Thrift } from './file-footer.js';
import { CT, ThriftWriter } from './parquet/thrift-compact.js';
import { rawFooterField } from './thrift-raw.js';

const { thriftField: field, thriftInt: int, thriftList: list } = footerFields;
const { thriftStruct: struct, thriftStructs: structs } = footerFields;

/** Rows [from, to) of a file (positions counted from the file's first row) in a file of their own. */
export interface PageSlice {
  bytes: Uint8Array;
  from: number;
  to: number;
}

interface PageLocation {
  offset: number;
  size: number;
  firstRow: number;
}

interface SourceChunk {
  md: Thrift;
  /** Bytes before the first data page (the dictionary page), possibly empty. */
  prefix: { offset: number; size: number };
  hasDictionary: boolean;
  pages: PageLocation[];
  repeated: boolean;
}

const DATA_PAGE = 0;
const DICTIONARY_PAGE = 2;
const DATA_PAGE_V2 = 3;
const MAGIC = new Uint8Array([0x50, 0x41, 0x52, 0x31]);

/**
 * The slice of row group `group` (whose first row is file position `groupStart`) holding group rows
 * [from, to), or undefined when the footer or page index cannot be trusted for it or the slice would
 * start at the group's first row (reading the file as it is then decodes the same pages). Never throws.
 */
export function slicePages(
  file: Uint8Array,
  footer: Thrift,
  group: number,
  groupStart: number,
  from: number,
  to: number,
): PageSlice | undefined {
  try {
    return sliceGroup(file, footer, structs(footer, 4)[group], { groupStart, from, to });
  } catch {
    return undefined; // a malformed header or index read past its bounds
  }
}

/** @throws RangeError / Error on a malformed page header or index (slicePages catches it) */
function sliceGroup(
  file: Uint8Array,
  footer: Thrift,
  rowGroup: Thrift | undefined,
  { groupStart, from, to }: { groupStart: number; from: number; to: number },
): PageSlice | undefined {
  const rows = int(rowGroup, 3) ?? 0;
  if (!(from >= 0 && from < to && to <= rows)) return undefined;
  const schema = rawFooterField(file, 2);
  const repeated = repeatedLeaves(structs(footer, 2));
  const raw = structs(rowGroup, 1);
  if (!schema || raw.length === 0 || raw.length !== repeated.length) return undefined;
  const chunks: SourceChunk[] = [];
  for (let k = 0; k < raw.length; k++) {
    const chunk = sourceChunk(file, raw[k], rows, repeated[k]);
    if (!chunk) return undefined;
    chunks.push(chunk);
  }
  const [start, end] = commonRange(chunks, from, to, rows);
  // From the group's first row a slice saves nothing: arrow-rs stops decoding at the span's end.
  if (start === 0) return undefined;
  const picked: { chunk: SourceChunk; pages: PageLocation[]; values: number; uncompressed: number }[] = [];
  for (const chunk of chunks) {
    const pages = chunk.pages.filter((p) => p.firstRow >= start && p.firstRow < end);
    const checked = checkPages(file, chunk, pages, rows);
    if (!checked) return undefined;
    picked.push({ chunk, pages, ...checked });
  }
  return {
    bytes: writeSlice(file, schema, footer, picked, end - start),
    from: groupStart + start,
    to: groupStart + end,
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

function sourceChunk(
  file: Uint8Array,
  chunk: Thrift,
  rows: number,
  repeated: boolean,
): SourceChunk | undefined {
  const md = struct(chunk, 3);
  // External or encrypted chunks, or no OffsetIndex: nothing to slice by.
  if (!md || field(chunk, 1) !== undefined || field(chunk, 8) !== undefined || field(chunk, 9) !== undefined)
    return undefined;
  const indexOffset = int(chunk, 4);
  const indexLength = int(chunk, 5);
  const dataOffset = int(md, 9);
  const compressed = int(md, 7);
  if (indexOffset === undefined || !indexLength || dataOffset === undefined || compressed === undefined)
    return undefined;
  const dictionary = int(md, 11);
  const chunkStart =
    dictionary !== undefined && dictionary > 0 ? Math.min(dictionary, dataOffset) : dataOffset;
  const chunkEnd = chunkStart + compressed;
  if (chunkStart < 4 || chunkEnd > file.byteLength - 8) return undefined;
  const index = readThrift(file, indexOffset, indexLength);
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
 * Checks the chunk's pages up to the last chosen one against their headers (the prefix is one
 * dictionary page; each location holds exactly one page; outside lists, the rows before each page, summed
 * from the headers, are its first_row_index, so the index cannot shift rows); the chosen pages' values
 * and uncompressed size, or undefined when a header disagrees with the index.
 */
function checkPages(
  file: Uint8Array,
  chunk: SourceChunk,
  pages: PageLocation[],
  rows: number,
): { values: number; uncompressed: number } | undefined {
  let values = 0;
  let uncompressed = 0;
  if (chunk.hasDictionary) {
    const header = pageHeader(file, chunk.prefix);
    if (!header || int(header.header, 1) !== DICTIONARY_PAGE) return undefined;
    uncompressed += header.length + (int(header.header, 2) ?? 0);
  }
  const last = chunk.pages.indexOf(pages[pages.length - 1]);
  for (let k = 0; k <= last; k++) {
    const page = chunk.pages[k];
    const pageRows = (k + 1 < chunk.pages.length ? chunk.pages[k + 1].firstRow : rows) - page.firstRow;
    const read = pageHeader(file, page);
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

/** A page's header and its length, when its compressed size fills the location exactly. */
function pageHeader(
  file: Uint8Array,
  at: { offset: number; size: number },
): { header: Thrift; length: number } | undefined {
  const reader = { view: new DataView(file.buffer, file.byteOffset + at.offset, at.size), offset: 0 };
  const header = deserializeTCompactProtocol(reader);
  const compressed = int(header, 3);
  return compressed !== undefined && reader.offset + compressed === at.size
    ? { header, length: reader.offset }
    : undefined;
}

function readThrift(file: Uint8Array, offset: number, length: number): Thrift {
  if (offset < 0 || offset + length > file.byteLength) throw new RangeError('outside the file');
  return deserializeTCompactProtocol({
    view: new DataView(file.buffer, file.byteOffset + offset, length),
    offset: 0,
  });
}

function writeSlice(
  file: Uint8Array,
  schema: Uint8Array,
  footer: Thrift,
  picked: { chunk: SourceChunk; pages: PageLocation[]; values: number; uncompressed: number }[],
  rows: number,
): Uint8Array {
  const parts: Uint8Array[] = [MAGIC];
  let at = MAGIC.length;
  const w = new ThriftWriter(1024 + schema.byteLength + picked.length * 128);
  w.i32(1, int(footer, 1) ?? 1);
  w.rawField(2, CT.LIST, schema); // the schema as it is (arrow-rs wants the fields in ascending order)
  w.i64(3, rows);
  w.beginList(4, CT.STRUCT, 1);
  w.beginListStruct();
  w.beginList(1, CT.STRUCT, picked.length);
  let groupBytes = 0;
  for (const { chunk, pages, values, uncompressed } of picked) {
    const chunkStart = at;
    if (chunk.hasDictionary) {
      parts.push(file.subarray(chunk.prefix.offset, chunk.prefix.offset + chunk.prefix.size));
      at += chunk.prefix.size;
    }
    const dataStart = at;
    for (const page of pages) {
      parts.push(file.subarray(page.offset, page.offset + page.size));
      at += page.size;
    }
    groupBytes += uncompressed;
    w.beginListStruct();
    w.i64(2, chunkStart);
    w.beginStruct(3);
    w.i32(1, int(chunk.md, 1) ?? 0);
    const encodings = list(chunk.md, 2).filter((e): e is number => typeof e === 'number');
    w.beginList(2, CT.I32, encodings.length);
    for (const e of encodings) w.listI32(e);
    const path = list(chunk.md, 3).filter((p): p is Uint8Array => p instanceof Uint8Array);
    w.beginList(3, CT.BINARY, path.length);
    for (const p of path) w.listBinary(p);
    w.i32(4, int(chunk.md, 4) ?? 0);
    w.i64(5, values);
    w.i64(6, uncompressed);
    w.i64(7, at - chunkStart);
    w.i64(9, dataStart);
    if (chunk.hasDictionary) w.i64(11, chunkStart);
    w.endStruct();
    w.endStruct();
  }
  w.i64(2, groupBytes);
  w.i64(3, rows);
  w.endStruct();
  const metadata = structs(footer, 5);
  if (metadata.length > 0) {
    w.beginList(5, CT.STRUCT, metadata.length);
    for (const kv of metadata) {
      w.beginListStruct();
      const key = field(kv, 1);
      const value = field(kv, 2);
      w.binary(1, key instanceof Uint8Array ? key : new Uint8Array());
      if (value instanceof Uint8Array) w.binary(2, value);
      w.endStruct();
    }
  }
  const created = field(footer, 6);
  if (created instanceof Uint8Array) w.binary(6, created);
  w.endStruct();
  const footerBytes = w.view();
  parts.push(footerBytes);
  const trailer = new Uint8Array(8);
  new DataView(trailer.buffer).setUint32(0, footerBytes.byteLength, true);
  trailer.set(MAGIC, 4);
  parts.push(trailer);
  return concat(parts);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
