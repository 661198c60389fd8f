/**
 * Evaluates a bound filter on the Arrow columns of a batch, all rows at once, with the same
 * three-valued logic as evaluate-row.ts (whose `evaluatePredicate` decides every value the fast paths
 * here do not): a comparison with null is unknown, NaN compares false with everything but `!=`, and a
 * row is kept only when the filter is true. Nothing is turned into a row object: strings compare as
 * UTF-8 bytes (Iceberg orders strings by code point, which is UTF-8 byte order), ints, longs, floats,
 * dates and microsecond timestamps compare on their typed arrays; any other column is read as values
 * once and judged value by value.
 */
import * as arrow from 'apache-arrow';
import { getArrowFieldId } from '../data/arrow/arrow-schema.js';
import { readColumnValues } from '../data/arrow/arrow-to-values.js';
import type { DataBatch } from '../data/parquet/read/data-batch.js';
import type { IcebergType, Row, StructType, Value } from '../spec/types.js';
import { comparisonHolds, evaluatePredicate } from './evaluate-row.js';
import type { BoundExpression, BoundPredicate, ComparisonOp } from './expression.js';
import { readPath } from './read-columns.js';

/** Per-row results: 0 false, 1 true, 2 unknown. */
export const FALSE = 0;
export const TRUE = 1;
export const UNKNOWN = 2;

/**
 * The column holding a field: its data in the batch (undefined: not in the file, all null). `leaf` when
 * it is the field's own column (a top-level field, or a nested one reached through struct children
 * that are never null in this batch); else the top-level struct holding it, read as values.
 */
export interface BatchColumn {
  name: string;
  type: IcebergType;
  data: arrow.Data | undefined;
  leaf: boolean;
}

/** A batch of rows as columns, looked up by the field id of a term (which may sit inside a struct). */
export interface ColumnBatch {
  length: number;
  columnOf(fieldId: number): BatchColumn | undefined;
}

interface FieldPlace {
  top: { name: string; type: IcebergType; id: number };
  /** Field ids of the structs' children from the top-level column down to the field ([] at the top). */
  steps: number[];
  type: IcebergType;
}

/**
 * The column of a nested field, taken from its struct's child data when no struct on the way is null
 * in this batch: a null struct's children may hold any value, so then the struct is read as values.
 */
function leafData(data: arrow.Data, steps: readonly number[]): arrow.Data | undefined {
  let at: arrow.Data = data;
  for (const id of steps) {
    if (at.nullCount > 0 || at.type.typeId !== arrow.Type.Struct) return undefined;
    // Children are matched by field id, as arrow-to-values.ts reads a struct.
    const k = (at.type as arrow.Struct).children.findIndex((f) => getArrowFieldId(f) === id);
    const child = k < 0 ? undefined : at.children[k];
    if (child === undefined || child.length !== at.length) return undefined;
    at = child;
  }
  return at;
}

/** A batch read for `struct` as the evaluator sees it: each field id's column (see BatchColumn). Never throws. */
export function columnBatchOf(struct: StructType, batch: DataBatch): ColumnBatch {
  const places = new Map<number, FieldPlace>();
  const walk = (type: IcebergType, top: FieldPlace['top'], steps: number[]): void => {
    if (typeof type === 'string' || type.type !== 'struct') return;
    for (const f of type.fields) {
      places.set(f.id, { top, steps: [...steps, f.id], type: f.type });
      walk(f.type, top, [...steps, f.id]);
    }
  };
  for (const f of struct.fields) {
    const top = { name: f.name, type: f.type, id: f.id };
    places.set(f.id, { top, steps: [], type: f.type });
    walk(f.type, top, []);
  }
  return {
    length: batch.length,
    columnOf(fieldId) {
      const place = places.get(fieldId);
      if (!place) return undefined;
      const data = batch.columns.get(place.top.id);
      if (place.steps.length === 0 || data === undefined)
        return { name: place.top.name, type: place.top.type, data, leaf: place.steps.length === 0 };
      const leaf = leafData(data, place.steps);
      return leaf
        ? { name: place.top.name, type: place.type, data: leaf, leaf: true }
        : { name: place.top.name, type: place.top.type, data, leaf: false };
    },
  };
}

/**
 * The positions (within the batch, ascending) of the rows for which `expr` is true.
 * @throws ValidationError when a filter column cannot be read as its type (as readColumnValues)
 */
export function selectRows(expr: BoundExpression, batch: ColumnBatch): Int32Array {
  const result = evaluateColumns(expr, batch);
  let n = 0;
  for (let i = 0; i < result.length; i++) if (result[i] === TRUE) n++;
  const out = new Int32Array(n);
  let k = 0;
  for (let i = 0; i < result.length; i++) if (result[i] === TRUE) out[k++] = i;
  return out;
}

/**
 * true / false / unknown for every row of the batch.
 * @throws as selectRows
 */
