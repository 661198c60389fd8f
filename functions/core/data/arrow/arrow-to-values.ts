/**
 * Arrow column Data (as parquet-wasm reads a Parquet file) → Iceberg `Value`s for a requested Iceberg
 * type, reading the typed arrays directly: Arrow's `Vector.get` turns timestamps into ms numbers and
 * decimals into lossy objects. Handles the promotions Iceberg allows (int → long, float → double,
 * decimal precision widening) and the units other writers use (ms/ns timestamps, ms dates).
 */
import * as arrow from 'apache-arrow';
import { ValidationError } from '../../errors.js';
import { decimalParams, fixedLength } from '../../spec/conversions.js';
import type {
  IcebergType,
  ListType,
  MapType,
  PrimitiveType,
  Row,
  StructType,
  Value,
} from '../../spec/types.js';
import { getArrowFieldId } from './arrow-schema.js';

/** Slots of a column to read, ascending; undefined reads every slot. */
export type Selection = Int32Array | undefined;

/**
 * Values of `data` (one Arrow column chunk) as `type`, null where the column is null: of every slot, or
 * only of the slots in `rows` (value k is slot rows[k]), so a filtered read builds values only for the
 * rows it returns.
 * @throws ValidationError when the file's column cannot be read as `type`
 */
export function readColumnValues(
  type: IcebergType,
  data: arrow.Data,
  path: string,
  rows?: Selection,
): Value[] {
  if (typeof type === 'string') return readPrimitive(type, data, path, rows);
  if (type.type === 'struct') return readStruct(type, data, path, rows);
  if (type.type === 'list') return readList(type, data, path, rows);
  return readMap(type, data, path, rows);
}

function mismatch(path: string, type: IcebergType, data: arrow.Data): ValidationError {
  const wanted = typeof type === 'string' ? type : type.type;
  return new ValidationError(
    `column '${path}' holds ${String(data.type)}, which cannot be read as ${wanted}`,
  );
}

/** Validity of every slot, or undefined when the column has no nulls. */
function validityOf(data: arrow.Data): ((i: number) => boolean) | undefined {
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.byteLength === 0 || data.nullCount === 0) return undefined;
  const offset = data.offset;
  return (i) => ((bitmap[(offset + i) >> 3] >> ((offset + i) & 7)) & 1) === 1;
}

/** Applies `read` (slot i, output index k) to every valid slot of the selection; null elsewhere. */
function mapSlots(data: arrow.Data, read: (i: number, k: number) => Value, rows: Selection): Value[] {
  const valid = validityOf(data);
  if (rows) {
    const out: Value[] = new Array(rows.length);
    for (let k = 0; k < rows.length; k++) {
      const i = rows[k];
      out[k] = valid && !valid(i) ? null : read(i, k);
    }
    return out;
  }
  const n = data.length;
  const out: Value[] = new Array(n);
  if (valid) for (let i = 0; i < n; i++) out[i] = valid(i) ? read(i, i) : null;
  else for (let i = 0; i < n; i++) out[i] = read(i, i);
  return out;
}

function int64Reader(values: unknown): (i: number) => bigint {
  if (values instanceof BigInt64Array || values instanceof BigUint64Array) return (i) => BigInt(values[i]);
  if (values instanceof Int32Array) {
    // Older Arrow JS layouts keep 64-bit integers as (low, high) int32 pairs.
    return (i) => (BigInt(values[2 * i + 1]) << 32n) | BigInt(values[2 * i] >>> 0);
  }
  throw new ValidationError(`unexpected 64-bit buffer ${Object.prototype.toString.call(values)}`);
}

