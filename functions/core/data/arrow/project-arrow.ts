/**
 * A file's Arrow column (as parquet-wasm reads it) → Arrow Data of an Iceberg type in the layout floe's
 * writer takes (what build-record-batch.ts builds: Int32 ints and dates, BigInt64 longs and µs
 * times/timestamps, Decimal128 words, Int32 offsets), reusing the file's buffers where they already
 * are. The conversions are exactly arrow-to-values.ts's: struct fields by field id (a field the file
 * lacks is null), list elements and map keys/values by position, the promotions Iceberg allows (int →
 * long, float → double, decimal precision widening) and other writers' units (ms/ns timestamps, ms
 * dates); any other mismatch is the same ValidationError.
 */
import * as arrow from 'apache-arrow';
import { ValidationError } from '../../errors.js';
import { decimalParams, fixedLength } from '../../spec/conversions.js';
import type { IcebergType, ListType, MapType, PrimitiveType, StructType } from '../../spec/types.js';
import { getArrowFieldId, toArrowType } from './arrow-schema.js';

/**
 * `data` (or, when the file lacks the column, `length` nulls) as `type` in the writer's layout.
 * @throws ValidationError when the file's column cannot be read as `type`
 */
export function projectData(
  type: IcebergType,
  data: arrow.Data | undefined,
  length: number,
  path: string,
): arrow.Data {
  if (data === undefined) return nullData(type, length);
  if (data.offset !== 0) throw new ValidationError(`column '${path}' is sliced Arrow data (offset ≠ 0)`);
  if (typeof type === 'string') return projectPrimitive(type, data, path);
  if (type.type === 'struct') return projectStruct(type, data, path);
  if (type.type === 'list') return projectList(type, data, path);
  return projectMap(type, data, path);
}

/** The child of a file's struct Data (or the top-level batch) carrying field id `id`. */
export function childById(fields: readonly arrow.Field[], children: readonly arrow.Data[], id: number) {
  const k = fields.findIndex((f) => getArrowFieldId(f) === id);
  return k < 0 ? undefined : children[k];
}

function mismatch(path: string, type: IcebergType, data: arrow.Data): ValidationError {
  const wanted = typeof type === 'string' ? type : type.type;
  return new ValidationError(
    `column '${path}' holds ${String(data.type)}, which cannot be read as ${wanted}`,
  );
}

/** The validity of a Data, kept as it is (projectData refused sliced Data). */
function nulls(data: arrow.Data): { nullCount: number; nullBitmap: Uint8Array | undefined } {
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.byteLength === 0 || data.nullCount === 0)
    return { nullCount: 0, nullBitmap: undefined };
  return { nullCount: data.nullCount, nullBitmap: bitmap };
}

/** `length` nulls of `type`, children shaped as the writer expects. */
export function nullData(type: IcebergType, length: number): arrow.Data {
  const arrowType = toArrowType(type);
  const bitmap = new Uint8Array((length + 7) >> 3);
  const base = { length, nullCount: length, nullBitmap: bitmap };
  if (typeof type !== 'string') {
    if (type.type === 'struct') {
      const children = type.fields.map((f) => nullData(f.type, length));
      return arrow.makeData({ type: arrowType as arrow.Struct, ...base, children });
    }
    const valueOffsets = new Int32Array(length + 1);
    if (type.type === 'list') {
      const child = nullData(type.element, 0);
      return arrow.makeData({ type: arrowType as arrow.List, ...base, valueOffsets, child });
    }
    const entries = arrow.makeData({
      type: (arrowType as arrow.Map_).children[0].type as arrow.Struct,
      length: 0,
      nullCount: 0,
      children: [nullData(type.key, 0), nullData(type.value, 0)],
    });
    return arrow.makeData({ type: arrowType as arrow.Map_, ...base, valueOffsets, child: entries });
  }
  return emptyLeaf(type, arrowType, length, base);
}

