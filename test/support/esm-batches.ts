/**
 * Small ESM events for the exactly-once proofs: records whose every row says where it came from
 * (`id` = partition × 1,000,000 + offset, plus the `_kafka` lineage struct), spread over two days so a
 * batch of two or more records writes two DataFiles in a table partitioned by `day(event_ts)` (unless
 * `oneDay`).
 */
import type { TableRoute } from '../../functions/core/routing/routes.js';
import type { Schema, TableIdentifier } from '../../functions/core/spec/types.js';

export const EO_TOPIC = 'payments';

export const EO_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'partition', required: true, type: 'int' },
    { id: 3, name: 'note', required: false, type: 'string' },
    { id: 4, name: 'event_ts', required: true, type: 'timestamptz' },
  ],
};

/** A run of offsets of one Kafka partition. */
export interface OffsetRange {
  partition: number;
  first: number;
  count: number;
}

export interface EventOptions {
  /** Offsets whose value is not JSON (they go to the dead-letter table). */
  badOffsets?: { partition: number; offset: number }[];
  /** Every record on the first day: one DataFile per batch instead of two. */
  oneDay?: boolean;
}

const DAY_MS = 86_400_000;
const FIRST_DAY = Date.UTC(2026, 10, 1);

/** The row id a record carries: unique per (partition, offset). */
export function rowId(partition: number, offset: number): bigint {
  return BigInt(partition) * 1_000_000n + BigInt(offset);
}

/** The key the checks compare rows by. */
export function recordKey(partition: number, offset: number | bigint): string {
  return `${partition}:${offset}`;
}

function isBad(options: EventOptions, partition: number, offset: number): boolean {
  return (options.badOffsets ?? []).some((b) => b.partition === partition && b.offset === offset);
}

/** An MSK ESM event holding the given ranges (one `topic-partition` group per partition). */
export function esmEvent(ranges: OffsetRange[], options: EventOptions = {}): Record<string, unknown> {
  const records: Record<string, unknown[]> = {};
  for (const { partition, first, count } of ranges) {
    const groupKey = `${EO_TOPIC}-${partition}`;
    records[groupKey] ??= [];
    const group = records[groupKey];
    for (let offset = first; offset < first + count; offset++) {
      const ts = FIRST_DAY + (options.oneDay ? 0 : (offset % 2) * DAY_MS) + offset * 1000;
      const value = isBad(options, partition, offset)
        ? '{"id": not json'
        : JSON.stringify({
            id: Number(rowId(partition, offset)),
            partition,
            note: `p${partition}-o${offset}`,
            event_ts: new Date(ts).toISOString(),
          });
      group.push({
        topic: EO_TOPIC,
        partition,
        offset,
        timestamp: ts,
        timestampType: 'CREATE_TIME',
        key: Buffer.from(String(rowId(partition, offset))).toString('base64'),
        value: Buffer.from(value).toString('base64'),
        headers: [],
      });
    }
  }
  return {
    eventSource: 'aws:kafka',
    eventSourceArn:
      'arn:aws:kafka:us-east-1:123456789012:cluster/floe-eo/00000000-0000-0000-0000-000000000000-1',
    records,
  };
}

/** The keys of the good records of some ranges: what one copy of them in the table looks like. */
export function expectedKeys(ranges: OffsetRange[], options: EventOptions = {}): string[] {
  const out: string[] = [];
  for (const { partition, first, count } of ranges) {
    for (let offset = first; offset < first + count; offset++) {
      if (!isBad(options, partition, offset)) out.push(recordKey(partition, offset));
    }
  }
  return out;
}

/** A route creating the table partitioned by day, with the `_kafka` lineage struct. */
export function eoRoute(table: TableIdentifier, properties: Record<string, string> = {}): TableRoute {
  return {
    table,
    topics: [EO_TOPIC],
    schema: EO_SCHEMA,
    partitionBy: 'day(event_ts)',
    kafkaLineage: true,
    properties,
  };
}
