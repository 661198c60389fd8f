/**
 * A Parquet schema written by floe's writer (parquet/write/parquet-schema.ts, primitive-leaf.ts) → the
 * Arrow fields parquet-wasm (arrow-rs) reads it as, and the nesting the assembler rebuilds from levels.
 * Only the shapes and annotations floe's writer emits are recognised, each exactly as it writes them
 * (3-level lists named list/element, maps named key_value/key/value, converted and logical type
 * together); anything else throws NotNativeError and the file goes to parquet-wasm.
 */
import * as arrow from 'apache-arrow';
import { FIELD_ID_KEY } from '../../../arrow/arrow-schema.js';
import { decimalBytes, Physical } from '../../write/primitive-leaf.js';
import { notNative } from './compact-reader.js';
import type { SchemaElement } from './file-meta.js';

/** How a leaf's PLAIN values become its Arrow values. */
export type LeafKind =
  | 'boolean'
  | 'fixed' // little-endian numbers and fixed-size binary, copied as they are
  | 'decimal32'
  | 'decimal64'
  | 'decimalFixed'
  | 'bytes';

export interface LeafInfo {
  path: string[];
  /** The path's names as UTF-8, as column chunks give them. */
  pathBytes: Uint8Array[];
  physical: number;
  kind: LeafKind;
  /** Bytes per PLAIN value (fixed, decimals); 0 for booleans and byte arrays. */
  width: number;
  /** Utf8: the bytes must be UTF-8, as arrow-rs checks. */
  utf8: boolean;
  maxDef: number;
  maxRep: number;
  type: arrow.DataType;
}

/** One node of the nesting, with the levels that place its slots (see assemble.ts). */
export interface ReadNode {
  field: arrow.Field;
  nullable: boolean;
  /** A level starts a slot of this node when its repetition ≤ rep and its definition ≥ slotDef... */
  rep: number;
  slotDef: number;
  /** ...and the slot is valid (non-null) when its definition ≥ presentDef. */
  presentDef: number;
  kind: 'leaf' | 'struct' | 'list';
  /** leaf: index into `leaves`. */
  leaf: number;
  /** struct: fields; list (and map): the one element (a map's entries struct). */
  children: ReadNode[];
  /** Index of the first leaf under this node, and one past the last. */
  firstLeaf: number;
  endLeaf: number;
}

/** The nodes from a top-level field down to one leaf, with their levels as typed arrays. */
export interface LeafPath {
  nodes: ReadNode[];
  rep: Int32Array;
  slotDef: Int32Array;
  presentDef: Int32Array;
  /** Index of each node's parent list in `nodes` when that parent is a list, else -1. */
  listParent: Int32Array;
  /** Whether a list is on the way (else every level is a slot of every node). */
  hasList: boolean;
}

export interface FloeSchema {
  fields: arrow.Field[];
  nodes: ReadNode[];
  leaves: LeafInfo[];
  /** Per leaf, its path (computed once per schema, not per file). */
  paths: LeafPath[];
  schema: arrow.Schema;
  struct: arrow.Struct;
}

const encoder = new TextEncoder();

const REQUIRED = 0;
const OPTIONAL = 1;
const REPEATED = 2;

interface Cursor {
  elements: SchemaElement[];
  at: number;
  leaves: LeafInfo[];
}

/** @throws NotNativeError for a schema floe's writer does not write */
export function toFloeSchema(elements: SchemaElement[]): FloeSchema {
  const root = elements[0];
  if (
    root === undefined ||
    root.type !== undefined ||
    root.numChildren === undefined ||
    root.numChildren < 1
  ) {
    notNative('no root group');
  }
  const cursor: Cursor = { elements, at: 1, leaves: [] };
  const nodes: ReadNode[] = [];
  for (let c = 0; c < (root.numChildren as number); c++) {
    nodes.push(readNode(cursor, { rep: 0, slotDef: 0, baseDef: 0, path: [] }));
  }
  if (cursor.at !== elements.length) notNative('schema elements left over');
  const fields = nodes.map((n) => n.field);
  const paths: LeafPath[] = [];
  const visit = (node: ReadNode, above: ReadNode[]) => {
    const here = [...above, node];
    if (node.kind === 'leaf') paths[node.leaf] = leafPath(here);
    for (const c of node.children) visit(c, here);
  };
  for (const n of nodes) visit(n, []);
  return {
    fields,
    nodes,
    leaves: cursor.leaves,
    paths,
    schema: new arrow.Schema(fields),
    struct: new arrow.Struct(fields),
  };
}