export function evaluateColumns(expr: BoundExpression, batch: ColumnBatch): Uint8Array {
  const n = batch.length;
  switch (expr.op) {
    case 'true':
      return new Uint8Array(n).fill(TRUE);
    case 'false':
      return new Uint8Array(n);
    case 'and': {
      const left = evaluateColumns(expr.left, batch);
      const right = evaluateColumns(expr.right, batch);
      for (let i = 0; i < n; i++) {
        const l = left[i];
        const r = right[i];
        left[i] = l === FALSE || r === FALSE ? FALSE : l === TRUE && r === TRUE ? TRUE : UNKNOWN;
      }
      return left;
    }
    case 'or': {
      const left = evaluateColumns(expr.left, batch);
      const right = evaluateColumns(expr.right, batch);
      for (let i = 0; i < n; i++) {
        const l = left[i];
        const r = right[i];
        left[i] = l === TRUE || r === TRUE ? TRUE : l === FALSE && r === FALSE ? FALSE : UNKNOWN;
      }
      return left;
    }
    case 'not': {
      const child = evaluateColumns(expr.child, batch);
      for (let i = 0; i < n; i++) if (child[i] !== UNKNOWN) child[i] = child[i] === TRUE ? FALSE : TRUE;
      return child;
    }
    default:
      return evaluatePredicateColumn(expr, batch);
  }
}

function evaluatePredicateColumn(pred: BoundPredicate, batch: ColumnBatch): Uint8Array {
  const out = new Uint8Array(batch.length);
  const column = batch.columnOf(pred.term.fieldId);
  if (!column?.data) return out.fill(encode(evaluatePredicate(pred, null)));
  const data = column.data;
  if (column.leaf && data.length === batch.length && compareFast(pred, data, out)) return out;
  const values = readColumnValues(column.type, data, column.name);
  const inner = column.leaf ? [] : pred.term.path.slice(1);
  for (let i = 0; i < out.length; i++) {
    const value = inner.length === 0 ? values[i] : readPath(values[i] as Row, inner);
    out[i] = encode(evaluatePredicate(pred, value ?? null));
  }
  return out;
}

function encode(result: boolean | null): number {
  return result === null ? UNKNOWN : result ? TRUE : FALSE;
}

/** Validity of slot i, or undefined when every slot is valid. */
function validity(data: arrow.Data): Uint8Array | undefined {
  const bitmap = data.nullBitmap;
  return bitmap && bitmap.byteLength > 0 && data.nullCount > 0 ? bitmap : undefined;
}

/** Whether slot `at` is null in a validity bitmap (none: every slot is valid). */
function isNull(bits: Uint8Array | undefined, at: number): boolean {
  return bits !== undefined && ((bits[at >> 3] >> (at & 7)) & 1) === 0;
}

