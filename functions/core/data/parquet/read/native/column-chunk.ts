/**
 * One leaf column of a floe-written file, every row group's chunk in turn, decoded into its levels and
 * its defined values in level order (assemble.ts puts them in their Arrow slots). Pages are as floe's
 * writer emits them (parquet/write/pages.ts, dictionary.ts, plain-values.ts): an optional PLAIN dictionary
 * page of byte arrays first, then data pages V1 with RLE levels and PLAIN or RLE_DICTIONARY values,
 * each ZSTD, GZIP or uncompressed. Every size, count and offset is checked against the others; what
 * does not fit throws NotNativeError.
 */
import { isUtf8 } from 'node:buffer';
import * as zlib from 'node:zlib';
import { type CompactReader, nativeReader, notNative, T } from './compact-reader.js';
import type { Slab } from '../../../arrow/arrow-ffi.js';
import { CODEC_IDS, Encoding, PageType } from '../../write/pages.js';
import type { ChunkMeta, RowGroupMeta } from './file-meta.js';
import type { LeafInfo } from './floe-schema.js';
import { int32s } from './leaf-data.js';
import { type Arena, Bytes, copyValue } from './arena.js';
import { decodeHybrid } from './hybrid.js';
import type { ZstdInflater } from './zstd-inflate.js';

/** A leaf's levels and values over the whole file. */
export interface LeafColumn {
  info: LeafInfo;
  /** Levels (values written, nulls included). */
  count: number;
  /** Levels the footer announces (the buffers' capacity). */
  total: number;
  /** Definition levels; null when every level is maxDef. */
  defs: Uint8Array | null;
  /** Repetition levels; null when maxRep is 0. */
  reps: Uint8Array | null;
  /** Defined values. */
  present: number;
  /** fixed and decimals: `present × width` PLAIN bytes; booleans: one byte (0 or 1) per value. */
  values: Uint8Array;
  /** byte arrays: `present + 1` offsets into `data`. */
  offsets: Int32Array;
  data: Uint8Array;
}

// The ids floe's writer emits.
const CODEC_UNCOMPRESSED = CODEC_IDS.uncompressed;
const CODEC_GZIP = CODEC_IDS.gzip;
const CODEC_ZSTD = CODEC_IDS.zstd;
const { PLAIN, RLE, RLE_DICTIONARY } = Encoding;
const { DATA_PAGE, DICTIONARY_PAGE } = PageType;

/** Scratch shared by the leaves of one read. */
export interface ChunkScratch {
  zstd: ZstdInflater;
  indices: Int32Array;
  /** Levels, dictionaries and byte arrays being decoded: dead once the file's Data are built. */
  arena: Arena;
}

interface PageHeader {
  type: number;
  uncompressed: number;
  compressed: number;
  numValues: number;
  encoding: number;
  defEncoding: number;
  repEncoding: number;
}

/** A PageHeader as floe writes it (type, sizes, then the data or dictionary page header), no closures. */
function readPageHeader(r: CompactReader): PageHeader {
  const h: PageHeader = {
    type: -1,
    uncompressed: -1,
    compressed: -1,
    numValues: -1,
    encoding: -1,
    defEncoding: RLE,
    repEncoding: RLE,
  };
  let id = 0;
  for (let type = r.field(id); type !== 0; type = r.field(id)) {
    id = r.fieldId;
    if (id <= 3) {
      r.expect(type, T.I32, 'a page header size');
      const v = r.count('a page header field');
      if (id === 1) h.type = v;
      else if (id === 2) h.uncompressed = v;
      else h.compressed = v;
    } else if ((id === 5 && h.type === DATA_PAGE) || (id === 7 && h.type === DICTIONARY_PAGE)) {
      r.expect(type, T.STRUCT, 'a page type header');
      const last = id === 5 ? 4 : 2;
      let f = 0;
      for (let ft = r.field(f); ft !== 0; ft = r.field(f)) {
        f = r.fieldId;
        if (f < 1 || f > last) notNative(`page header field ${id}.${f}`);
        r.expect(ft, T.I32, 'a page header value');
        const v = r.int();
        if (f === 1) h.numValues = v;
        else if (f === 2) h.encoding = v;
        else if (f === 3) h.defEncoding = v;
        else h.repEncoding = v;
      }
    } else notNative(`page header field ${id} (page type ${h.type})`);
  }
  if (h.uncompressed < 0 || h.compressed < 0 || h.numValues < 0) notNative('incomplete page header');
  return h;
}

