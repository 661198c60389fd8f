/**
 * Decoded Protobuf messages → JSON-like values, field names as declared in the `.proto`:
 *
 * | Protobuf                                  | emitted                                                 |
 * |-------------------------------------------|---------------------------------------------------------|
 * | int64, uint64, sint64, fixed64, sfixed64  | number when exact as a double, else JsonNumberText       |
 * | other integers, bool, string              | number, boolean, string                                  |
 * | float, double                             | number (NaN/±Infinity as the strings json-to-value reads)|
 * | bytes                                     | base64 text                                              |
 * | enum                                      | the value's name (its number as text when unknown)        |
 * | message                                   | object; `null` when not set                              |
 * | repeated                                  | array (empty when absent)                                |
 * | map with string keys                      | object                                                   |
 * | map with other keys                       | `[{ key, value }]`, as json-to-value reads non-string-key maps |
 * | oneof members, `optional` fields          | the value when set, else `null`                          |
 * | other proto3 scalars                      | their default when absent (proto3 has no presence for them) |
 * | google.protobuf.Timestamp                 | ISO-8601 UTC text, 6 fraction digits (9 when nanoseconds are set) |
 * | google.protobuf.Duration                  | proto3 JSON text (`"1.500s"`)                            |
 * | google.protobuf wrappers (Int64Value, …)  | the wrapped value, `null` when not set                    |
 * | google.protobuf.Struct / Value / ListValue| the JSON they hold                                        |
 * | confluent.type.Decimal                    | JsonNumberText of the exact decimal                       |
 * | google.type.Date / TimeOfDay              | `YYYY-MM-DD` / `HH:MM:SS.ffffff` (the object when partial) |
 */
import protobuf from 'protobufjs';
import { JsonNumberText } from '../records/json-to-value.js';
import {
  bigintFromTwosComplement,
  exactInteger,
  formatDecimal,
  formatEpochValue,
  formatTimeOfDay,
  jsonDouble,
  setOwn,
  toBase64,
} from './value-text.js';

type Convert = (value: unknown) => unknown;
type Message = Record<string, unknown>;

interface LongLike {
  toString(): string;
}

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

function longValue(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(v);
  if (typeof v === 'string') return BigInt(v);
  return BigInt((v as LongLike).toString());
}

function scalarConverter(type: string): Convert {
  if (LONG_TYPES.has(type)) return (v) => exactInteger(longValue(v));
  if (type === 'double' || type === 'float') return (v) => jsonDouble(v as number);
  // An absent bytes field reads as protobufjs's frozen empty array, not a Uint8Array.
  if (type === 'bytes')
    return (v) => (v instanceof Uint8Array ? toBase64(v) : Buffer.from(v as number[]).toString('base64'));
  return (v) => v;
}

function mapKeyConverter(keyType: string): (key: string) => unknown {
  if (LONG_TYPES.has(keyType)) {
    const unsigned = keyType === 'uint64' || keyType === 'fixed64';
    // protobufjs stores 64-bit map keys as 8-character hashes of the Long.
    return (k) => exactInteger(longValue(protobuf.util.longFromHash(k, unsigned)));
  }
  if (keyType === 'bool') return (k) => k === 'true';
  if (keyType === 'string') return (k) => k;
  return (k) => Number(k);
}

function get(message: Message, name: string): unknown {
  return message[name];
}

function isSet(message: Message, name: string): boolean {
  return Object.hasOwn(message, name) && message[name] !== null && message[name] !== undefined;
}

function formatDuration(seconds: bigint, nanos: number): string {
  const negative = seconds < 0n || nanos < 0;
  const s = seconds < 0n ? -seconds : seconds;
  const n = Math.abs(nanos);
  let fraction = '';
  if (n !== 0) {
    fraction = `.${String(n).padStart(9, '0')}`;
    if (n % 1_000_000 === 0) fraction = fraction.slice(0, 4);
    else if (n % 1_000 === 0) fraction = fraction.slice(0, 7);
  }
  return `${negative ? '-' : ''}${s}${fraction}s`;
}

/** A field of a well-known type: protobufjs's built-in definitions name them in camelCase. */
function wellKnownField(message: Message, snake: string): unknown {
  const camel = snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  if (isSet(message, camel)) return message[camel];
  return isSet(message, snake) ? message[snake] : undefined;
}

function structValue(v: unknown): unknown {
  const value = v as Message | null;
  if (!value) return null;
  let x = wellKnownField(value, 'number_value');
  if (x !== undefined) return jsonDouble(x as number);
  x = wellKnownField(value, 'string_value') ?? wellKnownField(value, 'bool_value');
  if (x !== undefined) return x;
  x = wellKnownField(value, 'struct_value');
  if (x !== undefined) return structObject(x);
  x = wellKnownField(value, 'list_value');
  if (x !== undefined) return listValue(x);
  return null; // null_value, or no kind set
}

function structObject(v: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(((v as Message | null)?.fields ?? {}) as Message))
    setOwn(out, k, structValue(x));
  return out;
}

function listValue(v: unknown): unknown[] {
  return (((v as Message | null)?.values ?? []) as unknown[]).map(structValue);
}

