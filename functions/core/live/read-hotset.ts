/**
 * A table's hotset: the Kafka records its snapshot does not hold (hot-ranges.ts), read up to the
 * high watermarks of the moment, and mapped through the table's own route (map-hotset.ts). Reads the
 * table's metadata only, never its data files; commits nothing.
 */
import type { KafkaConnection } from '../kafka/kafka-client.js';
import type { LoadedTable } from '../catalog/catalog.js';
import { resolveMode } from '../routing/table-mode.js';
import { decodeEsmEvent, type RawRecord } from '../records/esm-event.js';
import { evolutionPolicyOf } from '../mapping/evolution/evolution-policy.js';
import type { TableRoute } from '../routing/routes.js';
import { type ConsumedMessage, ESM_MAX_BATCH_SIZE, formEsmEvents } from '../kafka/esm-batch.js';
import { fetchWatermarks, type PartitionWatermarks, type HotRange } from '../kafka/read-range.js';
import { currentSnapshot } from '../spec/metadata.js';
import { readCommittedState } from '../table/source-offsets.js';
import { type LiveFreshness, newestTimestamp } from './freshness.js';
import { type IdentityMismatch, readUncommitted } from './identity-check.js';
import { type MappedHotset, mapHotset } from './map-hotset.js';

/** What was read of one topic-partition. */
export interface HotPartition {
  topic: string;
  partition: number;
  /** The ranges read, `from` inclusive, `toExclusive` exclusive. */
  ranges: HotRange[];
  records: number;
  /** The high watermark at read time: offsets below it are in the table or in the hotset. */
  readUpTo: bigint;
}

export interface Hotset {
  snapshotId: bigint | null;
  /** Every partition of the route's topics, read or not. */
  partitions: HotPartition[];
  ranges: HotRange[];
  records: number;
  mapped: MappedHotset;
  /** Partitions whose broker records are not the ones the table committed: read whole, as the tail. */
  identityMismatches: IdentityMismatch[];
  /** The tail's newest record time and the offsets read up to (freshness.ts). */
  freshness: LiveFreshness;
}

export interface ReadHotsetOptions {
  table: LoadedTable;
  route: TableRoute;
  kafka: KafkaConnection;
  /** Passed to collectRanges. @default 30,000 */
  timeoutMs?: number;
  /** The watermarks to read up to, when the caller already fetched them. @default fetched here */
  watermarks?: PartitionWatermarks[];
}

/** Consumed messages as the ingest path's records, by way of the very ESM shape it decodes. */
export function toRawRecords(messages: readonly ConsumedMessage[]): RawRecord[] {
  // The broker address in the envelope is not read by the decoder: the event never leaves the process.
  const events = formEsmEvents('live', messages, { batchSize: ESM_MAX_BATCH_SIZE });
  return events.flatMap((formed) => decodeEsmEvent(formed.event).records);
}

function describePartitions(
  watermarks: readonly PartitionWatermarks[],
  ranges: readonly HotRange[],
  records: readonly RawRecord[],
): HotPartition[] {
  return watermarks.map((w) => ({
    topic: w.topic,
    partition: w.partition,
    ranges: ranges.filter((r) => r.topic === w.topic && r.partition === w.partition),
    records: records.filter((r) => r.topic === w.topic && r.partition === w.partition).length,
    readUpTo: w.high,
  }));
}

/**
 * Reads and maps the hotset of `table` for `route`.
 * @throws LakeError (retryable) when Kafka does not answer in time; ValidationError when the route
 *   does not fit the table; Error from kafkajs when the brokers cannot be reached (retrying may help)
 */
export async function readHotset(options: ReadHotsetOptions): Promise<Hotset> {
  const { table, route, kafka } = options;
  const md = table.metadata;
  const state = readCommittedState(md);
  const watermarks = options.watermarks ?? (await fetchWatermarks(kafka, route.topics));
  const read = await readUncommitted(kafka, state, watermarks, { timeoutMs: options.timeoutMs });
  const { ranges, records } = read;
  const mode = resolveMode(route, md.properties ?? {});
  const policy = evolutionPolicyOf(md.properties, route.schemaEvolution);
  const mapped = await mapHotset(md, route, mode, policy, records);
  const partitions = describePartitions(watermarks, ranges, records);
  return {
    snapshotId: currentSnapshot(md)?.['snapshot-id'] ?? null,
    partitions,
    ranges,
    records: records.length,
    mapped,
    identityMismatches: read.mismatches,
    freshness: {
      newestRecordMs: newestTimestamp(records),
      readUpTo: partitions.map((p) => ({ topic: p.topic, partition: p.partition, readUpTo: p.readUpTo })),
      hotRecords: records.length,
    },
  };
}