function leafPath(nodes: ReadNode[]): LeafPath {
  return {
    nodes,
    rep: Int32Array.from(nodes, (n) => n.rep),
    slotDef: Int32Array.from(nodes, (n) => n.slotDef),
    presentDef: Int32Array.from(nodes, (n) => n.presentDef),
    listParent: Int32Array.from(nodes, (_, j) => (j > 0 && nodes[j - 1].kind === 'list' ? j - 1 : -1)),
    hasList: nodes.some((n) => n.kind === 'list'),
  };
}

interface Place {
  rep: number;
  /** Definition level where this node has a slot. */
  slotDef: number;
  /** Definition level of the present parent (this node's own optional level adds to it). */
  baseDef: number;
  path: string[];
}

function next(c: Cursor): SchemaElement {
  const e = c.elements[c.at++];
  return e ?? notNative('schema ends inside a group');
}

function metadata(e: SchemaElement): Map<string, string> {
  return e.fieldId === undefined ? new Map() : new Map([[FIELD_ID_KEY, String(e.fieldId)]]);
}

function repetitionOf(e: SchemaElement): boolean {
  if (e.repetition !== REQUIRED && e.repetition !== OPTIONAL) notNative(`field '${e.name}' repetition`);
  return e.repetition === OPTIONAL;
}

function readNode(c: Cursor, at: Place): ReadNode {
  const e = next(c);
  const nullable = repetitionOf(e);
  const presentDef = at.baseDef + (nullable ? 1 : 0);
  const path = [...at.path, e.name];
  const base = { nullable, rep: at.rep, slotDef: at.slotDef, presentDef, firstLeaf: c.leaves.length };
  if (e.numChildren === undefined) {
    const leaf = leafInfo(e, path, presentDef, at.rep);
    c.leaves.push(leaf);
    const field = new arrow.Field(e.name, leaf.type, nullable, metadata(e));
    return {
      ...base,
      field,
      kind: 'leaf',
      leaf: c.leaves.length - 1,
      children: [],
      endLeaf: c.leaves.length,
    };
  }
  if (
    e.type !== undefined ||
    e.typeLength !== undefined ||
    e.scale !== undefined ||
    e.precision !== undefined
  ) {
    notNative(`group '${e.name}' with a physical type`);
  }
  if (e.numChildren < 1) notNative(`empty group '${e.name}'`);
  const logical = e.logicalType?.kind;
  if (e.convertedType === undefined && logical === undefined) {
    const children: ReadNode[] = [];
    for (let k = 0; k < e.numChildren; k++) {
      children.push(readNode(c, { rep: at.rep, slotDef: at.slotDef, baseDef: presentDef, path }));
    }
    const field = new arrow.Field(
      e.name,
      new arrow.Struct(children.map((n) => n.field)),
      nullable,
      metadata(e),
    );
    return { ...base, field, kind: 'struct', leaf: -1, children, endLeaf: c.leaves.length };
  }
  const isList = e.convertedType === 3 && logical === 3;
  const isMap = e.convertedType === 1 && logical === 2;
  if ((!isList && !isMap) || e.numChildren !== 1) notNative(`group '${e.name}' annotation`);
  const group = next(c);
  const groupName = isList ? 'list' : 'key_value';
  if (
    group.name !== groupName ||
    group.repetition !== REPEATED ||
    group.numChildren !== (isList ? 1 : 2) ||
    group.type !== undefined ||
    group.convertedType !== undefined ||
    group.logicalType !== undefined ||
    group.fieldId !== undefined ||
    group.typeLength !== undefined
  ) {
    notNative(`'${e.name}' is not a list or map as floe writes it`);
  }
  const inner: Place = {
    rep: at.rep + 1,
    slotDef: presentDef + 1,
    baseDef: presentDef + 1,
    path: [...path, groupName],
  };
  let element: ReadNode;
  if (isList) {
    element = readNode(c, inner);
    if (element.field.name !== 'element') notNative(`list '${e.name}' element name`);
  } else {
    const key = readNode(c, inner);
    const value = readNode(c, inner);
    if (key.field.name !== 'key' || key.nullable || value.field.name !== 'value') {
      notNative(`map '${e.name}' key/value`);
    }
    const entries = new arrow.Field('entries', new arrow.Struct([key.field, value.field]), false, new Map());
    element = {
      field: entries,
      nullable: false,
      rep: inner.rep,
      slotDef: inner.slotDef,
      presentDef: inner.slotDef,
      kind: 'struct',
      leaf: -1,
      children: [key, value],
      firstLeaf: key.firstLeaf,
      endLeaf: value.endLeaf,
    };
  }
  const type = isList
    ? new arrow.List(element.field)
    : new arrow.Map_(element.field as arrow.Field<arrow.Struct>, false);
  const field = new arrow.Field(e.name, type, nullable, metadata(e));
  return { ...base, field, kind: 'list', leaf: -1, children: [element], endLeaf: c.leaves.length };
}

