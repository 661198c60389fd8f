/**
 * The `_kafka` lineage struct every row carries by default (topic, partition, offset, timestamp,
 * timestamp type, key, headers), so any row can be traced to the record it came from.
 */
import { decodeValue } from '../spec/conversions.js';
import { maxFieldId } from '../spec/schema-index.js';
import type { DataFile, Row, Schema, StructField, StructType } from '../spec/types.js';
import type { KafkaHeader, RawRecord } from './esm-event.js';

export const KAFKA_FIELD = '_kafka';

/** The lineage struct with ids starting at `firstId`. */
export function kafkaLineageType(firstId: number): StructType {
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
    ],
  };
}

/** The schema with `_kafka` appended (fresh ids after the schema's highest), unless already there. */
export function withKafkaLineage(schema: Schema): Schema {
  if (schema.fields.some((f) => f.name === KAFKA_FIELD)) return schema;
  const firstId = maxFieldId(schema) + 1;
  const type = kafkaLineageType(firstId + 1);
  return { ...schema, fields: [...schema.fields, { id: firstId, name: KAFKA_FIELD, required: false, type }] };
}

export function headersValue(headers: KafkaHeader[]): Row[] {
  return headers.map((h) => ({ key: h.key, value: h.value }));
}

/** Epoch ms (a safe integer, esm-event.ts checks) → µs: one BigInt while the product is exact as a double. */
export function timestampMicros(ms: number): bigint {
  const micros = ms * 1000;
  return Number.isSafeInteger(micros) ? BigInt(micros) : BigInt(ms) * 1000n;
}

export function kafkaLineageRow(record: RawRecord): Row {
  return {
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    timestamp: timestampMicros(record.timestamp),
    timestamp_type: record.timestampType,
    key: record.key,
    headers: headersValue(record.headers),
  };
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
