/**
 * Pure parts of replay: a table row's `_kafka` lineage, the order rows are produced in, the target
 * partition of each, and the record built from it (client-neutral; functions/core/kafka turns it into
 * a kafkajs message).
 */
import { KAFKA_FIELD } from '../records/kafka-lineage.js';
import { ValidationError } from '../errors.js';
import type { Row, StructType } from '../spec/types.js';
import {
  advanceCheckpoint,
  type Checkpoint,
  CHECKPOINT_HEADER,
  formatCheckpoint,
  formatSource,
  SOURCE_HEADER,
  type SourcePosition,
} from './replay-source.js';

export interface RecordHeader {
  key: string;
  /** Null stays null: Kafka distinguishes a null header value from an empty one. */
  value: Uint8Array | null;
}

/** A record to produce: its target partition, and the bytes Kafka keeps. */
export interface ReplayRecord {
  partition: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  /** CreateTime in epoch ms; undefined lets the producer stamp it. */
  timestampMs?: number;
  headers: RecordHeader[];
  source: SourcePosition;
}

/** A row's lineage as replay needs it. */
export interface RowLineage extends SourcePosition {
  key: Uint8Array | null;
  timestampMs?: number;
  headers: RecordHeader[];
}

/** @throws ValidationError when the row has no `_kafka` lineage (a table written without it) */
export function lineageOf(row: Row): RowLineage {
  const lineage = row[KAFKA_FIELD] as Row | null | undefined;
  const topic = lineage?.topic;
  const partition = lineage?.partition;
  const offset = lineage?.offset;
  if (!lineage || typeof topic !== 'string' || typeof partition !== 'number' || offset === undefined) {
    throw new ValidationError(
      `row has no ${KAFKA_FIELD} lineage (topic, partition, offset): replay needs a table floe wrote with lineage`,
    );
  }
  const micros = lineage.timestamp as bigint | number | null | undefined;
  const headers = ((lineage.headers as Row[] | null | undefined) ?? []).map((h) => ({
    key: String(h.key),
    value: (h.value as Uint8Array | null | undefined) ?? null,
  }));
  return {
    topic,
    partition,
    offset: BigInt(offset as bigint | number),
    key: (lineage.key as Uint8Array | null | undefined) ?? null,
    // µs → ms; Kafka timestamps are whole ms, so the division is exact for rows floe wrote.
    timestampMs: micros === null || micros === undefined ? undefined : Number(BigInt(micros) / 1000n),
    headers,
  };
}

/** The table schema without `_kafka`: what the record's value holds. */
export function valueSchema(schema: StructType): StructType {
  return { type: 'struct', fields: schema.fields.filter((f) => f.name !== KAFKA_FIELD) };
}

export function sourceKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/** One source partition's rows in `_kafka.offset` order. */
export interface SourcePartitionRows<T> {
  topic: string;
  partition: number;
  rows: T[];
}

/**
 * Groups rows per source topic-partition and sorts each group by offset; groups come in topic, then
 * partition order, so runs are reproducible. Two rows with one offset (a table that holds a record
 * twice) keep both, in scan order.
 */
export function orderBySource<T extends { lineage: SourcePosition }>(
  rows: Iterable<T>,
): SourcePartitionRows<T>[] {
  const groups = new Map<string, SourcePartitionRows<T>>();
  for (const r of rows) {
    const k = sourceKey(r.lineage.topic, r.lineage.partition);
    let group = groups.get(k);
    if (!group) {
      group = { topic: r.lineage.topic, partition: r.lineage.partition, rows: [] };
      groups.set(k, group);
    }
    group.rows.push(r);
  }
  const out = [...groups.values()].sort((a, b) =>
    a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition,
  );
  for (const g of out) {
    g.rows.sort((a, b) =>
      a.lineage.offset < b.lineage.offset ? -1 : a.lineage.offset > b.lineage.offset ? 1 : 0,
    );
  }
  return out;
}

export type Partitioning = 'same' | 'key';

/**
 * The target partition of a record. `same`: the source partition number (checked against the
 * target's partition count before anything is sent). `key`: Kafka's default partitioner on the key
 * bytes (`hashKey` supplies murmur2); a null key goes to source partition modulo the count, so a
 * rerun sends it where the first run did (Kafka's round robin would not, and the checkpoint is per
 * target partition).
 * @throws ValidationError for `same` when the target has too few partitions
 */
