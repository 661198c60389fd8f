/**
 * The Parquet footer (parquet.thrift FileMetaData) in the compact protocol: schema elements, row groups
 * with their column chunk metadata and statistics, key-value metadata, created_by and the column
 * orders that make min_value/max_value meaningful. Field choices follow parquet-mr as Iceberg Java
 * runs it: ColumnChunk.file_offset 0 (no metadata outside the footer), deprecated min/max only for
 * signed orders, one TypeDefinedOrder per leaf.
 */
import type { FooterMetrics } from './footer-metrics.js';
import type { ChunkStats } from './chunk-stats.js';
import type { LogicalType, SchemaElement } from './parquet-schema.js';
import { CT, ThriftWriter } from '../thrift/compact-writer.js';

/**
 * Parsed by readers as application `floe`, version 0.1.0 (parquet-mr's VersionParser format): not
 * parquet-mr or parquet-cpp, so no reader applies the workarounds meant for their old statistics bugs.
 */
export const CREATED_BY = 'floe version 0.1.0';

export interface PageEncodingCount {
  pageType: number;
  encoding: number;
  count: number;
}

export interface ColumnChunkMeta {
  physical: number;
  encodings: number[];
  path: string[];
  codec: number;
  numValues: number;
  totalUncompressed: number;
  totalCompressed: number;
  dataPageOffset: number;
  dictionaryPageOffset?: number;
  stats: ChunkStats;
  encodingStats: PageEncodingCount[];
  /** Where the chunk's page index parts are (set once they are written, after the row groups). */
  columnIndex?: IndexLocation;
  offsetIndex?: IndexLocation;
}

export interface IndexLocation {
  offset: number;
  length: number;
}

export interface RowGroupMeta {
  columns: ColumnChunkMeta[];
  numRows: number;
  fileOffset: number;
  totalByteSize: number;
  totalCompressed: number;
}

export interface FileMeta {
  schema: SchemaElement[];
  numRows: number;
  rowGroups: RowGroupMeta[];
  keyValueMetadata: Map<string, string>;
  leafCount: number;
}

/** The serialised FileMetaData (without the length and magic that follow it). */
export function encodeFooter(meta: FileMeta): Uint8Array {
  const w = new ThriftWriter(4096);
  w.i32(1, 1);
  w.beginList(2, CT.STRUCT, meta.schema.length);
  for (const element of meta.schema) writeSchemaElement(w, element);
  w.i64(3, meta.numRows);
  w.beginList(4, CT.STRUCT, meta.rowGroups.length);
  meta.rowGroups.forEach((group, ordinal) => {
    writeRowGroup(w, group, ordinal);
  });
  if (meta.keyValueMetadata.size > 0) {
    w.beginList(5, CT.STRUCT, meta.keyValueMetadata.size);
    for (const [key, value] of meta.keyValueMetadata) {
      w.beginListStruct();
      w.string(1, key);
      w.string(2, value);
      w.endStruct();
    }
  }
  w.string(6, CREATED_BY);
  w.beginList(7, CT.STRUCT, meta.leafCount);
  for (let i = 0; i < meta.leafCount; i++) {
    w.beginListStruct();
    w.beginStruct(1); // TYPE_ORDER: TypeDefinedOrder {}
    w.endStruct();
    w.endStruct();
  }
  w.endStruct();
  return w.view().slice();
}

function writeSchemaElement(w: ThriftWriter, e: SchemaElement): void {
  w.beginListStruct();
  if (e.type !== undefined) w.i32(1, e.type);
  if (e.typeLength !== undefined) w.i32(2, e.typeLength);
  if (e.repetition !== undefined) w.i32(3, e.repetition);
  w.string(4, e.name);
  if (e.numChildren !== undefined) w.i32(5, e.numChildren);
  if (e.convertedType !== undefined) w.i32(6, e.convertedType);
  if (e.scale !== undefined) w.i32(7, e.scale);
  if (e.precision !== undefined) w.i32(8, e.precision);
  if (e.fieldId !== undefined) w.i32(9, e.fieldId);
  if (e.logicalType !== undefined) writeLogicalType(w, e.logicalType);
  w.endStruct();
}

