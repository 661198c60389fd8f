/**
 * The version of a CDC key: the `_kafka` lineage (topic, partition, offset) of the change that last
 * wrote it. Live rows carry it in their `_kafka` struct; a delete leaves no row, so floe's equality
 * delete rows carry the deleting change's `_kafka.topic`, `partition` and `offset` as additional
 * columns (the spec allows extra columns; `equality_ids` stays the key's, so readers compare only
 * the key). Kafka orders records only within a partition: versions compare only there.
 */
import type { RawRecord } from '../records/esm-event.js';
import { KAFKA_FIELD } from '../records/kafka-lineage.js';
import type { Row, Schema, StructField, StructType, Value } from '../spec/types.js';

/** The `_kafka` fields a version is read from and written to, as the table's schema has them. */
export interface LineageFields {
  /** The `_kafka` struct field. */
  field: StructField;
  topic: StructField;
  partition: StructField;
  offset: StructField;
}

/** `topic/partition` → the newest offset that wrote (or deleted) the key there. */
export type KeyVersions = Map<string, bigint>;

/** The schema's lineage fields, or undefined when the table has no `_kafka` (route without lineage). */
export function lineageFields(schema: Schema): LineageFields | undefined {
  const field = schema.fields.find((f) => f.name === KAFKA_FIELD);
  if (!field || typeof field.type === 'string' || field.type.type !== 'struct') return undefined;
  const child = (name: string) => (field.type as StructType).fields.find((f) => f.name === name);
  const topic = child('topic');
  const partition = child('partition');
  const offset = child('offset');
  if (!topic || !partition || !offset) return undefined;
  return { field, topic, partition, offset };
}

/** The ids of the three lineage columns a version is (keySchema keeps the `_kafka` struct around them). Never throws. */
export function lineageIds(fields: LineageFields): number[] {
  return [fields.topic.id, fields.partition.id, fields.offset.id];
}

/** The `_kafka` value of an equality delete row: the deleting change's place. Never throws. */
export function versionValue(record: RawRecord): Row {
  return { topic: record.topic, partition: record.partition, offset: record.offset };
}

/** `topic/partition`, the unit versions compare in. Never throws. */
export function partitionOf(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}

/**
 * Adds the version a read row holds (its `_kafka` value) to `versions`, keeping the newest per
 * partition. A row without lineage (written before the table had it, a delete file written before
 * deletes carried it) adds nothing. Never throws.
 */
export function addVersion(versions: KeyVersions, lineage: Value | undefined): void {
  if (lineage === null || lineage === undefined || typeof lineage !== 'object') return;
  if (Array.isArray(lineage) || lineage instanceof Uint8Array || lineage instanceof Map) return;
  const { topic, partition, offset } = lineage;
  if (typeof topic !== 'string' || typeof partition !== 'number') return;
  if (typeof offset !== 'bigint' && typeof offset !== 'number') return;
  const where = partitionOf(topic, partition);
  const seen = versions.get(where);
  const at = BigInt(offset);
  if (seen === undefined || at > seen) versions.set(where, at);
}
