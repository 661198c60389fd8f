/**
 * Iceberg values → JSON-friendly values for printing: timestamps as ISO-8601 (timestamp_ns with all nine
 * digits, so nothing is rounded to a double), decimals as exact
 * text, bytes as base64. Longs stay exact: numbers when a double holds them, else bigints, which
 * stringifyJson writes as exact JSON numbers (so a column keeps one JSON type, whatever its values' size).
 */
import { decimalParams } from '../core/spec/conversions.js';
import {
  formatDate,
  formatTimeOfDay,
  formatTimestamp,
  formatTimestampNanos,
} from '../core/spec/epoch-time.js';
import { stringifyJson } from '../core/spec/json-codec.js';
import type { IcebergType, Row, StructType, Value } from '../core/spec/types.js';

function formatDecimal(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

export function toDisplayValue(type: IcebergType, value: Value): unknown {
  if (value === null || value === undefined) return null;
  if (typeof type === 'string') {
    switch (type) {
      case 'long':
        return Number.isSafeInteger(Number(value)) ? Number(value) : BigInt(value as bigint);
      case 'date':
        return formatDate(value as number);
      case 'time':
        return formatTimeOfDay(value as bigint);
      case 'timestamp':
        return formatTimestamp(value as bigint);
      case 'timestamptz':
        return `${formatTimestamp(value as bigint)}Z`;
      case 'timestamp_ns':
        return formatTimestampNanos(value as bigint);
      case 'timestamptz_ns':
        return `${formatTimestampNanos(value as bigint)}Z`;
      case 'binary':
        return Buffer.from(value as Uint8Array).toString('base64');
    }
    const dec = decimalParams(type);
    if (dec) return formatDecimal(value as bigint, dec.scale);
    if (type.startsWith('fixed')) return Buffer.from(value as Uint8Array).toString('base64');
    if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
    return value;
  }
  if (type.type === 'struct') return toDisplayRow(type, value as Row);
  if (type.type === 'list') return (value as Value[]).map((v) => toDisplayValue(type.element, v));
  const out: Record<string, unknown> = {};
  for (const [k, v] of value as Map<Value, Value>)
    out[String(toDisplayValue(type.key, k))] = toDisplayValue(type.value, v);
  return out;
}

export function toDisplayRow(type: StructType, row: Row): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of type.fields) out[f.name] = toDisplayValue(f.type, row[f.name] ?? null);
  return out;
}

/**
 * `stringifyJson(toDisplayRow(type, row))`, compiled once per schema: each field's quoted name and a
 * writer for its type are found once, and a string, boolean, finite number or long is written straight
 * from the row (no display object, no replacer call per key). Any other value goes through
 * toDisplayValue as before. Keys come in the order JSON.stringify gives toDisplayRow's object
 * (integer-like names first), so the text is the same byte for byte.
 */
export function compileDisplayJson(type: StructType): (row: Row) => string {
  const order = new Map<string, number>();
  // Property order (integer-like keys first, ascending) and names an object cannot hold as its own
  // (`__proto__`) as toDisplayRow's object ends up with them.
  const probe: Record<string, number> = {};
  type.fields.forEach((f, i) => {
    probe[f.name] = i;
  });
  for (const name of Object.keys(probe)) order.set(name, probe[name]);
  const fields = [...order.values()].map((i) => {
    const f = type.fields[i];
    return { name: f.name, prefix: `${JSON.stringify(f.name)}:`, write: valueWriter(f.type) };
  });
  return (row) => {
    let out = '{';
    for (const f of fields) {
      const text = f.write(row[f.name] ?? null);
      if (text === undefined) continue;
      out += out.length === 1 ? f.prefix : `,${f.prefix}`;
      out += text;
    }
    return `${out}}`;
  };
}

function valueWriter(type: IcebergType): (value: Value) => string | undefined {
  const generic = (value: Value) => stringifyJson(toDisplayValue(type, value)) as string | undefined;
  switch (type) {
    case 'string':
      return (v) => (typeof v === 'string' ? JSON.stringify(v) : v === null ? 'null' : generic(v));
    case 'boolean':
      return (v) => (typeof v === 'boolean' ? (v ? 'true' : 'false') : v === null ? 'null' : generic(v));
    case 'int':
    case 'float':
    case 'double':
      return (v) =>
        typeof v === 'number' && Number.isFinite(v) ? JSON.stringify(v) : v === null ? 'null' : generic(v);
    case 'long':
      return (v) => {
        if (v === null) return 'null';
        if (typeof v !== 'bigint' && typeof v !== 'number') return generic(v);
        const n = Number(v);
        return Number.isSafeInteger(n) ? JSON.stringify(n) : BigInt(v).toString();
      };
    default:
      if (typeof type !== 'string' && type.type === 'struct') {
        const write = compileDisplayJson(type);
        return (v) => (v === null ? 'null' : typeof v === 'object' ? write(v as Row) : generic(v));
      }
      return (v) => (v === null ? 'null' : generic(v));
  }
}