function emptyLeaf(
  type: PrimitiveType,
  arrowType: arrow.DataType,
  length: number,
  base: { length: number; nullCount: number; nullBitmap: Uint8Array },
): arrow.Data {
  switch (arrowType.typeId) {
    case arrow.Type.Bool:
      return arrow.makeData({
        type: arrowType as arrow.Bool,
        ...base,
        data: new Uint8Array((length + 7) >> 3),
      });
    case arrow.Type.Utf8:
    case arrow.Type.Binary:
      return arrow.makeData({
        type: arrowType as arrow.Utf8,
        ...base,
        valueOffsets: new Int32Array(length + 1),
        data: new Uint8Array(0),
      });
    case arrow.Type.FixedSizeBinary:
      return arrow.makeData({
        type: arrowType as arrow.FixedSizeBinary,
        ...base,
        data: new Uint8Array(length * (arrowType as arrow.FixedSizeBinary).byteWidth),
      });
    case arrow.Type.Decimal:
      return arrow.makeData({ type: arrowType as arrow.Decimal, ...base, data: new Uint32Array(length * 4) });
  }
  const ctor = TYPED[type as keyof typeof TYPED];
  if (!ctor) throw new ValidationError(`unknown primitive type '${type}'`);
  return arrow.makeData({ type: arrowType as arrow.Int32, ...base, data: new ctor(length) as Int32Array });
}

const TYPED = {
  int: Int32Array,
  date: Int32Array,
  long: BigInt64Array,
  time: BigInt64Array,
  timestamp: BigInt64Array,
  timestamptz: BigInt64Array,
  timestamp_ns: BigInt64Array,
  timestamptz_ns: BigInt64Array,
  float: Float32Array,
  double: Float64Array,
} as const;

/** A leaf of the writer's layout from new (or reused) values and the file's validity. */
function leaf(
  type: PrimitiveType,
  data: arrow.Data,
  values: ArrayBufferView,
  offsets?: Int32Array,
): arrow.Data {
  const base = { length: data.length, ...nulls(data) };
  if (offsets) {
    const utf8 = toArrowType(type) as arrow.Utf8;
    return arrow.makeData({ type: utf8, ...base, valueOffsets: offsets, data: values as Uint8Array });
  }
  return arrow.makeData({ type: toArrowType(type) as arrow.Int32, ...base, data: values as Int32Array });
}

function projectPrimitive(type: PrimitiveType, data: arrow.Data, path: string): arrow.Data {
  const t = data.type;
  const values: unknown = data.values;
  switch (type) {
    case 'boolean':
      if (t.typeId !== arrow.Type.Bool) throw mismatch(path, type, data);
      return leaf(type, data, values as Uint8Array);
    case 'int':
      if (t.typeId !== arrow.Type.Int || (t as arrow.Int).bitWidth > 32) throw mismatch(path, type, data);
      return leaf(type, data, toInt32(values, data.length, path));
    case 'long':
      if (t.typeId !== arrow.Type.Int) throw mismatch(path, type, data);
      return leaf(type, data, toInt64(values, data.length, path));
    case 'float':
    case 'double': {
      if (t.typeId !== arrow.Type.Float) throw mismatch(path, type, data);
      const precision = (t as arrow.Float).precision;
      if (type === 'float' && precision === arrow.Precision.DOUBLE) throw mismatch(path, type, data);
      if (precision === arrow.Precision.HALF) throw mismatch(path, type, data);
      const want = type === 'float' ? Float32Array : Float64Array;
      const v = values as Float32Array | Float64Array;
      return leaf(
        type,
        data,
        v instanceof want ? v.subarray(0, data.length) : want.from(v.subarray(0, data.length)),
      );
    }
    case 'date':
      return projectDate(data, path);
    case 'time': {
      if (t.typeId !== arrow.Type.Time) throw mismatch(path, type, data);
      const time = t as arrow.Time;
      return leaf(type, data, toMicros(time.unit, toInt64(values, data.length, path)));
    }
    case 'timestamp':
    case 'timestamptz':
      if (t.typeId !== arrow.Type.Timestamp) throw mismatch(path, type, data);
      return leaf(type, data, toMicros((t as arrow.Timestamp).unit, toInt64(values, data.length, path)));
    case 'timestamp_ns':
    case 'timestamptz_ns':
      if (t.typeId !== arrow.Type.Timestamp) throw mismatch(path, type, data);
      return leaf(type, data, toNanos((t as arrow.Timestamp).unit, toInt64(values, data.length, path)));
    case 'string': {
      const id = t.typeId;
      if (id !== arrow.Type.Utf8 && id !== arrow.Type.LargeUtf8) throw mismatch(path, type, data);
      return leaf(type, data, values as Uint8Array, offsetsOf(data));
    }
    case 'binary':
      return projectBinary(data, path);
    case 'uuid':
      if (t.typeId !== arrow.Type.FixedSizeBinary || (t as arrow.FixedSizeBinary).byteWidth !== 16) {
        throw mismatch(path, type, data);
      }
      return leaf(type, data, values as Uint8Array);
  }
  const decimal = decimalParams(type);
  if (decimal) {
    const d = t as arrow.Decimal;
    if (t.typeId !== arrow.Type.Decimal || d.scale !== decimal.scale || d.precision > decimal.precision) {
      throw mismatch(path, type, data);
    }
    return leaf(type, data, toDecimal128(values as Uint32Array, d.bitWidth, data.length));
  }
  const length = fixedLength(type);
  if (length !== undefined) {
    if (t.typeId !== arrow.Type.FixedSizeBinary || (t as arrow.FixedSizeBinary).byteWidth !== length) {
      throw mismatch(path, type, data);
    }
    return leaf(type, data, values as Uint8Array);
  }
  throw new ValidationError(`unknown primitive type '${type}' for column '${path}'`);
}

