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
