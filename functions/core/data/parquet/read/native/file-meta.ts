/**
 * The parts of a Parquet footer (FileMetaData) the native reader decodes with: created_by, the schema
 * elements (kept as their raw bytes too, so a table's files, which share a schema, parse it once), row
 * counts and each column chunk's location, codec and value count. Statistics, the page index and
 * key-value metadata are skipped unread. Anything the reader does not expect (encryption, column data
 * in another file) throws NotNativeError.
 */
import type { SchemaElement as WrittenElement } from '../../write/parquet-schema.js';
import { footerSpan, startsWithPar1 } from '../../parquet-trailer.js';
import { type CompactReader, nativeReader, notNative, T } from './compact-reader.js';

export interface LogicalType {
  /** The LogicalType union member (parquet.thrift): 1 STRING, 2 MAP, 3 LIST, 5 DECIMAL, 6 DATE, ... */
  kind: number;
  scale?: number;
  precision?: number;
  adjustedToUtc?: boolean;
  /** TimeUnit member: 1 MILLIS, 2 MICROS, 3 NANOS. */
  unit?: number;
}

/** A parquet.thrift SchemaElement as read: the writer's fields, the logical type by its union member. */
export type SchemaElement = Omit<WrittenElement, 'logicalType'> & { logicalType?: LogicalType };

export interface ChunkMeta {
  physical: number;
  /** path_in_schema, each name's UTF-8 bytes (compared, not decoded). */
  path: Uint8Array[];
  codec: number;
  numValues: number;
  totalCompressed: number;
  totalUncompressed: number;
  dataPageOffset: number;
  dictionaryPageOffset?: number;
}

export interface RowGroupMeta {
  numRows: number;
  columns: ChunkMeta[];
}

export interface FileMeta {
  createdBy?: string;
  numRows: number;
  /** The schema list's bytes (its value in the footer), the key of a parsed schema. */
  schemaBytes: Uint8Array;
  rowGroups: RowGroupMeta[];
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function text(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    return notNative('a name that is not UTF-8');
  }
}

/** Where the footer is: [start, end) of `file`. @throws NotNativeError without PAR1 at both ends */
export function footerRange(file: Uint8Array): { start: number; end: number } {
  const span = footerSpan(file);
  if (typeof span === 'string') return notNative(span);
  if (!startsWithPar1(file)) notNative('no PAR1 magic');
  return span;
}

/** @throws NotNativeError */
export function readFileMeta(file: Uint8Array, start: number, end: number): FileMeta {
  const r = nativeReader(file, start, end);
  const meta: FileMeta = { numRows: -1, schemaBytes: new Uint8Array(0), rowGroups: [] };
  let id = 0;
  for (let type = r.field(id); type !== 0; type = r.field(id)) {
    id = r.fieldId;
    if (id === 2) {
      r.expect(type, T.LIST, 'schema');
      const at = r.pos;
      r.skip(T.LIST);
      meta.schemaBytes = file.subarray(at, r.pos);
    } else if (id === 3) {
      r.expect(type, T.I64, 'num_rows');
      meta.numRows = r.count('num_rows');
    } else if (id === 4) {
      r.expect(type, T.LIST, 'row_groups');
      const { type: element, size } = r.list();
      r.expect(element, T.STRUCT, 'a row group');
      for (let g = 0; g < size; g++) meta.rowGroups.push(readRowGroup(r));
    } else if (id === 6) {
      r.expect(type, T.BINARY, 'created_by');
      meta.createdBy = text(r.binary());
    } else if (id === 1 || id === 5 || id === 7) r.skip(type);
    else notNative(`FileMetaData field ${id}`);
  }
  if (meta.numRows < 0) notNative('no num_rows');
  return meta;
}

function readRowGroup(r: CompactReader): RowGroupMeta {
  const group: RowGroupMeta = { numRows: -1, columns: [] };
  let id = 0;
  for (let type = r.field(id); type !== 0; type = r.field(id)) {
    id = r.fieldId;
    if (id === 1) {
      r.expect(type, T.LIST, 'columns');
      const { type: element, size } = r.list();
      r.expect(element, T.STRUCT, 'a column chunk');
      for (let c = 0; c < size; c++) group.columns.push(readColumnChunk(r));
    } else if (id === 3) {
      r.expect(type, T.I64, 'num_rows');
      group.numRows = r.count('a row group num_rows');
    } else if (id >= 1 && id <= 7) r.skip(type);
    else notNative(`RowGroup field ${id}`);
  }
  if (group.numRows < 0) notNative('a row group without num_rows');
  return group;
}

function readColumnChunk(r: CompactReader): ChunkMeta {
  let meta: ChunkMeta | undefined;
  let id = 0;
  for (let type = r.field(id); type !== 0; type = r.field(id)) {
    id = r.fieldId;
    if (id === 3) {
      r.expect(type, T.STRUCT, 'meta_data');
      meta = readColumnMeta(r);
    } else if (id === 2 || (id >= 4 && id <= 7)) r.skip(type);
    // 1: the chunk's data is in another file; 8, 9: encrypted.
    else notNative(`ColumnChunk field ${id}`);
  }
  return meta ?? notNative('a column chunk without meta_data');
}