/** int32 values; narrower or unsigned ints are widened, values past int32 refused as the writer does. */
function toInt32(values: unknown, n: number, path: string): Int32Array {
  if (values instanceof Int32Array) return values.subarray(0, n);
  const src = values as Int8Array | Int16Array | Uint8Array | Uint16Array | Uint32Array;
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const v = src[i];
    if ((v | 0) !== v) throw new ValidationError(`column '${path}' holds ${v}, which is not an int`);
    out[i] = v;
  }
  return out;
}

const MAX_LONG = 2n ** 63n - 1n;

function toInt64(values: unknown, n: number, path: string): BigInt64Array {
  if (values instanceof BigInt64Array) return values.subarray(0, n);
  const out = new BigInt64Array(n);
  if (values instanceof BigUint64Array) {
    for (let i = 0; i < n; i++) {
      if (values[i] > MAX_LONG) throw new ValidationError(`column '${path}' holds ${values[i]}, past a long`);
      out[i] = values[i];
    }
    return out;
  }
  if (ArrayBuffer.isView(values) && !(values instanceof DataView)) {
    const src = values as Int32Array;
    for (let i = 0; i < n; i++) out[i] = BigInt(src[i]);
    return out;
  }
  throw new ValidationError(`unexpected integer buffer ${Object.prototype.toString.call(values)}`);
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function toMicros(unit: arrow.TimeUnit, v: BigInt64Array): BigInt64Array {
  if (unit === arrow.TimeUnit.MICROSECOND) return v;
  const out = new BigInt64Array(v.length);
  for (let i = 0; i < v.length; i++) {
    if (unit === arrow.TimeUnit.SECOND) out[i] = v[i] * 1_000_000n;
    else if (unit === arrow.TimeUnit.MILLISECOND) out[i] = v[i] * 1000n;
    else out[i] = floorDiv(v[i], 1000n);
  }
  return out;
}

/** Values in ns, from any time unit (a coarser writer's values are exact in ns). */
function toNanos(unit: arrow.TimeUnit, v: BigInt64Array): BigInt64Array {
  if (unit === arrow.TimeUnit.NANOSECOND) return v;
  const factor = [1_000_000_000n, 1_000_000n, 1000n][unit];
  const out = new BigInt64Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] * factor;
  return out;
}

function projectDate(data: arrow.Data, path: string): arrow.Data {
  const t = data.type;
  if (t.typeId !== arrow.Type.Date) throw mismatch(path, 'date', data);
  if ((t as arrow.Date_).unit === arrow.DateUnit.DAY)
    return leaf('date', data, toInt32(data.values, data.length, path));
  const ms = toInt64(data.values, data.length, path);
  const out = new Int32Array(ms.length);
  for (let i = 0; i < ms.length; i++) out[i] = Number(floorDiv(ms[i], 86_400_000n));
  return leaf('date', data, out);
}