/** Fills `out` when a typed-array path exists for this predicate and column; false otherwise. */
function compareFast(pred: BoundPredicate, data: arrow.Data, out: Uint8Array): boolean {
  if (pred.op === 'is-null' || pred.op === 'not-null') {
    const bits = validity(data);
    const offset = data.offset;
    for (let i = 0; i < out.length; i++) {
      const valid = !bits || ((bits[(offset + i) >> 3] >> ((offset + i) & 7)) & 1) === 1;
      out[i] = valid === (pred.op === 'not-null') ? TRUE : FALSE;
    }
    return true;
  }
  if (pred.op === 'is-nan' || pred.op === 'not-nan') return false;
  if (!('value' in pred)) {
    if (pred.term.type !== 'string' || !('values' in pred)) return false;
    return compareStrings(data, pred.values, pred.op === 'in' ? 'eq' : 'not-eq', out, true);
  }
  if (pred.term.type === 'string') return compareStrings(data, [pred.value], pred.op, out, false);
  const numbers = numericValues(pred.term.type, data);
  if (!numbers) return false;
  const literal = pred.value;
  if (typeof literal !== (numbers instanceof BigInt64Array ? 'bigint' : 'number')) return false;
  if (numbers instanceof BigInt64Array) return compareLongs(pred.op, numbers, literal as bigint, data, out);
  const bits = validity(data);
  const offset = data.offset;
  const isFloat = pred.term.type === 'float' || pred.term.type === 'double';
  for (let i = 0; i < out.length; i++) {
    if (isNull(bits, offset + i)) {
      out[i] = UNKNOWN;
      continue;
    }
    const v = numbers[i];
    // IEEE: NaN is unordered, so every comparison but != is false (as evaluatePredicate).
    if (isFloat && Number.isNaN(v)) {
      out[i] = pred.op === 'not-eq' ? TRUE : FALSE;
      continue;
    }
    const cmp = (v as number) < (literal as number) ? -1 : (v as number) > (literal as number) ? 1 : 0;
    out[i] = comparisonHolds(pred.op, cmp) ? TRUE : FALSE;
  }
  return true;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A comparison of 64-bit integers (longs, timestamps) against a bigint literal on the two 32-bit halves
 * of each value (a signed high word, then an unsigned low word: little-endian), so no bigint is made per
 * value; false for a literal outside the 64-bit range (the general path decides those).
 */
function compareLongs(
  op: ComparisonOp,
  numbers: BigInt64Array,
  literal: bigint,
  data: arrow.Data,
  out: Uint8Array,
): boolean {
  if (literal < INT64_MIN || literal > INT64_MAX) return false;
  const words = new Int32Array(numbers.buffer, numbers.byteOffset, numbers.length * 2);
  const hiLit = Number(BigInt.asIntN(32, literal >> 32n));
  const loLit = Number(BigInt.asUintN(32, literal));
  for (let i = 0; i < out.length; i++) {
    const hi = words[2 * i + 1];
    const lo = words[2 * i] >>> 0;
    const cmp = hi < hiLit ? -1 : hi > hiLit ? 1 : lo < loLit ? -1 : lo > loLit ? 1 : 0;
    out[i] = comparisonHolds(op, cmp) ? TRUE : FALSE;
  }
  // A null slot holds some value too; its result is replaced here.
  const bits = validity(data);
  if (bits) for (let i = 0; i < out.length; i++) if (isNull(bits, data.offset + i)) out[i] = UNKNOWN;
  return true;
}

type Numbers = Int32Array | Int16Array | Int8Array | Float32Array | Float64Array | BigInt64Array;

/** The column's values as they compare with the bound literal, or undefined when a conversion is needed. */
function numericValues(type: IcebergType, data: arrow.Data): Numbers | undefined {
  const t = data.type;
  const values: unknown = data.values;
  const is = (v: unknown): v is Numbers =>
    v instanceof Int32Array ||
    v instanceof Int16Array ||
    v instanceof Int8Array ||
    v instanceof Float32Array ||
    v instanceof Float64Array ||
    v instanceof BigInt64Array;
  if (!is(values)) return undefined;
  switch (type) {
    case 'int':
      return t.typeId === arrow.Type.Int && (t as arrow.Int).bitWidth <= 32 && (t as arrow.Int).isSigned
        ? values
        : undefined;
    case 'long':
      return t.typeId === arrow.Type.Int &&
        (t as arrow.Int).bitWidth === 64 &&
        values instanceof BigInt64Array
        ? values
        : undefined;
    case 'float':
      return t.typeId === arrow.Type.Float && values instanceof Float32Array ? values : undefined;
    case 'double':
      return t.typeId === arrow.Type.Float &&
        (values instanceof Float64Array || values instanceof Float32Array)
        ? values
        : undefined;
    case 'date':
      return t.typeId === arrow.Type.Date && (t as arrow.Date_).unit === arrow.DateUnit.DAY
        ? values
        : undefined;
    case 'timestamp':
    case 'timestamptz':
      return t.typeId === arrow.Type.Timestamp &&
        (t as arrow.Timestamp).unit === arrow.TimeUnit.MICROSECOND &&
        values instanceof BigInt64Array
        ? values
        : undefined;
    default:
      return undefined;
  }
}

/**
 * String comparisons on the UTF-8 bytes of a Utf8 column: `eq`/`not-eq` against any of `literals`
 * (one for a comparison, several for in / not-in), or an order comparison against the one literal.
 */
function compareStrings(
  data: arrow.Data,
  literals: readonly Value[],
  op: ComparisonOp,
  out: Uint8Array,
  isSet: boolean,
): boolean {
  if (data.type.typeId !== arrow.Type.Utf8 || !(data.valueOffsets instanceof Int32Array)) return false;
  if (!literals.every((l) => typeof l === 'string')) return false;
  const wanted = literals.map((l) => Buffer.from(l as string, 'utf8'));
  const bytes = data.values as Uint8Array;
  const offsets = data.valueOffsets;
  const bits = validity(data);
  const offset = data.offset;
  for (let i = 0; i < out.length; i++) {
    if (isNull(bits, offset + i)) {
      out[i] = UNKNOWN;
      continue;
    }
    const from = offsets[i];
    const to = offsets[i + 1];
    if (isSet || op === 'eq' || op === 'not-eq') {
      let found = false;
      for (let w = 0; w < wanted.length && !found; w++) found = sameBytes(bytes, from, to, wanted[w]);
      out[i] = found === (op === 'eq') ? TRUE : FALSE;
    } else {
      out[i] = comparisonHolds(op, compareRange(bytes, from, to, wanted[0])) ? TRUE : FALSE;
    }
  }
  return true;
}

function sameBytes(bytes: Uint8Array, from: number, to: number, wanted: Uint8Array): boolean {
  if (to - from !== wanted.length) return false;
  for (let k = 0; k < wanted.length; k++) if (bytes[from + k] !== wanted[k]) return false;
  return true;
}

function compareRange(bytes: Uint8Array, from: number, to: number, wanted: Uint8Array): number {
  const n = Math.min(to - from, wanted.length);
  for (let k = 0; k < n; k++) {
    const d = bytes[from + k] - wanted[k];
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  const d = to - from - wanted.length;
  return d < 0 ? -1 : d > 0 ? 1 : 0;
}
