/**
 * The `_kafka` lineage struct every row carries by default (topic, partition, offset, timestamp,
 * timestamp type, key, headers), so any row can be traced to the record it came from. A route may add
 * `value`, the record's value bytes as produced (`kafkaValue`): the mapped columns cannot give them back
 * (formats, mappings and coercions lose the encoding), and a consumer served from the table
 * (kafka-serve) should get the record as it was produced. A route reading Confluent registry frames may
 * add `schema_id`, the id the record's value frame named, so kafka-serve can encode a row that kept no
 * bytes back through the registry with the schema it was written with (one int a row, dictionary-encoded
 * in Parquet: far cheaper than the bytes).
 */
import { ValidationError } from '../errors.js';
import { decodeValue } from '../spec/conversions.js';
import { maxFieldId } from '../spec/schema-index.js';
import type { DataFile, Row, Schema, StructField, StructType } from '../spec/types.js';
import type { KafkaHeader, RawRecord } from './esm-event.js';

export const KAFKA_FIELD = '_kafka';
/** The optional `_kafka` field holding the record's original value bytes. */
export const KAFKA_VALUE_FIELD = 'value';
/** The optional `_kafka` field holding the Confluent schema id the record's value was framed with. */
export const KAFKA_SCHEMA_ID_FIELD = 'schema_id';

/** The optional `_kafka` fields: the original value bytes, the value's registry schema id. */
export interface LineageExtras {
  value?: boolean;
  schemaId?: boolean;
}

/**
 * The lineage struct with ids starting at `firstId`; with `value`, the original value bytes, with
 * `schemaId`, the value's schema id, after the headers.
 */
export function kafkaLineageType(firstId: number, options: LineageExtras = {}): StructType {
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
      ...(options.schemaId ? [field(KAFKA_SCHEMA_ID_FIELD, 'int', false)] : []),
    ],
  };
}

/**
 * The schema with `_kafka` appended (fresh ids after the schema's highest), unless already there; an
 * existing `_kafka` gains the asked-for optional fields it lacks (withLineageExtras).
 */
export function withKafkaLineage(schema: Schema, options: LineageExtras = {}): Schema {
  if (schema.fields.some((f) => f.name === KAFKA_FIELD))
    return withLineageExtras(schema, maxFieldId(schema), options);
  const firstId = maxFieldId(schema) + 1;
  const type = kafkaLineageType(firstId + 1, options);
  return { ...schema, fields: [...schema.fields, { id: firstId, name: KAFKA_FIELD, required: false, type }] };
}

function hasLineageField(schema: StructType, name: string, type: 'binary' | 'int'): boolean {
  const lineage = schema.fields.find((f) => f.name === KAFKA_FIELD);
  if (!lineage || typeof lineage.type === 'string' || lineage.type.type !== 'struct') return false;
  return lineage.type.fields.some((f) => f.name === name && f.type === type);
}

/** Whether the schema's `_kafka` struct has the original value field. Never throws. */
export function hasKafkaValue(schema: StructType): boolean {
  return hasLineageField(schema, KAFKA_VALUE_FIELD, 'binary');
}

/** Whether the schema's `_kafka` struct has the value's schema id field. Never throws. */
export function hasKafkaSchemaId(schema: StructType): boolean {
  return hasLineageField(schema, KAFKA_SCHEMA_ID_FIELD, 'int');
}

/**
 * The schema with the asked-for optional `_kafka` fields it lacks (`value` binary, `schema_id` int)
 * added under ids after `lastColumnId` (the table's last assigned id, so an id a dropped column held is
 * never reused): rows written before read them as null. Unchanged when they are there or the schema has
 * no `_kafka` struct.
 * @throws ValidationError when `_kafka` has a field of that name and another type (the table was altered)
 */
export function withLineageExtras(schema: Schema, lastColumnId: number, options: LineageExtras): Schema {
  const wanted: [string, 'binary' | 'int'][] = [];
  if (options.value && !hasKafkaValue(schema)) wanted.push([KAFKA_VALUE_FIELD, 'binary']);
  if (options.schemaId && !hasKafkaSchemaId(schema)) wanted.push([KAFKA_SCHEMA_ID_FIELD, 'int']);
  if (wanted.length === 0) return schema;
  let id = Math.max(lastColumnId, maxFieldId(schema));
  const fields = schema.fields.map((f) => {
    if (f.name !== KAFKA_FIELD || typeof f.type === 'string' || f.type.type !== 'struct') return f;
    const added: StructField[] = [];
    for (const [name, type] of wanted) {
      if (f.type.fields.some((c) => c.name === name))
        throw new ValidationError(
          `${KAFKA_FIELD}.${name} exists but is not ${type}: it cannot hold ${name === KAFKA_VALUE_FIELD ? 'the original value bytes' : "the value's schema id"}; rename or drop that column`,
        );
      added.push({ id: ++id, name, required: false, type });
    }
    return { ...f, type: { ...f.type, fields: [...f.type.fields, ...added] } };
  });
  return { ...schema, fields };
}

/**
 * The schema with an optional `_kafka.value` (binary) added (withLineageExtras).
 * @throws ValidationError when `_kafka` has a `value` field that is not binary (the table was altered)
 */
export function withKafkaValue(schema: Schema, lastColumnId: number): Schema {
  return withLineageExtras(schema, lastColumnId, { value: true });
}

/**
 * The schema id of a Confluent-framed value (magic byte 0, a non-negative big-endian int32), else null.
 * Read from the bytes, not the decoder's answer: the lineage is written from the raw record, and a
 * route whose format decoded the value as a frame saw exactly these bytes. Never throws.
 */
export function confluentSchemaIdOf(value: Uint8Array | null): number | null {
  if (value === null || value.length < 5 || value[0] !== 0) return null;
  const id = ((value[1] << 24) | (value[2] << 16) | (value[3] << 8) | value[4]) >>> 0;
  return id <= 0x7fffffff ? id : null;
}

export function headersValue(headers: KafkaHeader[]): Row[] {
  return headers.map((h) => ({ key: h.key, value: h.value }));
}

/** Epoch ms (a safe integer, esm-event.ts checks) → µs: one BigInt while the product is exact as a double. */
export function timestampMicros(ms: number): bigint {
  const micros = ms * 1000;
  return Number.isSafeInteger(micros) ? BigInt(micros) : BigInt(ms) * 1000n;
}

/**
 * A record's `_kafka` value; `value`: with the original value bytes (a table with `_kafka.value`);
 * `schemaId`: with the value frame's schema id (a table with `_kafka.schema_id`).
 */
export function kafkaLineageRow(record: RawRecord, value = false, schemaId = false): Row {
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
  if (schemaId) row[KAFKA_SCHEMA_ID_FIELD] = confluentSchemaIdOf(record.value);
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
