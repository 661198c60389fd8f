/**
 * Reading what the TypeScript Parquet writer produced with readers no one here wrote: hyparquet (raw
 * physical values, converted independently of floe's reader) and DuckDB (in-process), plus the batch
 * builder the writer is fed from.
 */
import { deserializeTCompactProtocol, readRleBitPackedHybrid } from '../../../support/hyparquet-internals.js';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import {
  DuckDBUUIDValue,
  type DuckDBListValue,
  type DuckDBMapValue,
  type DuckDBStructValue,
  type DuckDBValue,
} from '@duckdb/node-api';
import type * as arrow from 'apache-arrow';
import { type FileMetaData, parquetMetadata, parquetReadObjects, type SchemaElement } from 'hyparquet';
import { toArrowSchema } from '../../../../functions/core/data/arrow/arrow-schema.js';
import { buildRecordBatch } from '../../../../functions/core/data/arrow/build-record-batch.js';
import { decimalParams } from '../../../../functions/core/spec/conversions.js';
import type { IcebergType, Row, StructType, Value } from '../../../../functions/core/spec/types.js';
import { afterAll, beforeAll } from 'vitest';
import { type DuckDB, fromDuckDB, openDuckDB } from '../parquet-test-helpers.js';

export function batchOf(schema: StructType, rows: Row[]): arrow.RecordBatch {
  return buildRecordBatch(schema, toArrowSchema(schema), rows, 0, rows.length, new Map());
}

/** hyparquet has no zstd or gzip of its own: Node's zlib decompresses. */
export const compressors = {
  ZSTD: (input: Uint8Array) => new Uint8Array(zlib.zstdDecompressSync(input)),
  GZIP: (input: Uint8Array) => new Uint8Array(zlib.gunzipSync(input)),
};

function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

export function metadataOf(bytes: Uint8Array): FileMetaData {
  return parquetMetadata(arrayBufferOf(bytes));
}

/**
 * Rows as hyparquet decodes the physical values, with every leaf annotation but STRING removed (so
 * decimals, dates and timestamps arrive exact), then turned into floe's Value representation here.
 */
export async function hyparquetRows(bytes: Uint8Array, schema: StructType): Promise<Row[]> {
  const metadata = metadataOf(bytes);
  const raw: FileMetaData = {
    ...metadata,
    schema: metadata.schema.map((e: SchemaElement) =>
      e.num_children || e.converted_type === 'UTF8'
        ? e
        : { ...e, converted_type: undefined, logical_type: undefined },
    ),
  };
  const rows = await parquetReadObjects({
    file: arrayBufferOf(bytes),
    metadata: raw,
    compressors,
    utf8: false,
  });
  return rows.map((r) =>
    Object.fromEntries(schema.fields.map((f) => [f.name, fromHyparquet(f.type, r[f.name])])),
  );
}

/** Rows as hyparquet reads them with the annotations applied (its own interpretation). */
export async function hyparquetAnnotated(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  return parquetReadObjects({ file: arrayBufferOf(bytes), compressors });
}