/** LogicalType union member ids (parquet.thrift). */
const LOGICAL_IDS = {
  STRING: 1,
  MAP: 2,
  LIST: 3,
  DECIMAL: 5,
  DATE: 6,
  TIME: 7,
  TIMESTAMP: 8,
  UUID: 14,
} as const;

function writeLogicalType(w: ThriftWriter, t: LogicalType): void {
  w.beginStruct(10);
  w.beginStruct(LOGICAL_IDS[t.kind]);
  if (t.kind === 'DECIMAL') {
    w.i32(1, t.scale);
    w.i32(2, t.precision);
  } else if (t.kind === 'TIME' || t.kind === 'TIMESTAMP') {
    w.bool(1, t.adjustedToUtc);
    w.beginStruct(2); // unit: TimeUnit union
    w.beginStruct(2); // MICROS: MicroSeconds {}
    w.endStruct();
    w.endStruct();
  }
  w.endStruct();
  w.endStruct();
}

function writeRowGroup(w: ThriftWriter, g: RowGroupMeta, ordinal: number): void {
  w.beginListStruct();
  w.beginList(1, CT.STRUCT, g.columns.length);
  for (const c of g.columns) {
    w.beginListStruct();
    w.i64(2, 0);
    w.beginStruct(3);
    writeColumnMeta(w, c);
    w.endStruct();
    if (c.offsetIndex) {
      w.i64(4, c.offsetIndex.offset);
      w.i32(5, c.offsetIndex.length);
    }
    if (c.columnIndex) {
      w.i64(6, c.columnIndex.offset);
      w.i32(7, c.columnIndex.length);
    }
    w.endStruct();
  }
  w.i64(2, g.totalByteSize);
  w.i64(3, g.numRows);
  w.i64(5, g.fileOffset);
  w.i64(6, g.totalCompressed);
  if (ordinal <= 0x7fff) w.i16(7, ordinal); // an i16: past that, leave it out rather than wrap
  w.endStruct();
}

function writeColumnMeta(w: ThriftWriter, c: ColumnChunkMeta): void {
  w.i32(1, c.physical);
  w.beginList(2, CT.I32, c.encodings.length);
  for (const e of c.encodings) w.listI32(e);
  w.beginList(3, CT.BINARY, c.path.length);
  for (const p of c.path) w.listString(p);
  w.i32(4, c.codec);
  w.i64(5, c.numValues);
  w.i64(6, c.totalUncompressed);
  w.i64(7, c.totalCompressed);
  w.i64(9, c.dataPageOffset);
  if (c.dictionaryPageOffset !== undefined) w.i64(11, c.dictionaryPageOffset);
  const s = c.stats;
  w.beginStruct(12);
  if (s.min && s.max && s.signed) {
    w.binary(1, s.max);
    w.binary(2, s.min);
  }
  w.i64(3, s.nullCount);
  if (s.min && s.max) {
    w.binary(5, s.max);
    w.binary(6, s.min);
  }
  w.endStruct();
  w.beginList(13, CT.STRUCT, c.encodingStats.length);
  for (const e of c.encodingStats) {
    w.beginListStruct();
    w.i32(1, e.pageType);
    w.i32(2, e.encoding);
    w.i32(3, e.count);
    w.endStruct();
  }
}

/**
 * The metrics readFooterMetrics would read back from this footer, taken from the row groups as written:
 * compressed bytes, levels (num_values) and null counts per leaf field id, row group start offsets.
 */
export function footerMetrics(
  leafIds: number[],
  rowGroups: RowGroupMeta[],
  numRows: number,
  footerLength: number,
): FooterMetrics {
  const columnSizes = new Map<number, bigint>();
  const valueCounts = new Map<number, bigint>();
  const nullValueCounts = new Map<number, bigint>();
  const add = (map: Map<number, bigint>, id: number, n: number) =>
    map.set(id, (map.get(id) ?? 0n) + BigInt(n));
  for (const group of rowGroups) {
    group.columns.forEach((c, k) => {
      const id = leafIds[k];
      add(columnSizes, id, c.totalCompressed);
      add(valueCounts, id, c.numValues);
      add(nullValueCounts, id, c.stats.nullCount);
    });
  }
  return {
    rowCount: BigInt(numRows),
    columnSizes,
    valueCounts,
    nullValueCounts,
    splitOffsets: rowGroups.map((g) => BigInt(g.fileOffset)),
    overheadBytes: footerLength + 12,
  };
}
