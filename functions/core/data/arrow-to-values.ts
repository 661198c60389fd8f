/**
 * Arrow column Data (as parquet-wasm reads a Parquet file) → Iceberg `Value`s for a requested Iceberg
 * type, reading the typed arrays directly: Arrow's `Vector.get` turns timestamps into ms numbers and
 * decimals into lossy objects. Handles the promotions Iceberg allows (int → long, float → double,
 * decimal precision widening) and the units other writers use (ms/ns timestamps, ms dates).
 */
import * as arrow from 'apache-arrow';
import { ValidationError } from '../errors.js';
import { decimalParams, fixedLength } from '../spec/conversions.js';
import type { IcebergType, ListType, MapType, PrimitiveType, Row, StructType, Value } from '../spec/types.js';
import { getArrowFieldId } from './arrow-schema.js';

/**
 * Values of `data` (one Arrow column chunk) as `type`, null where the column is null.
 * @throws ValidationError when the file's column cannot be read as `type`
 */
export function readColumnValues(type: IcebergType, data: arrow.Data, path: string): Value[] {
  if (typeof type === 'string') return readPrimitive(type, data, path);
  if (type.type === 'struct') return readStruct(type, data, path);
  if (type.type === 'list') return readList(type, data, path);
  return readMap(type, data, path);
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

/** Applies `read` to every valid slot; null elsewhere. */
function mapSlots(data: arrow.Data, read: (i: number) => Value): Value[] {
  const n = data.length;
  const out: Value[] = new Array(n);
  const valid = validityOf(data);
  if (valid) for (let i = 0; i < n; i++) out[i] = valid(i) ? read(i) : null;
  else for (let i = 0; i < n; i++) out[i] = read(i);
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

function readPrimitive(type: PrimitiveType, data: arrow.Data, path: string): Value[] {
  const t = data.type;
  const values: unknown = data.values;
  switch (type) {
    case 'boolean': {
      if (t.typeId !== arrow.Type.Bool) throw mismatch(path, type, data);
      const bits = values as Uint8Array;
      const offset = data.offset;
      return mapSlots(data, (i) => ((bits[(offset + i) >> 3] >> ((offset + i) & 7)) & 1) === 1);
    }
    case 'int':
      if (t.typeId !== arrow.Type.Int || (t as arrow.Int).bitWidth > 32) throw mismatch(path, type, data);
      return mapSlots(data, numberReader(values));
    case 'long': {
      if (t.typeId !== arrow.Type.Int) throw mismatch(path, type, data);
      if ((t as arrow.Int).bitWidth === 64) return mapSlots(data, int64Reader(values));
      const read = numberReader(values);
      return mapSlots(data, (i) => BigInt(read(i)));
    }
    case 'float':
    case 'double':
      if (t.typeId !== arrow.Type.Float) throw mismatch(path, type, data);
      if (type === 'float' && (t as arrow.Float).precision === arrow.Precision.DOUBLE)
        throw mismatch(path, type, data);
      return mapSlots(data, numberReader(values));
    case 'date':
      return readDate(data, path);
    case 'time': {
      if (t.typeId !== arrow.Type.Time) throw mismatch(path, type, data);
      const time = t as arrow.Time;
      const read = time.bitWidth === 64 ? int64Reader(values) : toBigints(numberReader(values));
      return mapSlots(data, toMicros(time.unit, read));
    }
    case 'timestamp':
    case 'timestamptz': {
      if (t.typeId !== arrow.Type.Timestamp) throw mismatch(path, type, data);
      return mapSlots(data, toMicros((t as arrow.Timestamp).unit, int64Reader(values)));
    }
    case 'string':
      return readString(data, path);
    case 'binary':
      return readBytes(type, data, path);
    case 'uuid': {
      if (t.typeId !== arrow.Type.FixedSizeBinary || (t as arrow.FixedSizeBinary).byteWidth !== 16) {
        throw mismatch(path, type, data);
      }
      const bytes = values as Uint8Array;
      return mapSlots(data, (i) => formatUuid(bytes, i * 16));
    }
  }
  const decimal = decimalParams(type);
  if (decimal) return readDecimal(type, decimal, data, path);
  const length = fixedLength(type);
  if (length !== undefined) {
    if (t.typeId !== arrow.Type.FixedSizeBinary || (t as arrow.FixedSizeBinary).byteWidth !== length) {
      throw mismatch(path, type, data);
    }
    const bytes = values as Uint8Array;
    return mapSlots(data, (i) => bytes.slice(i * length, (i + 1) * length));
  }
  throw new ValidationError(`unknown primitive type '${type}' for column '${path}'`);
}

function toBigints(read: (i: number) => number): (i: number) => bigint {
  return (i) => BigInt(read(i));
}

function readDate(data: arrow.Data, path: string): Value[] {
  const t = data.type;
  if (t.typeId !== arrow.Type.Date) throw mismatch(path, 'date', data);
  if ((t as arrow.Date_).unit === arrow.DateUnit.DAY) return mapSlots(data, numberReader(data.values));
  const ms = int64Reader(data.values);
  return mapSlots(data, (i) => Number(floorDiv(ms(i), 86_400_000n)));
}

/** [start, end) byte ranges of variable-width values, from 32- or 64-bit offsets. */
function offsetReader(data: arrow.Data): (i: number) => number {
  const offsets: unknown = data.valueOffsets;
  if (offsets instanceof Int32Array) return (i) => offsets[i];
  if (offsets instanceof BigInt64Array) return (i) => Number(offsets[i]);
  throw new ValidationError(`unexpected offsets buffer in ${String(data.type)}`);
}

function readString(data: arrow.Data, path: string): Value[] {
  const id = data.type.typeId;
  if (id !== arrow.Type.Utf8 && id !== arrow.Type.LargeUtf8) throw mismatch(path, 'string', data);
  const bytes = data.values as Uint8Array;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = offsetReader(data);
  return mapSlots(data, (i) => text.toString('utf8', at(i), at(i + 1)));
}

function readBytes(type: PrimitiveType, data: arrow.Data, path: string): Value[] {
  const t = data.type;
  const bytes = data.values as Uint8Array;
  if (t.typeId === arrow.Type.FixedSizeBinary) {
    const width = (t as arrow.FixedSizeBinary).byteWidth;
    return mapSlots(data, (i) => bytes.slice(i * width, (i + 1) * width));
  }
  if (t.typeId !== arrow.Type.Binary && t.typeId !== arrow.Type.LargeBinary) throw mismatch(path, type, data);
  const at = offsetReader(data);
  return mapSlots(data, (i) => bytes.slice(at(i), at(i + 1)));
}

function readDecimal(
  type: PrimitiveType,
  params: { precision: number; scale: number },
  data: arrow.Data,
  path: string,
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
    return mapSlots(data, (i) => {
      const high = halves[2 * i + 1];
      const low = lows[2 * i];
      // Most unscaled values fit 64 bits: the high half is only sign extension.
      if (high === 0n && low < 0x8000000000000000n) return low;
      if (high === -1n && low >= 0x8000000000000000n) return halves[2 * i];
      return (high << 64n) | low;
    });
  }
  return mapSlots(data, (i) => {
    let v = 0n;
    for (let w = width - 1; w >= 0; w--) v = (v << 32n) | BigInt(words[i * width + w]);
    return BigInt.asIntN(t.bitWidth, v);
  });
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

function readStruct(type: StructType, data: arrow.Data, path: string): Value[] {
  if (data.type.typeId !== arrow.Type.Struct) throw mismatch(path, type, data);
  const fileFields = (data.type as arrow.Struct).children;
  const names = type.fields.map((f) => f.name);
  const columns = type.fields.map((f) => {
    const k = fileFields.findIndex((ff) => getArrowFieldId(ff) === f.id);
    return k < 0 ? undefined : readColumnValues(f.type, data.children[k], `${path}.${f.name}`);
  });
  return mapSlots(data, (i) => {
    const row: Row = {};
    for (let j = 0; j < names.length; j++) row[names[j]] = columns[j] ? columns[j]![i] : null;
    return row;
  });
}

function readList(type: ListType, data: arrow.Data, path: string): Value[] {
  const id = data.type.typeId;
  if (id !== arrow.Type.List && id !== arrow.Type.LargeList) throw mismatch(path, type, data);
  const elements = readColumnValues(type.element, data.children[0], `${path}.element`);
  const at = offsetReader(data);
  return mapSlots(data, (i) => elements.slice(at(i), at(i + 1)));
}

function readMap(type: MapType, data: arrow.Data, path: string): Value[] {
  if (data.type.typeId !== arrow.Type.Map) throw mismatch(path, type, data);
  const entries = data.children[0];
  if (entries?.children.length !== 2) throw mismatch(path, type, data);
  const keys = readColumnValues(type.key, entries.children[0], `${path}.key`);
  const items = readColumnValues(type.value, entries.children[1], `${path}.value`);
  const at = offsetReader(data);
  return mapSlots(data, (i) => {
    const map = new Map<Value, Value>();
    for (let k = at(i); k < at(i + 1); k++) map.set(keys[k], items[k]);
    return map;
  });
}