export function targetPartition(
  partitioning: Partitioning,
  source: { partition: number; key: Uint8Array | null },
  partitionCount: number,
  hashKey: (key: Uint8Array, count: number) => number,
): number {
  if (partitioning === 'same') {
    if (source.partition >= partitionCount) {
      throw new ValidationError(
        `--partitioning same: source partition ${source.partition} has no counterpart in a target of ${partitionCount} partitions (use --partitioning key, or a target with more partitions)`,
      );
    }
    return source.partition;
  }
  return source.key === null ? source.partition % partitionCount : hashKey(source.key, partitionCount);
}

/** The record for a row: original key, headers and timestamp, the row (no `_kafka`) as the value. */
export function buildRecord(lineage: RowLineage, partition: number, value: Uint8Array | null): ReplayRecord {
  // A `floe-source`/`floe-checkpoint` the source record carried (a replay of a replay) is replaced:
  // the target's checkpoint must name this replay's source.
  const headers = lineage.headers.filter((h) => h.key !== SOURCE_HEADER && h.key !== CHECKPOINT_HEADER);
  headers.push({ key: SOURCE_HEADER, value: Buffer.from(formatSource(lineage)) });
  return {
    partition,
    key: lineage.key,
    value,
    timestampMs: lineage.timestampMs,
    headers,
    source: { topic: lineage.topic, partition: lineage.partition, offset: lineage.offset },
  };
}

/**
 * Stamps the checkpoint header on the last record of each target partition in a batch, from the
 * checkpoints as they stand before it (which are not changed: they advance only once the batch is
 * acknowledged). Returns the checkpoints as they will stand after the batch.
 */
export function stampCheckpoints(
  batch: ReplayRecord[],
  before: ReadonlyMap<number, Checkpoint>,
): Map<number, Checkpoint> {
  const after = new Map<number, Checkpoint>();
  const lastIndex = new Map<number, number>();
  batch.forEach((r, i) => {
    let cp = after.get(r.partition);
    if (!cp) {
      cp = cloneCheckpoint(before.get(r.partition));
      after.set(r.partition, cp);
    }
    advanceCheckpoint(cp, r.source);
    lastIndex.set(r.partition, i);
  });
  for (const [partition, i] of lastIndex) {
    const r = batch[i];
    r.headers = [
      ...r.headers.filter((h) => h.key !== CHECKPOINT_HEADER),
      { key: CHECKPOINT_HEADER, value: Buffer.from(formatCheckpoint(after.get(partition)!)) },
    ];
  }
  return after;
}

export function cloneCheckpoint(checkpoint: Checkpoint | undefined): Checkpoint {
  return new Map(
    [...(checkpoint ?? new Map<string, Map<number, bigint>>())].map(([t, p]) => [t, new Map(p)]),
  );
}

/** Bounds on which rows replay: offsets per source partition number and CreateTime, inclusive/exclusive as flagged. */
export interface ReplayBounds {
  /** Source partition → first offset to replay (inclusive). */
  fromOffsets?: Map<number, bigint>;
  /** Source partition → offset to stop before (exclusive). */
  toOffsets?: Map<number, bigint>;
  /** Epoch ms: rows with a timestamp at or after. */
  fromTimeMs?: number;
  /** Epoch ms: rows with a timestamp before. */
  toTimeMs?: number;
}

export function withinBounds(lineage: RowLineage, bounds: ReplayBounds): boolean {
  const from = bounds.fromOffsets?.get(lineage.partition);
  if (from !== undefined && lineage.offset < from) return false;
  const to = bounds.toOffsets?.get(lineage.partition);
  if (to !== undefined && lineage.offset >= to) return false;
  if (bounds.fromTimeMs !== undefined && (lineage.timestampMs ?? -Infinity) < bounds.fromTimeMs) return false;
  if (bounds.toTimeMs !== undefined && (lineage.timestampMs ?? Infinity) >= bounds.toTimeMs) return false;
  return true;
}

/**
 * `P:O,P:O` → partition → offset.
 * @throws ValidationError for anything else
 */
export function parsePartitionOffsets(text: string, flag: string): Map<number, bigint> {
  const out = new Map<number, bigint>();
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^(\d+):(\d+)$/.exec(part);
    if (!m) throw new ValidationError(`${flag}: '${part}' is not PARTITION:OFFSET`);
    if (out.has(Number(m[1]))) throw new ValidationError(`${flag}: partition ${m[1]} given twice`);
    out.set(Number(m[1]), BigInt(m[2]));
  }
  if (out.size === 0) throw new ValidationError(`${flag}: give PARTITION:OFFSET[,PARTITION:OFFSET...]`);
  return out;
}
