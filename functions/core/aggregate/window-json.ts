/**
 * A result row as the JSON an emitted message carries: timestamps as ISO-8601 UTC text, decimals as
 * their exact text, longs as numbers when they fit a double exactly (else text), so any consumer
 * reads it without knowing Iceberg's value representation. The key is the group columns and
 * window_start in query order: the same window always gets the same key (Kafka compaction keeps its
 * newest message; a re-emit after a crash replaces, never adds).
 */
import { decimalParams } from '../spec/conversions.js';
import { formatTimestamp } from '../spec/epoch-time.js';
import type { PrimitiveType, Row, Schema, Value } from '../spec/types.js';
import type { AggregatePlan } from '../sql/aggregate-schema.js';

function jsonValue(type: PrimitiveType | undefined, value: Value): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') {
    if (type === 'timestamptz') return `${formatTimestamp(value)}Z`;
    if (type === 'timestamp') return formatTimestamp(value);
    const decimal = type === undefined ? undefined : decimalParams(type);
    if (decimal) {
      const negative = value < 0n;
      const digits = (negative ? -value : value).toString().padStart(decimal.scale + 1, '0');
      const text =
        decimal.scale === 0 ? digits : `${digits.slice(0, -decimal.scale)}.${digits.slice(-decimal.scale)}`;
      return negative ? `-${text}` : text;
    }
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  return value;
}

function typeOf(schema: Schema, name: string): PrimitiveType | undefined {
  const field = schema.fields.find((f) => f.name === name);
  return field && typeof field.type === 'string' ? field.type : undefined;
}

/** The message key of a window: `{"user_id":7,"window_start":"2026-11-21T12:54:00Z"}`. */
export function windowKeyJson(plan: AggregatePlan, row: Row): string {
  const out: Record<string, unknown> = {};
  for (const c of [...plan.query.groupBy, 'window_start'])
    out[c] = jsonValue(typeOf(plan.resultSchema, c), row[c] ?? null);
  return JSON.stringify(out);
}

/** The message value of a window: every result column. */
export function windowValueJson(plan: AggregatePlan, row: Row): string {
  const out: Record<string, unknown> = {};
  for (const f of plan.resultSchema.fields)
    out[f.name] = jsonValue(typeOf(plan.resultSchema, f.name), row[f.name] ?? null);
  return JSON.stringify(out);
}