const EMPTY = new Uint8Array(0);
const NO_OFFSETS = new Int32Array(0);

function bitWidth(max: number): number {
  return 32 - Math.clz32(max);
}

function u32(src: Uint8Array, at: number): number {
  return (src[at] | (src[at + 1] << 8) | (src[at + 2] << 16) | (src[at + 3] << 24)) >>> 0;
}

/** Whether src's values [from, to) (by offsets) are each UTF-8, as arrow-rs requires of Utf8 columns. */
function eachUtf8(data: Uint8Array, offsets: Int32Array, from: number, to: number): boolean {
  const start = offsets[from];
  const end = offsets[to];
  if (!isUtf8(data.subarray(start, end))) return false;
  for (let k = from + 1; k < to; k++) {
    const at = offsets[k];
    if (at < end && (data[at] & 0xc0) === 0x80) return false; // a value starting inside a character
  }
  return true;
}

/**
 * Column `c` of every row group, decoded.
 * @throws NotNativeError
 */
export function decodeLeaf(
  file: Uint8Array,
  dataEnd: number,
  groups: RowGroupMeta[],
  c: number,
  info: LeafInfo,
  scratch: ChunkScratch,
  slab: Slab,
): LeafColumn {
  let total = 0;
  let capacity = 0;
  for (const g of groups) {
    const chunk = g.columns[c];
    total += chunk.numValues;
    capacity += chunk.totalUncompressed;
  }
  if (total > 0x7fffffff) notNative('too many levels');
  const isBytes = info.kind === 'bytes';
  const leaf: LeafColumn = {
    info,
    count: 0,
    total,
    defs: info.maxDef > 0 ? scratch.arena.take(total) : null,
    reps: info.maxRep > 0 ? scratch.arena.take(total) : null,
    present: 0,
    // PLAIN values come from page bodies: they never take more than the chunks' uncompressed bytes
    // (a footer's level counts alone must not size a buffer).
    values: isBytes
      ? EMPTY
      : slab.take(
          info.kind === 'boolean' ? Math.min(total, 8 * capacity) : Math.min(total * info.width, capacity),
        ),
    offsets: isBytes ? int32s(slab, total + 1) : NO_OFFSETS,
    data: EMPTY,
  };
  const bytes = new Bytes(isBytes ? scratch.arena.take(capacity) : EMPTY, scratch.arena);
  for (const g of groups) decodeChunk(file, dataEnd, g, g.columns[c], leaf, bytes, scratch);
  if (leaf.count !== total) notNative('levels short of num_values');
  if (leaf.defs !== null && leaf.present === leaf.count) leaf.defs = null;
  if (isBytes) {
    leaf.data = slab.take(bytes.pos);
    leaf.data.set(bytes.buf.subarray(0, bytes.pos));
  }
  return leaf;
}

function samePath(a: Uint8Array[], b: Uint8Array[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.length !== y.length) return false;
    for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) return false;
  }
  return true;
}