function readColumnMeta(r: CompactReader): ChunkMeta {
  const m: ChunkMeta = {
    physical: -1,
    path: [],
    codec: -1,
    numValues: -1,
    totalCompressed: -1,
    totalUncompressed: -1,
    dataPageOffset: -1,
  };
  let id = 0;
  for (let type = r.field(id); type !== 0; type = r.field(id)) {
    id = r.fieldId;
    switch (id) {
      case 1:
        r.expect(type, T.I32, 'type');
        m.physical = r.int();
        break;
      case 3: {
        r.expect(type, T.LIST, 'path_in_schema');
        const { type: element, size } = r.list();
        r.expect(element, T.BINARY, 'a path part');
        for (let k = 0; k < size; k++) m.path.push(r.binary());
        break;
      }
      case 4:
        r.expect(type, T.I32, 'codec');
        m.codec = r.int();
        break;
      case 5:
        r.expect(type, T.I64, 'num_values');
        m.numValues = r.count('num_values');
        break;
      case 6:
        r.expect(type, T.I64, 'total_uncompressed_size');
        m.totalUncompressed = r.count('total_uncompressed_size');
        break;
      case 7:
        r.expect(type, T.I64, 'total_compressed_size');
        m.totalCompressed = r.count('total_compressed_size');
        break;
      case 9:
        r.expect(type, T.I64, 'data_page_offset');
        m.dataPageOffset = r.count('data_page_offset');
        break;
      case 10:
        notNative('an index page');
        break;
      case 11:
        r.expect(type, T.I64, 'dictionary_page_offset');
        m.dictionaryPageOffset = r.count('dictionary_page_offset');
        break;
      default:
        r.skip(type); // encodings, statistics, encoding stats, bloom filter, size statistics
    }
  }
  if (m.physical < 0 || m.codec < 0 || m.numValues < 0 || m.totalCompressed < 0 || m.dataPageOffset < 0) {
    notNative('column metadata without its required fields');
  }
  return m;
}

/** The schema elements of the schema list's bytes (`FileMeta.schemaBytes`). @throws NotNativeError */
export function readSchemaElements(bytes: Uint8Array): SchemaElement[] {
  const r = nativeReader(bytes, 0, bytes.byteLength);
  const { type, size } = r.list();
  r.expect(type, T.STRUCT, 'a schema element');
  const out: SchemaElement[] = [];
  for (let k = 0; k < size; k++) out.push(readSchemaElement(r));
  if (r.pos !== r.end) notNative('bytes after the schema');
  return out;
}

function readSchemaElement(r: CompactReader): SchemaElement {
  const e: SchemaElement = { name: '' };
  let named = false;
  const i32 = (type: number, what: string) => {
    r.expect(type, T.I32, what);
    return r.int();
  };
  r.struct((id, type) => {
    switch (id) {
      case 1:
        e.type = i32(type, 'type');
        return true;
      case 2:
        e.typeLength = i32(type, 'type_length');
        return true;
      case 3:
        e.repetition = i32(type, 'repetition_type');
        return true;
      case 4:
        r.expect(type, T.BINARY, 'name');
        e.name = text(r.binary());
        named = true;
        return true;
      case 5:
        e.numChildren = i32(type, 'num_children');
        return true;
      case 6:
        e.convertedType = i32(type, 'converted_type');
        return true;
      case 7:
        e.scale = i32(type, 'scale');
        return true;
      case 8:
        e.precision = i32(type, 'precision');
        return true;
      case 9:
        e.fieldId = i32(type, 'field_id');
        return true;
      case 10:
        r.expect(type, T.STRUCT, 'logicalType');
        e.logicalType = readLogicalType(r);
        return true;
      default:
        return notNative(`SchemaElement field ${id}`);
    }
  });
  if (!named) notNative('a schema element without a name');
  return e;
}

function readLogicalType(r: CompactReader): LogicalType {
  let out: LogicalType | undefined;
  r.struct((kind, type) => {
    if (out !== undefined) notNative('a LogicalType with two members');
    r.expect(type, T.STRUCT, 'a LogicalType member');
    const t: LogicalType = { kind };
    r.struct((id, ftype) => {
      if (kind === 5 && (id === 1 || id === 2)) {
        r.expect(ftype, T.I32, 'decimal parameters');
        if (id === 1) t.scale = r.int();
        else t.precision = r.int();
        return true;
      }
      if ((kind === 7 || kind === 8) && id === 1) {
        t.adjustedToUtc = r.bool(ftype);
        return true;
      }
      if ((kind === 7 || kind === 8) && id === 2) {
        r.expect(ftype, T.STRUCT, 'a time unit');
        r.struct((unit, utype) => {
          r.expect(utype, T.STRUCT, 'a time unit member');
          if (t.unit !== undefined) notNative('two time units');
          t.unit = unit;
          return false;
        });
        return true;
      }
      return notNative(`LogicalType ${kind} field ${id}`);
    });
    out = t;
    return true;
  });
  return out ?? notNative('an empty LogicalType');
}
