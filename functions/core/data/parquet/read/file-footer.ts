/**
 * The Thrift footer of a Parquet file (FileMetaData), parsed once per opened file with hyparquet's
 * compact-protocol reader, which knows no schema: fields are `field_<id>` of parquet.thrift. The reader
 * takes its column names, row counts and field ids from it, and the scan its statistics and page index
 * (scan/prune-row-spans.ts), so a file's footer is read once for both.
 */
import { deserializeTCompactProtocol } from 'hyparquet/src/thrift.js';
import type { ThriftObject, ThriftType } from 'hyparquet/src/types.js';
import { footerSpan } from '../parquet-trailer.js';

export type Thrift = ThriftObject;

/** Typed reads of compact-protocol fields (wrong shapes read as absent). Never throw. */
export function thriftField(o: Thrift | undefined, id: number): ThriftType | undefined {
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
export function thriftList(o: Thrift | undefined, id: number): ThriftType[] {
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
 * @throws RangeError / Error when the bytes hold no readable footer
 */
export function readFileFooter(file: Uint8Array): Thrift {
  const span = footerSpan(file);
  if (typeof span === 'string') throw new RangeError(span);
  return deserializeTCompactProtocol({
    view: new DataView(file.buffer, file.byteOffset + span.start, span.end - span.start),
    offset: 0,
  });
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