function numberReader(values: unknown): (i: number) => number {
  if (ArrayBuffer.isView(values) && !(values instanceof DataView)) {
    if (values instanceof BigInt64Array || values instanceof BigUint64Array) return (i) => Number(values[i]);
    const typed = values as Int32Array;
    return (i) => typed[i];
  }
  throw new ValidationError(`unexpected numeric buffer ${Object.prototype.toString.call(values)}`);
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** Multiplier/divisor from a time unit to microseconds. */
function toMicros(unit: arrow.TimeUnit, read: (i: number) => bigint): (i: number) => bigint {
  switch (unit) {
    case arrow.TimeUnit.SECOND:
      return (i) => read(i) * 1_000_000n;
    case arrow.TimeUnit.MILLISECOND:
      return (i) => read(i) * 1000n;
    case arrow.TimeUnit.NANOSECOND:
      return (i) => floorDiv(read(i), 1000n);
    default:
      return read;
  }
}

/** Multiplier from a time unit to nanoseconds (timestamp_ns keeps every digit a writer stored). */
function toNanos(unit: arrow.TimeUnit, read: (i: number) => bigint): (i: number) => bigint {
  const factor = [1_000_000_000n, 1_000_000n, 1000n, 1n][unit];
  return factor === 1n ? read : (i) => read(i) * factor;
}

function readPrimitive(type: PrimitiveType, data: arrow.Data, path: string, rows: Selection): Value[] {
  const t = data.type;
  const values: unknown = data.values;
  switch (type) {
    case 'boolean': {
      if (t.typeId !== arrow.Type.Bool) throw mismatch(path, type, data);
      const bits = values as Uint8Array;
      const offset = data.offset;
      return mapSlots(data, (i) => ((bits[(offset + i) >> 3] >> ((offset + i) & 7)) & 1) === 1, rows);
    }
    case 'int':
      if (t.typeId !== arrow.Type.Int || (t as arrow.Int).bitWidth > 32) throw mismatch(path, type, data);
      return mapSlots(data, numberReader(values), rows);
    case 'long': {
      if (t.typeId !== arrow.Type.Int) throw mismatch(path, type, data);
      if ((t as arrow.Int).bitWidth === 64) return mapSlots(data, int64Reader(values), rows);
      const read = numberReader(values);
      return mapSlots(data, (i) => BigInt(read(i)), rows);
    }
    case 'float':
    case 'double':
      if (t.typeId !== arrow.Type.Float) throw mismatch(path, type, data);
      if (type === 'float' && (t as arrow.Float).precision === arrow.Precision.DOUBLE)
        throw mismatch(path, type, data);
      return mapSlots(data, numberReader(values), rows);
    case 'date':
      return readDate(data, path, rows);
    case 'time': {
      if (t.typeId !== arrow.Type.Time) throw mismatch(path, type, data);
      const time = t as arrow.Time;
      const read = time.bitWidth === 64 ? int64Reader(values) : toBigints(numberReader(values));
      return mapSlots(data, toMicros(time.unit, read), rows);
    }
    case 'timestamp':
    case 'timestamptz': {
      if (t.typeId !== arrow.Type.Timestamp) throw mismatch(path, type, data);
      return mapSlots(data, toMicros((t as arrow.Timestamp).unit, int64Reader(values)), rows);
    }
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      if (t.typeId !== arrow.Type.Timestamp) throw mismatch(path, type, data);
      return mapSlots(data, toNanos((t as arrow.Timestamp).unit, int64Reader(values)), rows);
    }
    case 'string':
      return readString(data, path, rows);
    case 'binary':
      return readBytes(type, data, path, rows);
    case 'uuid': {
      if (t.typeId !== arrow.Type.FixedSizeBinary || (t as arrow.FixedSizeBinary).byteWidth !== 16) {
        throw mismatch(path, type, data);
      }
      const bytes = values as Uint8Array;
      return mapSlots(data, (i) => formatUuid(bytes, i * 16), rows);
    }
  }
  const decimal = decimalParams(type);
  if (decimal) return readDecimal(type, decimal, data, path, rows);
  const length = fixedLength(type);
  if (length !== undefined) {
    if (t.typeId !== arrow.Type.FixedSizeBinary || (t as arrow.FixedSizeBinary).byteWidth !== length) {
      throw mismatch(path, type, data);
    }
    const bytes = values as Uint8Array;
    return mapSlots(data, (i) => bytes.slice(i * length, (i + 1) * length), rows);
  }
  throw new ValidationError(`unknown primitive type '${type}' for column '${path}'`);
}

function toBigints(read: (i: number) => number): (i: number) => bigint {
  return (i) => BigInt(read(i));
}

function readDate(data: arrow.Data, path: string, rows: Selection): Value[] {
  const t = data.type;
  if (t.typeId !== arrow.Type.Date) throw mismatch(path, 'date', data);
  if ((t as arrow.Date_).unit === arrow.DateUnit.DAY) return mapSlots(data, numberReader(data.values), rows);
  const ms = int64Reader(data.values);
  return mapSlots(data, (i) => Number(floorDiv(ms(i), 86_400_000n)), rows);
}

/** [start, end) byte ranges of variable-width values, from 32- or 64-bit offsets. */
function offsetReader(data: arrow.Data): (i: number) => number {
  const offsets: unknown = data.valueOffsets;
  if (offsets instanceof Int32Array) return (i) => offsets[i];
  if (offsets instanceof BigInt64Array) return (i) => Number(offsets[i]);
  throw new ValidationError(`unexpected offsets buffer in ${String(data.type)}`);
}

function readString(data: arrow.Data, path: string, rows: Selection): Value[] {
  const id = data.type.typeId;
  if (id !== arrow.Type.Utf8 && id !== arrow.Type.LargeUtf8) throw mismatch(path, 'string', data);
  const bytes = data.values as Uint8Array;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = offsetReader(data);
  return mapSlots(data, (i) => text.toString('utf8', at(i), at(i + 1)), rows);
}

function readBytes(type: PrimitiveType, data: arrow.Data, path: string, rows: Selection): Value[] {
  const t = data.type;
  const bytes = data.values as Uint8Array;
  if (t.typeId === arrow.Type.FixedSizeBinary) {
    const width = (t as arrow.FixedSizeBinary).byteWidth;
    return mapSlots(data, (i) => bytes.slice(i * width, (i + 1) * width), rows);
  }
  if (t.typeId !== arrow.Type.Binary && t.typeId !== arrow.Type.LargeBinary) throw mismatch(path, type, data);
  const at = offsetReader(data);
  return mapSlots(data, (i) => bytes.slice(at(i), at(i + 1)), rows);
}

