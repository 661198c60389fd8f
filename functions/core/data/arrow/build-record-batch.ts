/**
 * Rows (Iceberg `Value` representation, keyed by field name) → one Arrow RecordBatch, column by
 * column. Nested values are gathered into one flat array per child (struct fields, list elements,
 * map keys and values) so every leaf is built in a single typed-array pass.
 */
import * as arrow from 'apache-arrow';
import { ValidationError } from '../../errors.js';
import {
  type IcebergType,
  isRow,
  type ListType,
  type MapType,
  type Row,
  type StructType,
} from '../../spec/types.js';
import { buildPrimitiveData } from './build-primitive-data.js';
import { type ColumnTarget, MASKED, ValidityBuilder, isNullSlot, wrongValue } from './column-target.js';
import type { StatsSink } from './column-stats.js';
import { elementTarget, fieldTarget, listData, recordBatchOf, structData } from './nested-data.js';

/**
 * Arrow RecordBatch of `rows[start, end)` following `schema` / `arrowSchema` (from toArrowSchema).
 * Fills `stats` with every primitive leaf's bounds and NaN count.
 * @throws ValidationError for a null in a required field or a value of the wrong representation
 */
export function buildRecordBatch(
  schema: StructType,
  arrowSchema: arrow.Schema,
  rows: Row[],
  start: number,
  end: number,
  stats: StatsSink,
): arrow.RecordBatch {
  const length = end - start;
  const fields = schema.fields;
  const names = fields.map((f) => f.name);
  const columns: unknown[][] = fields.map(() => new Array(length));
  // Row-major: each row object is visited once (about 2× faster than a pass per column on wide rows).
  for (let i = 0; i < length; i++) {
    const row = rows[start + i];
    for (let j = 0; j < names.length; j++) columns[j][i] = row[names[j]];
  }
  const children = fields.map((field, j) =>
    buildColumnData(field.type, arrowSchema.fields[j], fieldTarget(field), columns[j], stats),
  );
  return recordBatchOf(arrowSchema, length, children);
}

/** Arrow Data of one column of any type. @throws ValidationError as buildRecordBatch */
export function buildColumnData(
  type: IcebergType,
  field: arrow.Field,
  col: ColumnTarget,
  values: unknown[],
  stats: StatsSink,
): arrow.Data {
  if (typeof type === 'string') return buildPrimitiveData(type, field.type, col, values, stats);
  if (type.type === 'struct') return buildStructData(type, field, col, values, stats);
  if (type.type === 'list') return buildListData(type, field, col, values, stats);
  return buildMapData(type, field, col, values, stats);
}

function buildStructData(
  type: StructType,
  field: arrow.Field,
  col: ColumnTarget,
  values: unknown[],
  stats: StatsSink,
): arrow.Data {
  const n = values.length;
  const validity = new ValidityBuilder(n);
  const fields = type.fields;
  const childValues: unknown[][] = fields.map(() => new Array(n));
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (isNullSlot(v, col)) {
      validity.setNull(i);
      for (let j = 0; j < fields.length; j++) childValues[j][i] = MASKED;
      continue;
    }
    if (!isRow(v)) throw wrongValue(col, 'struct', v);
    for (let j = 0; j < fields.length; j++) childValues[j][i] = v[fields[j].name];
  }
  const arrowChildren = (field.type as arrow.Struct).children;
  const children = fields.map((f, j) =>
    buildColumnData(f.type, arrowChildren[j], fieldTarget(f, col), childValues[j], stats),
  );
  return structData(field, n, validity, children);
}

function buildListData(
  type: ListType,
  field: arrow.Field,
  col: ColumnTarget,
  values: unknown[],
  stats: StatsSink,
): arrow.Data {
  const n = values.length;
  const validity = new ValidityBuilder(n);
  const offsets = new Int32Array(n + 1);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (Array.isArray(v)) total += v.length;
  }
  const elements: unknown[] = new Array(total);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (isNullSlot(v, col)) {
      validity.setNull(i);
    } else {
      if (!Array.isArray(v)) throw wrongValue(col, 'list', v);
      for (let e = 0; e < v.length; e++) elements[k++] = v[e];
    }
    offsets[i + 1] = k;
  }
  const elementField = (field.type as arrow.List).children[0];
  const child = buildColumnData(type.element, elementField, elementTarget(type, col), elements, stats);
  return listData(field, n, validity, offsets, child);
}

function buildMapData(
  type: MapType,
  field: arrow.Field,
  col: ColumnTarget,
  values: unknown[],
  stats: StatsSink,
): arrow.Data {
  const n = values.length;
  const validity = new ValidityBuilder(n);
  const offsets = new Int32Array(n + 1);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v instanceof Map) total += v.size;
  }
  const keys: unknown[] = new Array(total);
  const items: unknown[] = new Array(total);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (isNullSlot(v, col)) {
      validity.setNull(i);
    } else {
      if (!(v instanceof Map)) throw wrongValue(col, 'map', v);
      for (const [key, item] of v) {
        keys[k] = key;
        items[k] = item;
        k++;
      }
    }
    offsets[i + 1] = k;
  }
  const entriesField = (field.type as arrow.Map_).children[0];
  const [keyField, valueField] = (entriesField.type as arrow.Struct).children;
  if (!keyField || !valueField) throw new ValidationError(`map field '${col.path}' has no key/value`);
  const keyData = buildColumnData(
    type.key,
    keyField,
    { id: type['key-id'], path: `${col.path}.key`, required: true, bounded: false },
    keys,
    stats,
  );
  const valueData = buildColumnData(
    type.value,
    valueField,
    { id: type['value-id'], path: `${col.path}.value`, required: type['value-required'], bounded: false },
    items,
    stats,
  );
  const entries = arrow.makeData({
    type: entriesField.type as arrow.Struct,
    length: total,
    nullCount: 0,
    children: [keyData, valueData],
  });
  return arrow.makeData({
    type: field.type as arrow.Map_,
    length: n,
    nullCount: validity.nullCount,
    nullBitmap: validity.bitmap,
    valueOffsets: offsets,
    child: entries,
  });
}
