/**
 * A table's rows back to Protobuf by the schema their records had (kafka-serve serving a row that kept
 * no value bytes): the inverse of protobuf-to-json.ts and the mapping, written with protobufjs (the
 * library the decoder uses). The record's message type is the schema's one top-level message that no
 * other top-level message uses (the registry keeps the schema, not which message a record was: a schema
 * with two such roots does not compile). protobufjs leaves out proto3 fields without presence that hold
 * their default, as protoc's serializers do, and writes fields in field-number order, so a row
 * holding its record's values encodes to the record's bytes (maps in the order the table gives).
 * A field the table does not hold (a renamed or coerced column) makes the schema not compile; a value
 * that cannot be given back exactly makes the row UNFIT: the caller serves JSON.
 */
import protobuf from 'protobufjs';
import { decimalParams } from '../spec/conversions.js';
import type { IcebergType, Row, StructType, Value } from '../spec/types.js';
import {
  type Convert,
  memoisedConverter,
  toBytes,
  toDouble,
  toEpoch,
  toEpochDays,
  toFloat,
  toInt32,
  toInt64,
  toTimeOfDay,
  toUnscaled,
  ShapeMismatch,
  twosComplement,
  UNFIT,
  type Unfit,
} from './encode-values.js';
import { compileProtobufSchema } from './protobuf-schema.js';

const nonNull =
  (convert: Convert): Convert =>
  (v) =>
    v === null || v === undefined ? UNFIT : convert(v);

function mismatch(path: string, what: string): ShapeMismatch {
  return new ShapeMismatch(`${path || 'the value'}: ${what}`);
}

/** A 64-bit integer as the `{ low, high }` bits protobufjs's writer takes. */
function longBits(n: bigint, unsigned: boolean): { low: number; high: number; unsigned: boolean } | Unfit {
  if (unsigned ? n < 0n || n >= 2n ** 64n : n < -(2n ** 63n) || n >= 2n ** 63n) return UNFIT;
  const u = BigInt.asUintN(64, n);
  return { low: Number(u & 0xffffffffn) | 0, high: Number(u >> 32n) | 0, unsigned };
}

function scalar(type: string, column: IcebergType, path: string): Convert | ShapeMismatch {
  const c = typeof column === 'string' ? column : undefined;
  const ints = c === 'int' || c === 'long';
  const fail = () => mismatch(path, `a ${type} cannot come from a ${c ?? 'nested'} column`);
  switch (type) {
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return ints ? nonNull(toInt32) : fail();
    case 'uint32':
    case 'fixed32':
      return ints
        ? nonNull((v) => {
            const n = toInt64(v, column);
            return n === UNFIT || n < 0n || n > 0xffffffffn ? UNFIT : Number(n);
          })
        : fail();
    case 'int64':
    case 'sint64':
    case 'sfixed64':
    case 'uint64':
    case 'fixed64': {
      const unsigned = type === 'uint64' || type === 'fixed64';
      const scale0 = decimalParams(column)?.scale === 0;
      if (!ints && !scale0) return fail();
      return nonNull((v) =>
        typeof v === 'bigint' || typeof v === 'number' ? longBits(BigInt(v), unsigned) : UNFIT,
      );
    }
    case 'double':
      return c === 'double' || c === 'float' || ints ? nonNull(toDouble) : fail();
    case 'float':
      return c === 'double' || c === 'float' || ints ? nonNull(toFloat) : fail();
    case 'bool':
      return c === 'boolean' ? nonNull((v) => (typeof v === 'boolean' ? v : UNFIT)) : fail();
    case 'string':
      return c === 'string' || c === 'uuid' ? nonNull((v) => (typeof v === 'string' ? v : UNFIT)) : fail();
    case 'bytes':
      return c === 'binary' || c === 'string' ? nonNull(toBytes) : fail();
    default:
      return fail();
  }
}

const DURATION = /^(-?)(\d+)(?:\.(\d{3}|\d{6}|\d{9}))?s$/;

