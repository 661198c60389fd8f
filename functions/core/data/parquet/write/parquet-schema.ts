/**
 * Iceberg struct type → the Parquet schema Iceberg Java writes (TypeToMessageType): flat schema
 * elements for the footer, one descriptor per leaf column, and a tree of the nesting that levels.ts
 * walks alongside the Arrow data. Field ids come from the Iceberg type; they equal the Arrow
 * `PARQUET:field_id` metadata arrow-schema.ts writes for the same type.
 */
import type { IcebergType, StructType } from '../../../spec/types.js';
import { Converted, primitiveLeaf } from './primitive-leaf.js';

const Repetition = { REQUIRED: 0, OPTIONAL: 1, REPEATED: 2 } as const;

export type LogicalType =
  | { kind: 'STRING' | 'MAP' | 'LIST' | 'DATE' | 'UUID' }
  | { kind: 'DECIMAL'; scale: number; precision: number }
  | { kind: 'TIME' | 'TIMESTAMP'; adjustedToUtc: boolean };

/** One parquet.thrift `SchemaElement`. */
export interface SchemaElement {
  name: string;
  type?: number;
  typeLength?: number;
  repetition?: number;
  numChildren?: number;
  convertedType?: number;
  scale?: number;
  precision?: number;
  fieldId?: number;
  logicalType?: LogicalType;
}

/**
 * How a leaf's values sit in its Arrow data: typed-array layout, and for decimals which part of the
 * 16-byte Decimal128 value is written.
 */
export type ValueKind =
  | 'boolean'
  | 'int32'
  | 'int64'
  | 'float'
  | 'double'
  | 'decimal32'
  | 'decimal64'
  | 'decimalFixed'
  | 'bytes'
  | 'fixed';

export interface LeafColumn {
  /** Parquet path_in_schema (names, including the synthetic `list` / `key_value` groups). */
  path: string[];
  /** Dotted Iceberg-style path for error messages. */
  name: string;
  id: number;
  physical: number;
  kind: ValueKind;
  /** Bytes per value for FIXED_LEN_BYTE_ARRAY (fixed, uuid, wide decimals); 0 otherwise. */
  typeLength: number;
  maxDef: number;
  maxRep: number;
  /** STRING-annotated BYTE_ARRAY: min/max statistics in unsigned byte order. */
  isString: boolean;
}

/** The nesting of one Iceberg field, as levels.ts walks it. */
export type ShapeNode = { name: string; optional: boolean } & (
  | { kind: 'leaf'; leaf: number }
  | { kind: 'struct'; children: ShapeNode[] }
  | { kind: 'list'; element: ShapeNode }
  | { kind: 'map'; key: ShapeNode; value: ShapeNode }
);

export interface ParquetSchema {
  elements: SchemaElement[];
  /** One node per top-level field, in schema order. */
  fields: ShapeNode[];
  /** Leaf columns in schema (depth-first) order: the order of column chunks in a row group. */
  leaves: LeafColumn[];
}

const cache = new WeakMap<StructType, ParquetSchema>();

/** @throws ValidationError for a malformed or unsupported type */
export function toParquetSchema(schema: StructType): ParquetSchema {
  const cached = cache.get(schema);
  if (cached) return cached;
  const elements: SchemaElement[] = [{ name: 'table', numChildren: schema.fields.length }];
  const leaves: LeafColumn[] = [];
  const ctx: Context = { elements, leaves };
  const fields = schema.fields.map((f) =>
    addField(ctx, f.name, f.id, !f.required, f.type, { path: [], names: [], def: 0, rep: 0 }),
  );
  const result = { elements, fields, leaves };
  cache.set(schema, result);
  return result;
}

interface Context {
  elements: SchemaElement[];
  leaves: LeafColumn[];
}

interface Position {
  path: string[];
  names: string[];
  def: number;
  rep: number;
}

function addField(
  ctx: Context,
  name: string,
  id: number | undefined,
  optional: boolean,
  type: IcebergType,
  at: Position,
): ShapeNode {
  const repetition = optional ? Repetition.OPTIONAL : Repetition.REQUIRED;
  const here: Position = {
    path: [...at.path, name],
    names: [...at.names, name],
    def: at.def + (optional ? 1 : 0),
    rep: at.rep,
  };
  if (typeof type === 'string') {
    const element: SchemaElement = { name, repetition, fieldId: id };
    const leaf = primitiveLeaf(type, element, here, id);
    ctx.elements.push(element);
    ctx.leaves.push(leaf);
    return { kind: 'leaf', name: leaf.name, optional, leaf: ctx.leaves.length - 1 };
  }
  if (type.type === 'struct') {
    ctx.elements.push({ name, repetition, numChildren: type.fields.length, fieldId: id });
    const children = type.fields.map((f) => addField(ctx, f.name, f.id, !f.required, f.type, here));
    return { kind: 'struct', name: here.names.join('.'), optional, children };
  }
  const annotation = type.type === 'list' ? 'LIST' : 'MAP';
  ctx.elements.push({
    name,
    repetition,
    numChildren: 1,
    convertedType: Converted[annotation],
    logicalType: { kind: annotation },
    fieldId: id,
  });
  const group = type.type === 'list' ? 'list' : 'key_value';
  ctx.elements.push({
    name: group,
    repetition: Repetition.REPEATED,
    numChildren: type.type === 'list' ? 1 : 2,
  });
  // Element, key and value names in messages follow build-record-batch.ts: `tags.element`, `attrs.key`.
  const inner: Position = {
    path: [...here.path, group],
    names: here.names,
    def: here.def + 1,
    rep: here.rep + 1,
  };
  if (type.type === 'list') {
    const element = addField(
      ctx,
      'element',
      type['element-id'],
      !type['element-required'],
      type.element,
      inner,
    );
    return { kind: 'list', name: here.names.join('.'), optional, element };
  }
  const key = addField(ctx, 'key', type['key-id'], false, type.key, inner);
  const value = addField(ctx, 'value', type['value-id'], !type['value-required'], type.value, inner);
  return { kind: 'map', name: here.names.join('.'), optional, key, value };
}
