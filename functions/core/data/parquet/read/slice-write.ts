/**
 * The bytes of a page slice (page-slice.ts): the picked pages of each column chunk one after the
 * other, behind the file's own schema, in a footer of one row group.
 */
import type { ByteSource } from './byte-source.js';
import * as footerFields from './file-footer.js';
import type { Thrift } from './file-footer.js';
import { CT, ThriftWriter } from '../thrift/compact-writer.js';

const { thriftField: field, thriftInt: int, thriftList: list } = footerFields;
const { thriftStructs: structs } = footerFields;

const MAGIC = new Uint8Array([0x50, 0x41, 0x52, 0x31]);

export interface PageLocation {
  offset: number;
  size: number;
  firstRow: number;
}

export interface SourceChunk {
  md: Thrift;
  /** Bytes before the first data page (the dictionary page), possibly empty. */
  prefix: { offset: number; size: number };
  hasDictionary: boolean;
  pages: PageLocation[];
  repeated: boolean;
}

/**
 * A Parquet file of the picked pages.
 * @throws RangeError when a picked byte is not in `source`
 */
export function writeSlice(
  source: ByteSource,
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
      parts.push(source.bytes(chunk.prefix.offset, chunk.prefix.size));
      at += chunk.prefix.size;
    }
    const dataStart = at;
    for (const page of pages) {
      parts.push(source.bytes(page.offset, page.size));
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