/** Conversions into well-known message types, by full name; undefined for ordinary messages. */
function wellKnown(name: string, column: IcebergType, path: string): Convert | ShapeMismatch | undefined {
  const c = typeof column === 'string' ? column : undefined;
  switch (name) {
    case 'google.protobuf.Timestamp':
      return nonNull((v) => {
        const micros = toEpoch(v, column, 'micros', true);
        const nanos = micros === UNFIT ? toEpoch(v, column, 'nanos', true) : micros * 1000n;
        if (nanos === UNFIT) return UNFIT;
        const seconds = nanos >= 0n ? nanos / 1_000_000_000n : -((-nanos + 999_999_999n) / 1_000_000_000n);
        return { seconds: longBits(seconds, false), nanos: Number(nanos - seconds * 1_000_000_000n) };
      });
    case 'google.protobuf.Duration':
      if (c !== 'string') return mismatch(path, `a Duration cannot come from a ${c ?? 'nested'} column`);
      return nonNull((v) => {
        const m = typeof v === 'string' ? DURATION.exec(v) : null;
        if (!m) return UNFIT;
        const sign = m[1] === '-' ? -1n : 1n;
        const nanos = Number(sign) * Number((m[3] ?? '').padEnd(9, '0'));
        return { seconds: longBits(sign * BigInt(m[2]), false), nanos: nanos === 0 ? 0 : nanos };
      });
    case 'confluent.type.Decimal': {
      const scale = decimalParams(column)?.scale;
      if (scale === undefined)
        return mismatch(path, 'a confluent.type.Decimal needs a decimal column (its scale)');
      // Confluent writes BigDecimal's precision: the unscaled value's digits.
      return nonNull((v) => {
        const unscaled = toUnscaled(v, column, scale);
        if (unscaled === UNFIT) return UNFIT;
        const precision = (unscaled < 0n ? -unscaled : unscaled).toString().length;
        return { value: twosComplement(unscaled), precision, scale };
      });
    }
    case 'google.type.Date':
      return nonNull((v) => {
        const days = toEpochDays(v, column);
        if (days === UNFIT) return UNFIT;
        const d = new Date(days * 86_400_000);
        return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
      });
    case 'google.type.TimeOfDay':
      return nonNull((v) => {
        const micros = toTimeOfDay(v, column, 'micros');
        if (micros === UNFIT) return UNFIT;
        const s = Number(micros / 1_000_000n);
        const nanos = Number(micros % 1_000_000n) * 1000;
        return { hours: Math.floor(s / 3600), minutes: Math.floor(s / 60) % 60, seconds: s % 60, nanos };
      });
  }
  if (name.startsWith('google.protobuf.') && name.endsWith('Value') && !name.endsWith('.Value')) {
    const wrapped = name.slice('google.protobuf.'.length, -'Value'.length).toLowerCase();
    if (wrapped === 'list') return mismatch(path, `${name} is not re-encoded`);
    const inner = scalar(wrapped, column, path);
    if (inner instanceof ShapeMismatch) return inner;
    return nonNull((v) => {
      const x = inner(v);
      return x === UNFIT ? UNFIT : { value: x };
    });
  }
  if (
    name.startsWith('google.protobuf.') &&
    ['Struct', 'Value', 'ListValue', 'Any'].some((n) => name.endsWith(`.${n}`))
  )
    return mismatch(path, `${name} is not re-encoded`);
  return undefined;
}

type Memo = Map<protobuf.Type, Map<IcebergType, Convert>>;

function messageConverter(
  type: protobuf.Type,
  column: IcebergType,
  path: string,
  memo: Memo,
): Convert | ShapeMismatch {
  // Well-known types and non-struct columns are never kept in `memo`, so they are decided first.
  const special = wellKnown(type.fullName.slice(1), column, path);
  if (special) return special;
  if (typeof column === 'string' || column.type !== 'struct')
    return mismatch(
      path,
      `message ${type.name} cannot come from a ${typeof column === 'string' ? column : column.type} column`,
    );
  return memoisedConverter(memo, type, column, () => buildMessageConverter(type, column, path, memo));
}

/** The converter of a message whose columns are `column`'s fields (messageConverter's). */
function buildMessageConverter(
  type: protobuf.Type,
  column: StructType,
  path: string,
  memo: Memo,
): Convert | ShapeMismatch {
  const fields: [string, string, Convert, boolean][] = [];
  for (const field of type.fieldsArray) {
    const at = path ? `${path}.${field.name}` : field.name;
    const target = column.fields.find((f) => f.name === field.name);
    const implicit =
      !field.repeated && !field.map && !field.hasPresence && !(field.resolvedType instanceof protobuf.Type);
    if (!target) {
      // A field never set gave the table no column; a proto3 scalar always has a value, so it must be there.
      if (implicit) return mismatch(at, 'the table has no column of that name');
      continue;
    }
    const convert = fieldConverter(field, target.type, at, memo);
    if (convert instanceof ShapeMismatch) return convert;
    fields.push([field.name, target.name, convert, implicit]);
  }
  return nonNull((v) => {
    const row = v as Row;
    const out: Record<string, unknown> = {};
    for (const [name, columnName, convert, implicit] of fields) {
      const x = row[columnName];
      if (x === null || x === undefined) {
        if (implicit) return UNFIT; // a proto3 scalar is never null
        continue;
      }
      const converted = convert(x);
      if (converted === UNFIT) return UNFIT;
      // protobufjs leaves out a proto3 scalar holding its default, as protoc's serializers do.
      out[name] = converted;
    }
    return out;
  });
}