function leafInfo(e: SchemaElement, path: string[], maxDef: number, maxRep: number): LeafInfo {
  const conv = e.convertedType;
  const logical = e.logicalType;
  const plain = conv === undefined && logical === undefined;
  const leaf = (kind: LeafKind, width: number, type: arrow.DataType, utf8 = false): LeafInfo => ({
    path,
    pathBytes: path.map((p) => encoder.encode(p)),
    physical: e.type as number,
    kind,
    width,
    utf8,
    maxDef,
    maxRep,
    type,
  });
  if (e.typeLength !== undefined && e.type !== Physical.FIXED_LEN_BYTE_ARRAY) notNative('type_length');
  if (!isDecimal(e) && (e.scale !== undefined || e.precision !== undefined))
    notNative('scale without decimal');
  switch (e.type) {
    case Physical.BOOLEAN:
      if (plain) return leaf('boolean', 0, new arrow.Bool());
      break;
    case Physical.INT32:
      if (plain) return leaf('fixed', 4, new arrow.Int32());
      if (conv === 6 && logical?.kind === 6) return leaf('fixed', 4, new arrow.DateDay());
      if (isDecimal(e) && (e.precision as number) <= 9) return leaf('decimal32', 4, decimalType(e));
      break;
    case Physical.INT64:
      if (plain) return leaf('fixed', 8, new arrow.Int64());
      if (conv === 8 && logical?.kind === 7 && logical.unit === 2 && logical.adjustedToUtc === false) {
        return leaf('fixed', 8, new arrow.Time(arrow.TimeUnit.MICROSECOND, 64));
      }
      if (conv === 10 && logical?.kind === 8 && logical.unit === 2 && logical.adjustedToUtc !== undefined) {
        const zone = logical.adjustedToUtc ? 'UTC' : null;
        return leaf('fixed', 8, new arrow.Timestamp(arrow.TimeUnit.MICROSECOND, zone));
      }
      if (isDecimal(e) && (e.precision as number) >= 10 && (e.precision as number) <= 18) {
        return leaf('decimal64', 8, decimalType(e));
      }
      break;
    case Physical.FLOAT:
      if (plain) return leaf('fixed', 4, new arrow.Float32());
      break;
    case Physical.DOUBLE:
      if (plain) return leaf('fixed', 8, new arrow.Float64());
      break;
    case Physical.BYTE_ARRAY:
      if (plain) return leaf('bytes', 0, new arrow.Binary());
      if (conv === 0 && logical?.kind === 1) return leaf('bytes', 0, new arrow.Utf8(), true);
      break;
    case Physical.FIXED_LEN_BYTE_ARRAY: {
      const length = e.typeLength ?? 0;
      if (length < 1) break;
      if (plain) return leaf('fixed', length, new arrow.FixedSizeBinary(length));
      if (conv === undefined && logical?.kind === 14 && length === 16) {
        return leaf('fixed', 16, new arrow.FixedSizeBinary(16));
      }
      const precision = e.precision as number;
      if (isDecimal(e) && precision >= 19 && length === decimalBytes(precision)) {
        return leaf('decimalFixed', length, decimalType(e));
      }
      break;
    }
  }
  return notNative(`leaf '${path.join('.')}' of type ${e.type} with annotations ${conv}/${logical?.kind}`);
}

/** DECIMAL as floe writes it: converted and logical type, scale and precision given twice and equal. */
function isDecimal(e: SchemaElement): boolean {
  const l = e.logicalType;
  return (
    e.convertedType === 5 &&
    l?.kind === 5 &&
    l.scale === e.scale &&
    l.precision === e.precision &&
    e.precision !== undefined &&
    e.scale !== undefined &&
    e.precision >= 1 &&
    e.precision <= 38 &&
    e.scale >= 0 &&
    e.scale <= e.precision
  );
}

function decimalType(e: SchemaElement): arrow.Decimal {
  return new arrow.Decimal(e.scale as number, e.precision as number, 128);
}