function fromHyparquet(type: IcebergType, v: unknown): Value {
  if (v === null || v === undefined) return null;
  if (typeof type !== 'string') {
    if (type.type === 'struct') {
      const o = v as Record<string, unknown>;
      return Object.fromEntries(type.fields.map((f) => [f.name, fromHyparquet(f.type, o[f.name])]));
    }
    if (type.type === 'list') return (v as unknown[]).map((e) => fromHyparquet(type.element, e));
    // hyparquet assembles maps into objects: keys come back as strings.
    return new Map(
      Object.entries(v as Record<string, unknown>).map(([k, x]) => [
        mapKey(type.key, k),
        fromHyparquet(type.value, x),
      ]),
    );
  }
  if (type === 'uuid') return uuidString(v as Uint8Array);
  if (decimalParams(type)) {
    if (typeof v === 'number') return BigInt(v);
    if (typeof v === 'bigint') return v;
    return twosComplement(v as Uint8Array);
  }
  if (type === 'string' && v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  return v as Value;
}

function mapKey(type: IcebergType, key: string): Value {
  if (type === 'int') return Number(key);
  if (type === 'long') return BigInt(key);
  return key;
}

export function uuidString(bytes: Uint8Array): string {
  const h = Buffer.from(bytes).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function twosComplement(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return bytes.length > 0 && bytes[0] & 0x80 ? v - (1n << BigInt(bytes.length * 8)) : v;
}

/** A DuckDB value → floe's Value; uuid columns (UUID logical type) come back as DuckDB UUIDs. */
export function fromDuck(type: IcebergType, v: DuckDBValue): Value {
  if (v === null) return null;
  if (typeof type !== 'string') {
    if (type.type === 'struct') {
      const entries = (v as DuckDBStructValue).entries;
      return Object.fromEntries(type.fields.map((f) => [f.name, fromDuck(f.type, entries[f.name])]));
    }
    if (type.type === 'list') return (v as DuckDBListValue).items.map((e) => fromDuck(type.element, e));
    return new Map(
      (v as DuckDBMapValue).entries.map((e) => [fromDuck(type.key, e.key), fromDuck(type.value, e.value)]),
    );
  }
  if (v instanceof DuckDBUUIDValue) return v.toString();
  return fromDuckDB(type, v);
}

/** A temp directory for Parquet files DuckDB reads; remove it with `cleanup`. */
export async function tempDir(): Promise<{
  file: (name: string, bytes: Uint8Array) => Promise<string>;
  cleanup: () => Promise<void>;
}> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-pq-'));
  return {
    file: async (name, bytes) => {
      const p = path.join(dir, name);
      await fs.writeFile(p, bytes);
      return p;
    },
    cleanup: () => fs.rm(dir, { recursive: true, force: true }),
  };
}

export interface PageInfo {
  /** File offset of the page header. */
  offset: number;
  /** 0 data page, 2 dictionary page. */
  type: number;
  numValues: number;
  encoding: number;
  uncompressedSize: number;
  /** First repetition level of a data page (0 = the page starts a row), when the column repeats. */
  firstRep?: number;
}

/**
 * The pages of one column chunk, walked from its first page through the page headers (parsed with
 * hyparquet's Thrift reader), decompressing data pages to read their first repetition level.
 */
export function columnPages(bytes: Uint8Array, rowGroup: number, column: number, maxRep: number): PageInfo[] {
  const md = metadataOf(bytes);
  const meta = md.row_groups[rowGroup].columns[column].meta_data;
  if (!meta) throw new Error('no column metadata');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start = Number(meta.dictionary_page_offset ?? meta.data_page_offset);
  const end = start + Number(meta.total_compressed_size);
  const pages: PageInfo[] = [];
  const reader = { view, offset: start };
  while (reader.offset < end) {
    const offset = reader.offset;
    const h = deserializeTCompactProtocol(reader);
    const body = bytes.subarray(reader.offset, reader.offset + h.field_3);
    reader.offset += h.field_3;
    const header = h.field_1 === 2 ? h.field_7 : h.field_5;
    const page: PageInfo = {
      offset,
      type: h.field_1,
      numValues: header.field_1,
      encoding: header.field_2,
      uncompressedSize: h.field_2,
    };
    if (h.field_1 === 0 && maxRep > 0) {
      const plain = decompress(meta.codec, body);
      const levels = [0];
      readRleBitPackedHybrid(
        { view: new DataView(plain.buffer, plain.byteOffset, plain.byteLength), offset: 0 },
        32 - Math.clz32(maxRep),
        levels,
      );
      page.firstRep = levels[0];
    }
    pages.push(page);
  }
  return pages;
}

function decompress(codec: string, body: Uint8Array): Uint8Array {
  if (codec === 'ZSTD') return compressors.ZSTD(body);
  if (codec === 'GZIP') return compressors.GZIP(body);
  return body;
}

/**
 * DuckDB and a temporary directory for the tests of the describe block this is called in: opened
 * before them, closed and removed after.
 */
export function duckAndDir(): { duck: DuckDB; dir: Awaited<ReturnType<typeof tempDir>> } {
  const env = {} as { duck: DuckDB; dir: Awaited<ReturnType<typeof tempDir>> };
  beforeAll(async () => {
    env.duck = await openDuckDB();
    env.dir = await tempDir();
  });
  afterAll(async () => {
    env.duck?.close();
    await env.dir?.cleanup();
  });
  return env;
}
