/**
 * Group-free reads of bounded offset ranges, for the live view (functions/core/live/): watermarks from
 * the admin client, and every record of `[from, toExclusive)` per topic-partition. Nothing is ever
 * committed to a consumer group: kafkajs has no group-free consumer, so a throwaway group (never
 * committed to, left at the end) carries the assignment, and each partition is sought to its start
 * when the group is joined, as backfill.ts does.
 */
import { randomUUID } from 'node:crypto';
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { LakeError } from '../errors.js';
import type { ConsumedMessage } from './esm-batch.js';
import { toConsumedMessage } from './kafka-client.js';

/** A partition's watermarks: the oldest offset still held and the offset the next record gets. */
export interface PartitionWatermarks {
  topic: string;
  partition: number;
  low: bigint;
  high: bigint;
}

/** Offsets `from` (inclusive) to `toExclusive` of one topic-partition. */
export interface ReadRange {
  topic: string;
  partition: number;
  from: bigint;
  toExclusive: bigint;
}

export interface ReadRangesOptions {
  /** Give up when the ranges are not read within this time. @default 30,000 */
  timeoutMs?: number;
}

/**
 * The watermarks of every partition of the topics (a topic the broker does not know has none).
 * @throws Error from kafkajs when the brokers cannot be reached (retrying may help)
 */
export async function fetchWatermarks(
  kafka: Kafka,
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

const keyOf = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/**
 * Every record of the ranges, per partition in offset order (partitions in the order of `ranges`).
 * Offsets a compacted or transactional partition skips are simply absent.
 * @throws LakeError (retryable) when the ranges are not read within the time; Error from kafkajs
 */
export async function readRanges(
  kafka: Kafka,
  ranges: readonly ReadRange[],
  options: ReadRangesOptions = {},
): Promise<ConsumedMessage[]> {
  const wanted = ranges.filter((r) => r.from < r.toExclusive);
  if (wanted.length === 0) return [];
  const byKey = new Map(wanted.map((r) => [keyOf(r.topic, r.partition), r]));
  const got = new Map<string, ConsumedMessage[]>(wanted.map((r) => [keyOf(r.topic, r.partition), []]));
  const pending = new Set(byKey.keys());
  const topics = [...new Set(wanted.map((r) => r.topic))];
  const consumer: Consumer = kafka.consumer({
    groupId: `floe-live-${randomUUID()}`,
    maxWaitTimeInMs: 100,
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
  });
  let done: () => void = () => undefined;
  let fail: (error: unknown) => void = () => undefined;
  const finished = new Promise<void>((resolve, reject) => {
    done = resolve;
    fail = reject;
  });
  // A timeout during connect rejects before anyone awaits: keep it from being an unhandled rejection.
  finished.catch(() => undefined);
  // Per partition, the next offset to take: a fetch may hand a batch again until it is resolved.
  const next = new Map(wanted.map((r) => [keyOf(r.topic, r.partition), r.from]));
  const eachBatch = async ({ batch, resolveOffset }: EachBatchPayload): Promise<void> => {
    const key = keyOf(batch.topic, batch.partition);
    const range = byKey.get(key);
    if (!range || !pending.has(key)) return;
    const list = got.get(key)!;
    for (const m of batch.messages) {
      const o = BigInt(m.offset);
      if (o >= next.get(key)! && o < range.toExclusive) {
        list.push(toConsumedMessage(batch.topic, batch.partition, m));
        next.set(key, o + 1n);
      }
    }
    // Resolved (never committed: autoCommit is off), so the next fetch starts after this batch.
    resolveOffset(batch.lastOffset());
    // Offsets past the last record (control records, compaction gaps) count as read too.
    if (BigInt(batch.lastOffset()) + 1n >= range.toExclusive) {
      pending.delete(key);
      consumer.pause([{ topic: batch.topic, partitions: [batch.partition] }]);
      if (pending.size === 0) done();
    }
  };
  const timeoutMs = options.timeoutMs ?? 30_000;
  const timer = setTimeout(
    () =>
      fail(
        new LakeError(
          `reading the Kafka tail took longer than ${timeoutMs} ms (${pending.size} partition(s) unread); retrying may help`,
          { retryable: true },
        ),
      ),
    timeoutMs,
  );
  await consumer.connect();
  try {
    await consumer.subscribe({ topics, fromBeginning: true });
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      // Registered before the generation's first fetch, so nothing is read from the default position.
      const idle: { topic: string; partitions: number[] }[] = [];
      for (const topic of topics) {
        const others: number[] = [];
        for (const partition of event.payload.memberAssignment[topic] ?? []) {
          const range = byKey.get(keyOf(topic, partition));
          if (range && pending.has(keyOf(topic, partition))) {
            consumer.seek({ topic, partition, offset: range.from.toString() });
          } else others.push(partition);
        }
        if (others.length > 0) idle.push({ topic, partitions: others });
      }
      if (idle.length > 0) consumer.pause(idle);
    });
    consumer.on(consumer.events.CRASH, (event) => {
      if (!event.payload.restart) fail(event.payload.error);
    });
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch });
    await finished;
    await consumer.stop();
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
  return wanted.flatMap((r) => got.get(keyOf(r.topic, r.partition))!);
}