function decodeChunk(
  file: Uint8Array,
  dataEnd: number,
  group: RowGroupMeta,
  chunk: ChunkMeta,
  leaf: LeafColumn,
  bytes: Bytes,
  scratch: ChunkScratch,
): void {
  const info = leaf.info;
  if (chunk.physical !== info.physical || !samePath(chunk.path, info.pathBytes))
    notNative('chunk type or path');
  if (chunk.codec !== CODEC_ZSTD && chunk.codec !== CODEC_GZIP && chunk.codec !== CODEC_UNCOMPRESSED) {
    notNative(`codec ${chunk.codec}`);
  }
  const dictAt = chunk.dictionaryPageOffset;
  if (dictAt !== undefined && (dictAt >= chunk.dataPageOffset || info.kind !== 'bytes'))
    notNative('dictionary offset');
  const start = dictAt ?? chunk.dataPageOffset;
  const end = start + chunk.totalCompressed;
  if (start < 4 || end > dataEnd) notNative('column chunk outside the file');
  const firstLevel = leaf.count;
  let dict: { offsets: Int32Array; data: Uint8Array } | undefined;
  let pos = start;
  const r = nativeReader(file, start, end);
  while (pos < end) {
    r.pos = pos;
    const h = readPageHeader(r);
    const bodyEnd = r.pos + h.compressed;
    if (bodyEnd > end) notNative('page body past its chunk');
    const body = inflate(file, r.pos, bodyEnd, h.uncompressed, chunk.codec, scratch);
    if (h.type === DICTIONARY_PAGE) {
      if (pos !== dictAt || dict !== undefined || h.encoding !== PLAIN) notNative('dictionary page');
      dict = readDictionary(body, h.numValues, info.utf8, scratch.arena);
    } else {
      if (leaf.count === firstLevel && pos !== chunk.dataPageOffset) notNative('first data page offset');
      if (dictAt !== undefined && dict === undefined) notNative('data page before its dictionary');
      decodeDataPage(body, h, leaf, bytes, dict, scratch);
    }
    pos = bodyEnd;
  }
  if (pos !== end) notNative('pages past their chunk');
  const levels = leaf.count - firstLevel;
  if (levels !== chunk.numValues) notNative('chunk levels differ from num_values');
  let rows = levels;
  const reps = leaf.reps;
  if (reps !== null) {
    if (levels > 0 && reps[firstLevel] !== 0) notNative('a chunk starting inside a row');
    rows = 0;
    for (let k = firstLevel; k < leaf.count; k++) if (reps[k] === 0) rows++;
  }
  if (rows !== group.numRows) notNative('chunk rows differ from the row group');
}

function inflate(
  file: Uint8Array,
  at: number,
  end: number,
  size: number,
  codec: number,
  scratch: ChunkScratch,
): Uint8Array {
  if (codec === CODEC_ZSTD) return scratch.zstd.inflate(file, at, end, size) ?? notNative('zstd page');
  if (codec === CODEC_UNCOMPRESSED) {
    if (end - at !== size) notNative('uncompressed page sizes differ');
    return file.subarray(at, end);
  }
  let out: Uint8Array;
  try {
    out = zlib.gunzipSync(file.subarray(at, end), { maxOutputLength: size + 1 });
  } catch {
    return notNative('gzip page');
  }
  return out.byteLength === size ? out : notNative('gzip page size');
}

function readDictionary(
  body: Uint8Array,
  n: number,
  utf8: boolean,
  arena: Arena,
): { offsets: Int32Array; data: Uint8Array } {
  if (n > body.byteLength >> 2) notNative('dictionary longer than its page');
  const offsetBytes = arena.take(4 * (n + 1));
  const offsets = new Int32Array(offsetBytes.buffer, offsetBytes.byteOffset, n + 1);
  offsets[0] = 0;
  const data = arena.take(body.byteLength - 4 * n);
  let pos = 0;
  let at = 0;
  for (let k = 0; k < n; k++) {
    if (pos + 4 > body.byteLength) notNative('dictionary past its page');
    const length = u32(body, pos);
    pos += 4;
    if (length > body.byteLength - pos || at + length > data.length)
      notNative('dictionary value past its page');
    data.set(body.subarray(pos, pos + length), at);
    pos += length;
    at += length;
    offsets[k + 1] = at;
  }
  if (pos !== body.byteLength) notNative('bytes after the dictionary');
  if (utf8 && !eachUtf8(data, offsets, 0, n)) notNative('dictionary not UTF-8');
  return { offsets, data };
}