function valueConverter(
  field: protobuf.Field,
  column: IcebergType,
  path: string,
  memo: Memo,
): Convert | ShapeMismatch {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return messageConverter(resolved, column, path, memo);
  if (resolved instanceof protobuf.Enum) {
    if (column !== 'string')
      return mismatch(
        path,
        `an enum cannot come from a ${typeof column === 'string' ? column : column.type} column`,
      );
    const values = resolved.values;
    return nonNull((v) => {
      if (typeof v !== 'string') return UNFIT;
      if (Object.hasOwn(values, v)) return values[v];
      // An unknown number the decoder kept as its text.
      return /^-?\d+$/.test(v) && !Object.hasOwn(resolved.valuesById, Number(v)) ? Number(v) : UNFIT;
    });
  }
  return scalar(field.type, column, path);
}

function fieldConverter(
  field: protobuf.Field,
  column: IcebergType,
  path: string,
  memo: Memo,
): Convert | ShapeMismatch {
  if (field.map) {
    const keyType = (field as unknown as protobuf.MapField).keyType;
    if (keyType !== 'string') return mismatch(path, `a map with ${keyType} keys is not re-encoded`);
    if (typeof column === 'string' || column.type === 'list')
      return mismatch(path, 'a map needs a map or struct column');
    if (column.type === 'map') {
      const values = valueConverter(field, column.value, `${path}{}`, memo);
      if (values instanceof ShapeMismatch) return values;
      return nonNull((v) => entries([...(v as Map<Value, Value>)], values));
    }
    const fields: [string, Convert][] = [];
    for (const f of column.fields) {
      const convert = valueConverter(field, f.type, `${path}.${f.name}`, memo);
      if (convert instanceof ShapeMismatch) return convert;
      fields.push([f.name, convert]);
    }
    // A map inferred as a struct: a null field is a key the record lacked (map values are never null).
    return nonNull((v) => {
      const out: Record<string, unknown> = {};
      for (const [name, convert] of fields) {
        const x = (v as Row)[name];
        if (x === null || x === undefined) continue;
        const converted = convert(x);
        if (converted === UNFIT) return UNFIT;
        out[name] = converted;
      }
      return out;
    });
  }
  if (field.repeated) {
    if (typeof column === 'string' || column.type !== 'list')
      return mismatch(path, 'a repeated field needs a list column');
    const element = valueConverter(field, column.element, `${path}[]`, memo);
    if (element instanceof ShapeMismatch) return element;
    return nonNull((v) => {
      const out: unknown[] = [];
      for (const x of v as Value[]) {
        const converted = element(x);
        if (converted === UNFIT) return UNFIT;
        out.push(converted);
      }
      return out;
    });
  }
  return valueConverter(field, column, path, memo);
}

function entries(pairs: [Value, Value][], convert: Convert): Record<string, unknown> | Unfit {
  const out: Record<string, unknown> = {};
  for (const [k, x] of pairs) {
    const converted = convert(x);
    if (converted === UNFIT || typeof k !== 'string') return UNFIT;
    out[k] = converted;
  }
  return out;
}

/** Encodes a table's row as a Confluent Protobuf payload (message indexes + message), or undefined. */
export type ProtobufRowEncoder = (row: Row) => Buffer | undefined;

/**
 * Compiles a `.proto` schema (with its imports: path → source) against a table's value columns.
 * @returns the encoder, or a ShapeMismatch saying why the table's rows cannot be this schema's messages
 * @throws Error when the schema does not compile
 */
export function compileProtobufRowEncoder(
  source: string,
  imports: ReadonlyMap<string, string>,
  table: StructType,
): ProtobufRowEncoder | ShapeMismatch {
  const schema = compileProtobufSchema(source, imports);
  const used = new Set<protobuf.Type>();
  for (const m of schema.messages)
    for (const f of m.fieldsArray) if (f.resolvedType instanceof protobuf.Type) used.add(f.resolvedType);
  const roots = schema.messages.filter((m) => !used.has(m));
  if (roots.length !== 1)
    return mismatch(
      '',
      `the schema declares ${roots.length} top-level messages no other uses; which one a record was is not kept`,
    );
  const root = roots[0];
  const convert = messageConverter(root, table, '', new Map());
  if (convert instanceof ShapeMismatch) return convert;
  const index = schema.messages.indexOf(root);
  // Confluent's message indexes: [0] is the single byte 0; else a zig-zag count (1) and the index.
  const indexes = Buffer.from(index === 0 ? [0] : [2, ...zigzagVarint(index)]);
  return (row) => {
    const message = convert(row);
    if (message === UNFIT) return undefined;
    try {
      return Buffer.concat([indexes, root.encode(message as Record<string, unknown>).finish()]);
    } catch {
      return undefined;
    }
  };
}

/** A non-negative int as a zig-zag varint (2n), as Confluent writes message indexes. */
function zigzagVarint(n: number): number[] {
  const out: number[] = [];
  let v = n * 2;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}
