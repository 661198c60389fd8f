/**
 * Rows gathered column by column: what the ingest fast path produces instead of one object per row
 * (and per nested struct, list and lineage record). Each leaf holds its values in typed storage
 * (leaf-column.ts: numbers in a Float64Array, strings as UTF-8 bytes), each struct its validity, each list its
 * offsets (gathered-validity.ts: typed storage, a count while no row is null), in the layout Arrow wants — so a
 * RecordBatch is built from it with the same primitive builders (and the same stats) as from rows,
 * without a row object ever existing. Nothing a batch of 10,000 records allocated per row has to be
 * copied by the garbage collector twice, which was a large share of the handler's time.
 *
 * Supports structs, lists and primitives (what the fast path takes; maps always go through rows).
 */
import type * as arrow from 'apache-arrow';
import type { IcebergType, Row, StructType, Value } from '../../spec/types.js';
import { buildPrimitiveData } from './build-primitive-data.js';
import type { StatsSink } from './column-stats.js';
import { elementTarget, fieldTarget, listData, recordBatchOf, structData } from './nested-data.js';
import { buildTypedLeaf } from './build-typed-data.js';
import type { ColumnTarget } from './column-target.js';
import { LeafColumn } from './leaf-column.js';
import { Offsets, Validity } from './gathered-validity.js';

export { LeafColumn, Offsets, Validity };

export interface StructColumn {
  kind: 'struct';
  names: string[];
  valid: Validity;
  children: GatheredColumn[];
}

export interface ListColumn {
  kind: 'list';
  offsets: Offsets;
  valid: Validity;
  element: GatheredColumn;
}

export type GatheredColumn = LeafColumn | StructColumn | ListColumn;

/** Whether gathered columns can hold a type: anything without a map. */
export function canGather(type: IcebergType): boolean {
  if (typeof type === 'string') return true;
  if (type.type === 'struct') return type.fields.every((f) => canGather(f.type));
  if (type.type === 'list') return canGather(type.element);
  return false;
}

/**
 * Empty columns shaped like a struct type (maps are not supported: the fast path never takes them),
 * their leaves sized for `rows` (the batch's record count: no regrowth while gathering it).
 */
export function emptyColumns(type: StructType, rows?: number): StructColumn {
  const column = (t: IcebergType): GatheredColumn => {
    if (typeof t === 'string') return new LeafColumn(t, rows);
    if (t.type === 'struct') return emptyColumns(t, rows);
    if (t.type === 'list')
      return {
        kind: 'list',
        offsets: new Offsets(rows),
        valid: new Validity(rows),
        element: column(t.element),
      };
    throw new Error('gathered rows hold no maps');
  };
  return {
    kind: 'struct',
    names: type.fields.map((f) => f.name),
    valid: new Validity(rows),
    children: type.fields.map((f) => column(f.type)),
  };
}

/** Rows in a column: leaf values, struct validity, list offsets. */
export function columnLength(c: GatheredColumn): number {
  return c.kind === 'leaf' ? c.length : c.valid.length;
}

/** Drops every row from `rows` on (rolls back a row the fast path gave up on half-way). */
export function truncateColumn(c: GatheredColumn, rows: number): void {
  if (c.kind === 'leaf') {
    c.truncate(rows);
    return;
  }
  if (c.kind === 'struct') {
    c.valid.truncate(rows);
    for (const child of c.children) truncateColumn(child, rows);
    return;
  }
  const elements = c.offsets.get(rows);
  c.offsets.truncate(rows);
  c.valid.truncate(rows);
  truncateColumn(c.element, elements);
}

/** Appends an absent slot: null, or MASKED when a parent is null. */
export function appendAbsent(c: GatheredColumn, masked: boolean): void {
  if (c.kind === 'leaf') {
    c.pushAbsent(masked);
    return;
  }
  c.valid.pushNull();
  if (c.kind === 'struct') {
    for (const child of c.children) appendAbsent(child, true);
    return;
  }
  c.offsets.pushCount(0);
}

/** Appends an already converted value (a `Value` as rows hold it: Row for structs, array for lists). */
export function appendValue(c: GatheredColumn, value: Value | undefined): void {
  if (value === null || value === undefined) {
    appendAbsent(c, false);
    return;
  }
  if (c.kind === 'leaf') {
    c.pushValue(value);
    return;
  }
  c.valid.pushValid();
  if (c.kind === 'struct') {
    const row = value as Row;
    for (let j = 0; j < c.names.length; j++) appendValue(c.children[j], row[c.names[j]]);
    return;
  }
  const items = value as Value[];
  for (const item of items) appendValue(c.element, item);
  c.offsets.pushCount(items.length);
}

/** The rows' own objects again (for the paths that need rows: partitioning, sorting). */
export function columnValue(c: GatheredColumn, i: number): Value | undefined {
  if (c.kind === 'leaf') return c.valueAt(i);
  if (!c.valid.get(i)) return null;
  if (c.kind === 'struct') {
    const row: Row = {};
    for (let j = 0; j < c.names.length; j++) row[c.names[j]] = columnValue(c.children[j], i) ?? null;
    return row;
  }
  const out: Value[] = [];
  for (let k = c.offsets.get(i); k < c.offsets.get(i + 1); k++) out.push(columnValue(c.element, k) ?? null);
  return out;
}

