/**
 * The Thrift footer of a Parquet file (FileMetaData), parsed once per opened file into schema-less
 * objects (parquet/thrift/compact-reader.ts): fields are `field_<id>` of parquet.thrift. The reader
 * takes its column names, row counts and field ids from it, and the scan its statistics and page index
 * (scan/prune-row-spans.ts), so a file's footer is read once for both.
 */
import { footerSpan } from '../parquet-trailer.js';
import {
  CompactReader,
  decodeThrift,
  type ThriftStruct,
  type ThriftValue,
} from '../thrift/compact-reader.js';

export type Thrift = ThriftStruct;

/** Typed reads of compact-protocol fields (wrong shapes read as absent). Never throw. */
export function thriftField(o: Thrift | undefined, id: number): ThriftValue | undefined {
  return o?.[`field_${id}`];
}
export function thriftInt(o: Thrift | undefined, id: number): number | undefined {
  const v = thriftField(o, id);
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined;
}
export function thriftStruct(o: Thrift | undefined, id: number): Thrift | undefined {
  const v = thriftField(o, id);
  return typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array) ? v : undefined;
}
export function thriftList(o: Thrift | undefined, id: number): ThriftValue[] {
  const v = thriftField(o, id);
  return Array.isArray(v) ? v : [];
}
export function thriftStructs(o: Thrift | undefined, id: number): Thrift[] {
  return thriftList(o, id).filter(
    (v): v is Thrift => typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array),
  );
}

/**
 * The FileMetaData of a whole Parquet file's bytes.
 * @throws RangeError when the file has no Parquet trailer; ValidationError when its footer is malformed
 */
export function readFileFooter(file: Uint8Array): Thrift {
  const span = footerSpan(file);
  if (typeof span === 'string') throw new RangeError(span);
  return decodeThrift(file, span.start, span.end);
}

/**
 * The raw value bytes of top-level field `id` of the FileMetaData at the end of `file`, found by
 * skipping the fields before it; undefined when absent. Bytes copied this way into another footer
 * keep the Thrift types of their fields, which re-encoding decoded objects would lose (page-slice.ts
 * keeps a file's schema so).
 * @throws ValidationError on a truncated or malformed footer
 */
export function rawFooterField(file: Uint8Array, id: number): Uint8Array | undefined {
  const length = new DataView(file.buffer, file.byteOffset, file.byteLength).getUint32(
    file.byteLength - 8,
    true,
  );
  const r = new CompactReader(file, file.byteLength - 8 - length, file.byteLength - 8);
  let fid = 0;
  while (r.pos < r.end) {
    const type = r.field(fid);
    if (type === 0) return undefined;
    fid = r.fieldId;
    const start = r.pos;
    r.skip(type);
    if (fid === id) return file.subarray(start, r.pos);
  }
  return undefined;
}

/** What the reader needs from a footer. */
export interface FooterLayout {
  rowCount: number;
  /** Rows of each row group, in order. */
  groupRows: number[];
  /** Top-level field id → the column's name in the file. */
  topLevelById: Map<number, string>;
  /** Top-level columns in the file, with a field id or without. */
  topLevelCount: number;
  /** Whether any field (at any depth) carries a field id. */
  hasFieldIds: boolean;
}

const utf8 = new TextDecoder();

/** Never throws: missing parts read as empty. */
export function footerLayout(footer: Thrift): FooterLayout {
  const elements = thriftStructs(footer, 2);
  const topLevelById = new Map<number, string>();
  let hasFieldIds = false;
  for (const e of elements) if (thriftInt(e, 9) !== undefined) hasFieldIds = true;
  // Walk the flattened schema tree: element 0 is the root; a group's children follow it, depth first.
  let at = 1;
  const skip = (): void => {
    const e = elements[at++];
    const children = thriftInt(e, 5) ?? 0;
    for (let c = 0; c < children && at < elements.length; c++) skip();
  };
  const rootChildren = thriftInt(elements[0], 5) ?? 0;
  for (let c = 0; c < rootChildren && at < elements.length; c++) {
    const e = elements[at];
    const id = thriftInt(e, 9);
    const name = thriftField(e, 4);
    if (id !== undefined && name instanceof Uint8Array) topLevelById.set(id, utf8.decode(name));
    skip();
  }
  const groupRows = thriftStructs(footer, 4).map((g) => thriftInt(g, 3) ?? 0);
  return {
    rowCount: thriftInt(footer, 3) ?? 0,
    groupRows,
    topLevelById,
    topLevelCount: rootChildren,
    hasFieldIds,
  };
}