function decodeDataPage(
  body: Uint8Array,
  h: PageHeader,
  leaf: LeafColumn,
  bytes: Bytes,
  dict: { offsets: Int32Array; data: Uint8Array } | undefined,
  scratch: ChunkScratch,
): void {
  const { maxDef, maxRep } = leaf.info;
  const n = h.numValues;
  const at = leaf.count;
  if (n < 1 || at + n > leaf.total) notNative('page levels');
  if (h.defEncoding !== RLE || h.repEncoding !== RLE) notNative('level encoding');
  let pos = 0;
  const end = body.byteLength;
  const section = (levels: Uint8Array, max: number): number => {
    if (pos + 4 > end) notNative('levels past the page');
    const length = u32(body, pos);
    if (length > end - pos - 4) notNative('levels past the page');
    const atMax = decodeHybrid(body, pos + 4, pos + 4 + length, bitWidth(max), n, max, levels, at);
    pos += 4 + length;
    return atMax;
  };
  if (maxRep > 0) section(leaf.reps as Uint8Array, maxRep);
  const present = maxDef > 0 ? section(leaf.defs as Uint8Array, maxDef) : n;
  leaf.count += n;
  const v = leaf.present;
  leaf.present += present;
  if (h.encoding === RLE_DICTIONARY && dict !== undefined) {
    if (pos >= end) notNative('no index width');
    const width = body[pos];
    if (scratch.indices.length < present)
      scratch.indices = new Int32Array(Math.max(present, scratch.indices.length * 2));
    const indices = scratch.indices;
    if (present > 0) decodeHybrid(body, pos + 1, end, width, present, dict.offsets.length - 2, indices, 0);
    else if (pos + 1 !== end) notNative('indices of no values');
    const { offsets: dOffsets, data: dData } = dict;
    const offsets = leaf.offsets;
    let size = 0;
    for (let k = 0; k < present; k++) size += dOffsets[indices[k] + 1] - dOffsets[indices[k]];
    bytes.ensure(size);
    const buf = bytes.buf;
    let p = bytes.pos;
    for (let k = 0; k < present; k++) {
      const i = indices[k];
      const a = dOffsets[i];
      const b = dOffsets[i + 1];
      p = copyValue(buf, p, dData, a, b);
      offsets[v + k + 1] = p;
    }
    bytes.pos = p;
    return;
  }
  if (h.encoding !== PLAIN) notNative(`encoding ${h.encoding}`);
  decodePlain(body, pos, present, v, leaf, bytes);
}

function decodePlain(
  body: Uint8Array,
  pos: number,
  present: number,
  v: number,
  leaf: LeafColumn,
  bytes: Bytes,
): void {
  const end = body.byteLength;
  const info = leaf.info;
  if (info.kind === 'bytes') {
    const offsets = leaf.offsets;
    bytes.ensure(end - pos);
    const buf = bytes.buf;
    let p = bytes.pos;
    for (let k = 0; k < present; k++) {
      if (pos + 4 > end) notNative('byte array past the page');
      const length = u32(body, pos);
      pos += 4;
      if (length > end - pos) notNative('byte array past the page');
      p = copyValue(buf, p, body, pos, pos + length);
      pos += length;
      offsets[v + k + 1] = p;
    }
    bytes.pos = p;
    if (pos !== end) notNative('bytes after the values');
    if (info.utf8 && !eachUtf8(buf, offsets, v, v + present)) notNative('values not UTF-8');
    return;
  }
  if (info.kind === 'boolean') {
    if (end - pos !== (present + 7) >> 3) notNative('boolean values size');
    const out = leaf.values;
    for (let k = 0; k < present; k++) out[v + k] = (body[pos + (k >> 3)] >> (k & 7)) & 1;
    return;
  }
  const size = present * info.width;
  if (end - pos !== size) notNative('values size');
  leaf.values.set(body.subarray(pos, end), v * info.width);
}