const WRAPPERS: Record<string, string> = {
  DoubleValue: 'double',
  FloatValue: 'float',
  Int64Value: 'int64',
  UInt64Value: 'uint64',
  Int32Value: 'int32',
  UInt32Value: 'uint32',
  BoolValue: 'bool',
  StringValue: 'string',
  BytesValue: 'bytes',
};

/** Conversions of well-known message types, by full name; undefined for ordinary messages. */
function wellKnownConverter(name: string): Convert | undefined {
  switch (name) {
    case 'google.protobuf.Timestamp':
      return (v) => {
        const m = v as Message;
        const nanos = BigInt((m.nanos as number) ?? 0);
        const seconds = longValue(m.seconds ?? 0);
        return nanos % 1000n === 0n
          ? formatEpochValue(seconds * 1_000_000n + nanos / 1000n, 'micros', true)
          : formatEpochValue(seconds * 1_000_000_000n + nanos, 'nanos', true);
      };
    case 'google.protobuf.Duration':
      return (v) =>
        formatDuration(longValue((v as Message).seconds ?? 0), ((v as Message).nanos as number) ?? 0);
    case 'google.protobuf.Struct':
      return structObject;
    case 'google.protobuf.Value':
      return structValue;
    case 'google.protobuf.ListValue':
      return listValue;
    case 'confluent.type.Decimal':
      return (v) => {
        const m = v as Message;
        const unscaled = bigintFromTwosComplement((m.value as Uint8Array | undefined) ?? new Uint8Array());
        return new JsonNumberText(formatDecimal(unscaled, (m.scale as number) ?? 0));
      };
    case 'google.type.Date':
      return (v) => {
        const { year, month, day } = v as { year: number; month: number; day: number };
        if (!year || !month || !day) return { year, month, day };
        return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
      };
    case 'google.type.TimeOfDay':
      return (v) => {
        const { hours, minutes, seconds, nanos } = v as Record<string, number>;
        const micros = BigInt(((hours ?? 0) * 60 + (minutes ?? 0)) * 60 + (seconds ?? 0)) * 1_000_000n;
        return formatTimeOfDay(micros + BigInt(Math.trunc((nanos ?? 0) / 1000)), 'micros') ?? v;
      };
  }
  const wrapped = name.startsWith('google.protobuf.')
    ? WRAPPERS[name.slice('google.protobuf.'.length)]
    : undefined;
  if (wrapped) {
    const inner = scalarConverter(wrapped);
    return (v) =>
      inner((v as Message).value ?? (wrapped === 'bytes' ? new Uint8Array() : defaultOf(wrapped)));
  }
  return undefined;
}

function defaultOf(scalar: string): unknown {
  if (scalar === 'bool') return false;
  if (scalar === 'string') return '';
  return 0;
}

/** Converters per message type, built once; recursive types reuse the one being built. */
export class ProtobufJsonConverter {
  readonly #memo = new Map<protobuf.Type, Convert>();

  /** The converter of a message type's decoded messages. */
  forType(type: protobuf.Type): Convert {
    const known = this.#memo.get(type);
    if (known) return known;
    let impl: Convert = (v) => v;
    const convert: Convert = (v) => impl(v);
    this.#memo.set(type, convert);
    impl = wellKnownConverter(type.fullName.replace(/^\./, '')) ?? this.#buildMessage(type);
    return convert;
  }

  #valueConverter(field: protobuf.Field): Convert {
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Type) {
      const inner = this.forType(resolved);
      return (v) => (v === null || v === undefined ? null : inner(v));
    }
    if (resolved instanceof protobuf.Enum) {
      const names = resolved.valuesById;
      return (v) => names[v as number] ?? String(v);
    }
    return scalarConverter(field.type);
  }

  #buildMessage(type: protobuf.Type): Convert {
    const fields = type.fieldsArray.map((field) => {
      const name = field.name;
      const value = this.#valueConverter(field);
      if (field.map) {
        const keyType = (field as unknown as protobuf.MapField).keyType;
        const key = mapKeyConverter(keyType);
        if (keyType === 'string') {
          return (m: Message, out: Message) => {
            const obj: Message = {};
            for (const [k, x] of Object.entries((get(m, name) ?? {}) as Message)) setOwn(obj, k, value(x));
            setOwn(out, name, obj);
          };
        }
        return (m: Message, out: Message) => {
          const entries = Object.entries((get(m, name) ?? {}) as Message).map(([k, x]) => ({
            key: key(k),
            value: value(x),
          }));
          setOwn(out, name, entries);
        };
      }
      if (field.repeated) {
        return (m: Message, out: Message) =>
          setOwn(out, name, ((get(m, name) ?? []) as unknown[]).map(value));
      }
      if (field.resolvedType instanceof protobuf.Type || field.hasPresence) {
        return (m: Message, out: Message) => setOwn(out, name, isSet(m, name) ? value(get(m, name)) : null);
      }
      // Implicit presence: an absent proto3 scalar is its default, which the prototype supplies.
      return (m: Message, out: Message) => setOwn(out, name, value(get(m, name)));
    });
    return (v) => {
      const out: Message = {};
      for (const set of fields) set(v as Message, out);
      return out;
    };
  }
}