function readDecimal(
  type: PrimitiveType,
  params: { precision: number; scale: number },
  data: arrow.Data,
  path: string,
  rows: Selection,
): Value[] {
  const t = data.type as arrow.Decimal;
  if (t.typeId !== arrow.Type.Decimal || t.scale !== params.scale || t.precision > params.precision) {
    throw mismatch(path, type, data);
  }
  const words = data.values as Uint32Array;
  const width = t.bitWidth / 32;
  // The 64-bit views need 8-byte alignment, which Arrow IPC buffers have; otherwise take the slow path.
  if (width === 4 && words.byteOffset % 8 === 0) {
    const halves = new BigInt64Array(words.buffer, words.byteOffset, words.length / 2);
    const lows = new BigUint64Array(words.buffer, words.byteOffset, words.length / 2);
    return mapSlots(
      data,
      (i) => {
        const high = halves[2 * i + 1];
        const low = lows[2 * i];
        // Most unscaled values fit 64 bits: the high half is only sign extension.
        if (high === 0n && low < 0x8000000000000000n) return low;
        if (high === -1n && low >= 0x8000000000000000n) return halves[2 * i];
        return (high << 64n) | low;
      },
      rows,
    );
  }
  return mapSlots(
    data,
    (i) => {
      let v = 0n;
      for (let w = width - 1; w >= 0; w--) v = (v << 32n) | BigInt(words[i * width + w]);
      return BigInt.asIntN(t.bitWidth, v);
    },
    rows,
  );
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

function formatUuid(bytes: Uint8Array, at: number): string {
  let s = '';
  for (let k = 0; k < 16; k++) {
    if (k === 4 || k === 6 || k === 8 || k === 10) s += '-';
    s += HEX[bytes[at + k]];
  }
  return s;
}

function readStruct(type: StructType, data: arrow.Data, path: string, rows: Selection): Value[] {
  if (data.type.typeId !== arrow.Type.Struct) throw mismatch(path, type, data);
  const fileFields = (data.type as arrow.Struct).children;
  const names = type.fields.map((f) => f.name);
  // Children are aligned with the struct's slots, so they read the same selection.
  const columns = type.fields.map((f) => {
    const k = fileFields.findIndex((ff) => getArrowFieldId(ff) === f.id);
    return k < 0 ? undefined : readColumnValues(f.type, data.children[k], `${path}.${f.name}`, rows);
  });
  return mapSlots(
    data,
    (_i, k) => {
      const row: Row = {};
      for (let j = 0; j < names.length; j++) row[names[j]] = columns[j] ? columns[j]![k] : null;
      return row;
    },
    rows,
  );
}

/**
 * The child slots of the selected rows of a list-like column, in order, and where each row's run of
 * them starts in that list (undefined selection: every child slot, at the column's own offsets).
 */
function childSelection(
  at: (i: number) => number,
  rows: Selection,
): { childRows: Selection; start: (i: number, k: number) => number } {
  if (!rows) return { childRows: undefined, start: (i) => at(i) };
  const starts = new Int32Array(rows.length);
  let total = 0;
  for (let k = 0; k < rows.length; k++) {
    starts[k] = total;
    total += at(rows[k] + 1) - at(rows[k]);
  }
  const childRows = new Int32Array(total);
  let n = 0;
  for (let k = 0; k < rows.length; k++) {
    for (let c = at(rows[k]); c < at(rows[k] + 1); c++) childRows[n++] = c;
  }
  return { childRows, start: (_i, k) => starts[k] };
}

function readList(type: ListType, data: arrow.Data, path: string, rows: Selection): Value[] {
  const id = data.type.typeId;
  if (id !== arrow.Type.List && id !== arrow.Type.LargeList) throw mismatch(path, type, data);
  const at = offsetReader(data);
  const { childRows, start } = childSelection(at, rows);
  const elements = readColumnValues(type.element, data.children[0], `${path}.element`, childRows);
  return mapSlots(
    data,
    (i, k) => {
      const from = start(i, k);
      return elements.slice(from, from + at(i + 1) - at(i));
    },
    rows,
  );
}

function readMap(type: MapType, data: arrow.Data, path: string, rows: Selection): Value[] {
  if (data.type.typeId !== arrow.Type.Map) throw mismatch(path, type, data);
  const entries = data.children[0];
  if (entries?.children.length !== 2) throw mismatch(path, type, data);
  const at = offsetReader(data);
  const { childRows, start } = childSelection(at, rows);
  const keys = readColumnValues(type.key, entries.children[0], `${path}.key`, childRows);
  const items = readColumnValues(type.value, entries.children[1], `${path}.value`, childRows);
  return mapSlots(
    data,
    (i, k) => {
      const map = new Map<Value, Value>();
      const from = start(i, k);
      for (let e = from; e < from + at(i + 1) - at(i); e++) map.set(keys[e], items[e]);
      return map;
    },
    rows,
  );
}
