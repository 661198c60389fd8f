/**
 * The reads of the live view (functions/core/live/) and of replay (functions/core/replay/): watermarks
 * from the admin client, and every record of bounded offset ranges per topic-partition, group-free
 * (read-ranges.ts). Nothing is ever committed.
 */
import type { ConsumedMessage } from './esm-batch.js';
import type { KafkaConnection } from './kafka-client.js';
import { readRanges, consumedOf } from './read-ranges.js';

/** A partition's watermarks: the oldest offset still held and the offset the next record gets. */
export interface PartitionWatermarks {
  topic: string;
  partition: number;
  low: bigint;
  high: bigint;
}

/** Offsets `from` (inclusive) to `toExclusive` of one topic-partition. */
export interface HotRange {
  topic: string;
  partition: number;
  from: bigint;
  toExclusive: bigint;
}

/** How long a bounded read of ranges may take by default. */
export const DEFAULT_READ_TIMEOUT_MS = 30_000;

export interface CollectRangesOptions {
  /** Give up when the ranges are not read within this time. @default DEFAULT_READ_TIMEOUT_MS */
  timeoutMs?: number;
}

/**
 * The watermarks of every partition of the topics, sorted by topic and partition (a topic the broker
 * does not know has none, unless the broker creates topics on request: then it has them now).
 * @throws Error from the Kafka client when the brokers cannot be reached (retrying may help)
 */
export async function fetchWatermarks(
  kafka: KafkaConnection,
  topics: readonly string[],
): Promise<PartitionWatermarks[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const out: PartitionWatermarks[] = [];
    for (const topic of topics) {
      for (const p of await admin.fetchTopicOffsets(topic)) {
        out.push({ topic, partition: p.partition, low: BigInt(p.low), high: BigInt(p.high) });
      }
    }
    return out.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
  } finally {
    await admin.disconnect();
  }
}

/**
 * Every record of the ranges, per partition in offset order (partitions in the order of `ranges`;
 * a partition may have several ranges). Offsets a compacted or transactional partition skips are
 * simply absent.
 * @throws as readRanges (LakeError, retryable, when the ranges are not read within the time)
 */
export async function collectRanges(
  kafka: KafkaConnection,
  ranges: readonly HotRange[],
  options: CollectRangesOptions = {},
): Promise<ConsumedMessage[]> {
  const got = new Map<string, ConsumedMessage[]>();
  const keyOf = (topic: string, partition: number) => `${topic}\u0000${partition}`;
  for (const r of ranges) got.set(keyOf(r.topic, r.partition), []);
  await readRanges({
    kafka,
    ranges: ranges.map((r) => ({
      topic: r.topic,
      partition: r.partition,
      start: r.from,
      end: r.toExclusive,
    })),
    timeoutMs: options.timeoutMs ?? DEFAULT_READ_TIMEOUT_MS,
    onRecords: async (records) => {
      for (const r of records) {
        got.get(keyOf(r.topic, r.partition))!.push(consumedOf(r));
      }
    },
  });
  return [...got.values()].flat();
}
