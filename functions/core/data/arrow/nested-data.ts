/**
 * What the two batch builders share — from row objects (build-record-batch.ts) and from gathered
 * columns (gathered-rows.ts): the column target of a struct field or list element, and the Arrow Data
 * of a struct, a list and the batch around the top-level columns.
 */
import * as arrow from 'apache-arrow';
import type { ListType, StructField } from '../../spec/types.js';
import type { ColumnTarget, ValidityBuilder } from './column-target.js';

/** A struct field's target (a top-level column without `parent`): bounds kept as the parent keeps them. */
export function fieldTarget(field: StructField, parent?: ColumnTarget): ColumnTarget {
  return {
    id: field.id,
    path: parent ? `${parent.path}.${field.name}` : field.name,
    required: field.required,
    bounded: parent ? parent.bounded : true,
  };
}

/** A list's element target: no bounds inside lists, as Iceberg Java keeps none. */
export function elementTarget(list: ListType, parent: ColumnTarget): ColumnTarget {
  return {
    id: list['element-id'],
    path: `${parent.path}.element`,
    required: list['element-required'],
    bounded: false,
  };
}

export function structData(
  field: arrow.Field,
  length: number,
  validity: ValidityBuilder,
  children: arrow.Data[],
): arrow.Data {
  return arrow.makeData({
    type: field.type as arrow.Struct,
    length,
    nullCount: validity.nullCount,
    nullBitmap: validity.bitmap,
    children,
  });
}

export function listData(
  field: arrow.Field,
  length: number,
  validity: ValidityBuilder,
  offsets: Int32Array,
  child: arrow.Data,
): arrow.Data {
  return arrow.makeData({
    type: field.type as arrow.List,
    length,
    nullCount: validity.nullCount,
    nullBitmap: validity.bitmap,
    valueOffsets: offsets,
    child,
  });
}

/** The RecordBatch of a table's top-level columns. */
export function recordBatchOf(
  arrowSchema: arrow.Schema,
  length: number,
  children: arrow.Data[],
): arrow.RecordBatch {
  const root = arrow.makeData({ type: new arrow.Struct(arrowSchema.fields), length, nullCount: 0, children });
  return new arrow.RecordBatch(arrowSchema, root);
}
