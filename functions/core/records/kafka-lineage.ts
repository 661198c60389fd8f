/**
 * The `_kafka` lineage struct every row carries by default (topic, partition, offset, timestamp,
 * timestamp type, key, headers), so any row can be traced to the record it came from. A route may add
 * `value`, the record's value bytes as produced (`kafkaValue`): the mapped columns cannot give them back
 * (formats, mappings and coercions lose the encoding), and a consumer served from the table
 * (kafka-serve) should get the record as it was produced.
 */
import { ValidationError } from '../errors.js';
import { decodeValue } from '../spec/conversions.js';
import { maxFieldId } from '../spec/schema-index.js';
import type { DataFile, Row, Schema, StructField, StructType } from '../spec/types.js';
import type { KafkaHeader, RawRecord } from './esm-event.js';

export const KAFKA_FIELD = '_kafka';
/** The optional `_kafka` field holding the record's original value bytes. */
export const KAFKA_VALUE_FIELD = 'value';

/** The lineage struct with ids starting at `firstId`; with `value`, the original value bytes last. */
export function kafkaLineageType(firstId: number, options: { value?: boolean } = {}): StructType {
  let id = firstId;
  const next = () => id++;
  const field = (name: string, type: StructField['type'], required: boolean): StructField => ({
    id: next(),
    name,
    required,
    type,
  });
  const topic = field('topic', 'string', true);
  const partition = field('partition', 'int', true);
  const offset = field('offset', 'long', true);
  const timestamp = field('timestamp', 'timestamptz', false);
  const timestampType = field('timestamp_type', 'string', false);
  const key = field('key', 'binary', false);
  const headersId = next();
  const elementId = next();
  const headerKey = field('key', 'string', true);
  const headerValue = field('value', 'binary', false);
  return {
    type: 'struct',
    fields: [
      topic,
      partition,
      offset,
      timestamp,
      timestampType,
      key,
      {
        id: headersId,
        name: 'headers',
        required: false,
        type: {
          type: 'list',
          'element-id': elementId,
          'element-required': true,
          element: { type: 'struct', fields: [headerKey, headerValue] },
        },
      },
      ...(options.value ? [field(KAFKA_VALUE_FIELD, 'binary', false)] : []),
    ],
  };
}

/**
 * The schema with `_kafka` appended (fresh ids after the schema's highest), unless already there;
 * with `value`, an existing `_kafka` gains the value field too (withKafkaValue).
 */
export function withKafkaLineage(schema: Schema, options: { value?: boolean } = {}): Schema {
  if (schema.fields.some((f) => f.name === KAFKA_FIELD))
    return options.value ? withKafkaValue(schema, maxFieldId(schema)) : schema;
  const firstId = maxFieldId(schema) + 1;
  const type = kafkaLineageType(firstId + 1, options);
  return { ...schema, fields: [...schema.fields, { id: firstId, name: KAFKA_FIELD, required: false, type }] };
}

/** Whether the schema's `_kafka` struct has the original value field. Never throws. */
export function hasKafkaValue(schema: StructType): boolean {
  const lineage = schema.fields.find((f) => f.name === KAFKA_FIELD);
  if (!lineage || typeof lineage.type === 'string' || lineage.type.type !== 'struct') return false;
  return lineage.type.fields.some((f) => f.name === KAFKA_VALUE_FIELD && f.type === 'binary');
}

/**
 * The schema with an optional `_kafka.value` (binary) added under the id after `lastColumnId` (the
 * table's last assigned id, so an id a dropped column held is never reused): rows written before read
 * it as null. Unchanged when the field is there or the schema has no `_kafka` struct.
 * @throws ValidationError when `_kafka` has a `value` field that is not binary (the table was altered)
 */
export function withKafkaValue(schema: Schema, lastColumnId: number): Schema {
  if (hasKafkaValue(schema)) return schema;
  const fields = schema.fields.map((f) => {
    if (f.name !== KAFKA_FIELD || typeof f.type === 'string' || f.type.type !== 'struct') return f;
    if (f.type.fields.some((c) => c.name === KAFKA_VALUE_FIELD))
      throw new ValidationError(
        `${KAFKA_FIELD}.${KAFKA_VALUE_FIELD} exists but is not binary: it cannot hold the original value bytes; rename or drop that column`,
      );
    const id = Math.max(lastColumnId, maxFieldId(schema)) + 1;
    const value: StructField = { id, name: KAFKA_VALUE_FIELD, required: false, type: 'binary' };
    return { ...f, type: { ...f.type, fields: [...f.type.fields, value] } };
  });
  return { ...schema, fields };
}

export function headersValue(headers: KafkaHeader[]): Row[] {
  return headers.map((h) => ({ key: h.key, value: h.value }));
}

/** Epoch ms (a safe integer, esm-event.ts checks) → µs: one BigInt while the product is exact as a double. */
export function timestampMicros(ms: number): bigint {
  const micros = ms * 1000;
  return Number.isSafeInteger(micros) ? BigInt(micros) : BigInt(ms) * 1000n;
}

/** A record's `_kafka` value; `value`: with the original value bytes (a table with `_kafka.value`). */
export function kafkaLineageRow(record: RawRecord, value = false): Row {
  const row: Row = {
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    timestamp: timestampMicros(record.timestamp),
    timestamp_type: record.timestampType,
    key: record.key,
    headers: headersValue(record.headers),
  };
  if (value) row[KAFKA_VALUE_FIELD] = record.value;
  return row;
}

/** The field id of `_kafka.offset` in `schema`, if it has lineage. Never throws. */
export function offsetFieldId(schema: StructType): number | undefined {
  const lineage = schema.fields.find((f) => f.name === KAFKA_FIELD);
  if (!lineage || typeof lineage.type === 'string' || lineage.type.type !== 'struct') return undefined;
  return lineage.type.fields.find((f) => f.name === 'offset')?.id;
}

/**
 * A data file's lowest `_kafka.offset` (its lower bound); a file without the statistic counts as 0, so
 * readers in offset order read it first, which is always safe. Never throws.
 */
export function offsetLowerBound(file: DataFile, fieldId: number | undefined): bigint {
  const bytes = fieldId === undefined ? undefined : file.lower_bounds?.get(fieldId);
  if (!bytes) return 0n;
  try {
    return BigInt(decodeValue('long', bytes) as bigint);
  } catch {
    return 0n;
  }
}