/** Int32 offsets (64-bit offsets of large types narrowed; a file over 2 GiB is refused). */
function offsetsOf(data: arrow.Data): Int32Array {
  const offsets: unknown = data.valueOffsets;
  if (offsets instanceof Int32Array) return offsets.subarray(0, data.length + 1);
  if (offsets instanceof BigInt64Array) {
    const out = new Int32Array(data.length + 1);
    for (let i = 0; i <= data.length; i++) {
      const o = Number(offsets[i]);
      if (o > 0x7fffffff) throw new ValidationError('a column holds over 2 GiB in one file');
      out[i] = o;
    }
    return out;
  }
  throw new ValidationError(`unexpected offsets buffer in ${String(data.type)}`);
}

function projectBinary(data: arrow.Data, path: string): arrow.Data {
  const t = data.type;
  const bytes = data.values as Uint8Array;
  if (t.typeId === arrow.Type.FixedSizeBinary) {
    const width = (t as arrow.FixedSizeBinary).byteWidth;
    const offsets = new Int32Array(data.length + 1);
    for (let i = 0; i <= data.length; i++) offsets[i] = i * width;
    return leaf('binary', data, bytes, offsets);
  }
  if (t.typeId !== arrow.Type.Binary && t.typeId !== arrow.Type.LargeBinary)
    throw mismatch(path, 'binary', data);
  return leaf('binary', data, bytes, offsetsOf(data));
}

/** Decimal128 words (little-endian two's complement) from a Decimal of any width. */
function toDecimal128(words: Uint32Array, bitWidth: number, n: number): Uint32Array {
  if (bitWidth === 128) return words.subarray(0, n * 4);
  const width = bitWidth / 32;
  const out = new Uint32Array(n * 4);
  const halves = new BigInt64Array(out.buffer);
  for (let i = 0; i < n; i++) {
    let v = 0n;
    for (let w = width - 1; w >= 0; w--) v = (v << 32n) | BigInt(words[i * width + w]);
    v = BigInt.asIntN(bitWidth, v);
    halves[2 * i] = v;
    halves[2 * i + 1] = v >> 64n;
  }
  return out;
}

function projectStruct(type: StructType, data: arrow.Data, path: string): arrow.Data {
  if (data.type.typeId !== arrow.Type.Struct) throw mismatch(path, type, data);
  const fileFields = (data.type as arrow.Struct).children;
  const children = type.fields.map((f) =>
    projectData(f.type, childById(fileFields, data.children, f.id), data.length, `${path}.${f.name}`),
  );
  return arrow.makeData({
    type: toArrowType(type) as arrow.Struct,
    length: data.length,
    ...nulls(data),
    children,
  });
}

function projectList(type: ListType, data: arrow.Data, path: string): arrow.Data {
  const id = data.type.typeId;
  if (id !== arrow.Type.List && id !== arrow.Type.LargeList) throw mismatch(path, type, data);
  const elements = data.children[0];
  const child = projectData(type.element, elements, elements.length, `${path}.element`);
  return arrow.makeData({
    type: toArrowType(type) as arrow.List,
    length: data.length,
    ...nulls(data),
    valueOffsets: offsetsOf(data),
    child,
  });
}

function projectMap(type: MapType, data: arrow.Data, path: string): arrow.Data {
  if (data.type.typeId !== arrow.Type.Map) throw mismatch(path, type, data);
  const entries = data.children[0];
  if (entries?.children.length !== 2) throw mismatch(path, type, data);
  const n = entries.length;
  const arrowType = toArrowType(type) as arrow.Map_;
  const child = arrow.makeData({
    type: arrowType.children[0].type as arrow.Struct,
    length: n,
    nullCount: 0,
    children: [
      projectData(type.key, entries.children[0], n, `${path}.key`),
      projectData(type.value, entries.children[1], n, `${path}.value`),
    ],
  });
  return arrow.makeData({
    type: arrowType,
    length: data.length,
    ...nulls(data),
    valueOffsets: offsetsOf(data),
    child,
  });
}