/** Rows at `indices` (in that order) of a column as a column of their own. */
function takeColumn(c: GatheredColumn, indices: readonly number[]): GatheredColumn {
  const n = indices.length;
  if (c.kind === 'leaf') return c.take(indices);
  const valid = c.valid.take(indices);
  if (c.kind === 'struct') {
    return {
      kind: 'struct',
      names: c.names,
      valid,
      children: c.children.map((child) => takeColumn(child, indices)),
    };
  }
  const offsets = new Offsets(n);
  const elements: number[] = [];
  for (let k = 0; k < n; k++) {
    const i = indices[k];
    const from = c.offsets.get(i);
    const to = c.offsets.get(i + 1);
    for (let e = from; e < to; e++) elements.push(e);
    offsets.pushCount(to - from);
  }
  return { kind: 'list', offsets, valid, element: takeColumn(c.element, elements) };
}

/** Rows [start, end) of a column as a column of their own. */
function sliceColumn(c: GatheredColumn, start: number, end: number): GatheredColumn {
  if (c.kind === 'leaf') return c.slice(start, end);
  if (c.kind === 'struct') {
    return {
      kind: 'struct',
      names: c.names,
      valid: c.valid.slice(start, end),
      children: c.children.map((child) => sliceColumn(child, start, end)),
    };
  }
  return {
    kind: 'list',
    offsets: c.offsets.slice(start, end),
    valid: c.valid.slice(start, end),
    element: sliceColumn(c.element, c.offsets.get(start), c.offsets.get(end)),
  };
}

/** Arrow Data of a gathered column, as build-record-batch.ts builds it from rows (same stats). */
function buildColumn(
  type: IcebergType,
  field: arrow.Field,
  col: ColumnTarget,
  c: GatheredColumn,
  stats: StatsSink,
): arrow.Data {
  if (typeof type === 'string') {
    if (c.kind !== 'leaf') throw new Error(`gathered column ${col.path} is not a leaf`);
    return c.values
      ? buildPrimitiveData(type, field.type, col, c.values, stats)
      : buildTypedLeaf(type, field.type, col, c, stats);
  }
  if (type.type === 'struct' && c.kind === 'struct') {
    const validity = c.valid.toBuilder();
    const arrowChildren = (field.type as arrow.Struct).children;
    const children = type.fields.map((f, j) =>
      buildColumn(f.type, arrowChildren[j], fieldTarget(f, col), c.children[j], stats),
    );
    return structData(field, c.valid.length, validity, children);
  }
  if (type.type === 'list' && c.kind === 'list') {
    const validity = c.valid.toBuilder();
    const elementField = (field.type as arrow.List).children[0];
    const child = buildColumn(type.element, elementField, elementTarget(type, col), c.element, stats);
    return listData(field, c.valid.length, validity, c.offsets.toInt32Array(), child);
  }
  throw new Error(`gathered column ${col.path} does not match its type`);
}

/** A batch of rows held as gathered columns (the top-level struct of a table schema). */
export class GatheredRows {
  constructor(readonly columns: StructColumn) {}

  get length(): number {
    return this.columns.valid.length;
  }

  /** Row i's value at a dotted path of structs (null under a null struct), as readPath reads a row. */
  valueAt(i: number, path: readonly string[]): Value {
    let c: GatheredColumn = this.columns;
    for (const name of path) {
      if (c.kind !== 'struct') return null;
      if (!c.valid.get(i)) return null;
      const j = c.names.indexOf(name);
      if (j < 0) return null;
      c = c.children[j];
    }
    return (columnValue(c, i) ?? null) as Value;
  }

  /** The rows at `indices`, in that order (a partition's rows, sorted rows). */
  take(indices: readonly number[]): GatheredRows {
    return new GatheredRows(takeColumn(this.columns, indices) as StructColumn);
  }

  /** The rows as objects. */
  toRows(): Row[] {
    const out: Row[] = new Array(this.length);
    for (let i = 0; i < out.length; i++) out[i] = columnValue(this.columns, i) as Row;
    return out;
  }

  /**
   * Arrow RecordBatch of rows [start, end), exactly as buildRecordBatch builds it from the same rows;
   * fills `stats` the same way.
   */
  buildBatch(
    schema: StructType,
    arrowSchema: arrow.Schema,
    start: number,
    end: number,
    stats: StatsSink,
  ): arrow.RecordBatch {
    const root =
      start === 0 && end === this.length
        ? this.columns
        : (sliceColumn(this.columns, start, end) as StructColumn);
    const children = schema.fields.map((f, j) =>
      buildColumn(f.type, arrowSchema.fields[j], fieldTarget(f), root.children[j], stats),
    );
    return recordBatchOf(arrowSchema, end - start, children);
  }
}
