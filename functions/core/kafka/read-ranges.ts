/**
 * Reads offset ranges of topic-partitions without a consumer group: Fetch requests straight to each
 * partition's leader (kafka-cluster.ts), so nothing joins a group, nothing is committed, and the first
 * records arrive in one round trip. Records come in offset order per partition, one batch at a time
 * (never two partitions' handlers at once), READ_COMMITTED (aborted transactions' records and control
 * records are left out; their offsets count as read), header values as they are (a null stays null).
 * The live view (live/) and replay (replay/, replay-producer.ts) read through here.
 */
import type { KafkaMessage } from 'kafkajs';
import { LakeError } from '../errors.js';
import type { ConsumedMessage, TimestampType } from './esm-batch.js';
import {
  type FetchedMessage,
  type FetchedPartition,
  filterAbortedMessages,
  type KafkaCluster,
  openCluster,
  READ_COMMITTED,
} from './kafka-cluster.js';
import { bytesOf, esmHeaders, headersOf, type KafkaConnection, timestampTypeOf } from './kafka-client.js';

/** One partition's range: `start` inclusive; `end` exclusive, or undefined to read until stopped. */
export interface ReadRange {
  topic: string;
  partition: number;
  start: bigint;
  end?: bigint;
}

export interface ReadRecord {
  topic: string;
  partition: number;
  offset: bigint;
  timestampMs: number;
  /** Kafka's timestamp type: the producer's clock, or the broker's (log append time). */
  timestampType: TimestampType;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: { key: string; value: Uint8Array | null }[];
}

/** Where a fetched batch of one partition sits: what the fetch asked from and what it covered. */
export interface FetchedSpan {
  topic: string;
  partition: number;
  /** The offset the fetch started at: nothing a consumer is handed lies between it and the first record. */
  from: bigint;
  /** The offset after the fetch's last record batch (markers, aborted and compacted records included). */
  after: bigint;
}

export interface ReadRangesOptions {
  kafka: KafkaConnection;
  ranges: readonly ReadRange[];
  /**
   * Called per fetched batch of a partition, in offset order; that partition's next batch waits for it.
   * Called for a batch with no records too when it moved the partition on (only markers or gaps).
   */
  onRecords: (records: ReadRecord[], span: FetchedSpan) => Promise<void>;
  /** How many partitions' batches may be handed over at once. @default 1 (one at a time) */
  concurrency?: number;
  /** Stops reading (open-ended ranges stop only so). */
  signal?: AbortSignal;
  /** Give up when the bounded ranges are not read within this time (a retryable LakeError). */
  timeoutMs?: number;
}

/** How long a fetch waits at the broker for records not there yet. */
const MAX_WAIT_MS = 100;
/** Bytes asked per partition and per fetch (the broker always returns at least one whole batch). */
const PARTITION_MAX_BYTES = 4 * 1024 * 1024;
const FETCH_MAX_BYTES = 32 * 1024 * 1024;
/** Retriable broker errors in a row (leader moved, broker restarting, ...) before giving up. */
const MAX_RETRIES = 10;

export function toReadRecord(topic: string, partition: number, message: KafkaMessage): ReadRecord {
  return {
    topic,
    partition,
    offset: BigInt(message.offset),
    timestampMs: Number(message.timestamp),
    timestampType: timestampTypeOf(message),
    key: bytesOf(message.key),
    value: bytesOf(message.value),
    headers: headersOf(message),
  };
}

/** A read record as the ESM batch former takes it (a null header value becomes empty bytes, as the ESM has it). */
export function consumedOf(r: ReadRecord): ConsumedMessage {
  return {
    topic: r.topic,
    partition: r.partition,
    offset: r.offset.toString(),
    timestamp: r.timestampMs,
    timestampType: r.timestampType,
    key: r.key,
    value: r.value,
    headers: esmHeaders(r.headers),
  };
}

const rangeKey = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/** One partition's ranges still to read, in offset order, and the next offset to fetch. */
interface Cursor {
  topic: string;
  partition: number;
  ranges: ReadRange[];
  next: bigint;
}

/** The ranges per partition, sorted; empty bounded ranges left out. */
function cursorsOf(ranges: readonly ReadRange[]): Map<string, Cursor> {
  const cursors = new Map<string, Cursor>();
  for (const range of ranges) {
    if (range.end !== undefined && range.start >= range.end) continue;
    const key = rangeKey(range.topic, range.partition);
    const cursor = cursors.get(key) ?? {
      topic: range.topic,
      partition: range.partition,
      ranges: [],
      next: 0n,
    };
    cursor.ranges.push(range);
    cursors.set(key, cursor);
  }
  for (const cursor of cursors.values()) {
    cursor.ranges.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    cursor.next = cursor.ranges[0]!.start;
  }
  return cursors;
}

const inRanges = (ranges: readonly ReadRange[], o: bigint) =>
  ranges.some((r) => o >= r.start && (r.end === undefined || o < r.end));

/**
 * Reads every range through `onRecords`; resolves when every bounded range is read (and, with an
 * open-ended one, when the signal aborts). A partition may have several ranges (gaps between them
 * are not read).
 * @throws what `onRecords` throws; LakeError (not retryable) when a range starts before the oldest
 *   offset Kafka still holds; LakeError (retryable) on `timeoutMs` or when brokers keep failing;
 *   Error from kafkajs when the brokers cannot be reached
 */
export async function readRanges(options: ReadRangesOptions): Promise<void> {
  const cursors = cursorsOf(options.ranges);
  if (cursors.size === 0 || options.signal?.aborted) return;
  const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
  const cluster = openCluster(options.kafka);
  await cluster.connect();
  try {
    await cluster.addMultipleTargetTopics([...new Set(options.ranges.map((r) => r.topic))]);
    let failures = 0;
    while (cursors.size > 0 && !options.signal?.aborted) {
      if (deadline !== undefined && Date.now() > deadline) {
        throw new LakeError(
          `reading Kafka offset ranges took longer than ${options.timeoutMs} ms (${cursors.size} partition(s) unread); retrying may help`,
          { retryable: true },
        );
      }
      try {
        await fetchRound(cluster, cursors, options.onRecords, options.concurrency ?? 1);
        failures = 0;
      } catch (error) {
        if (isOffsetOutOfRange(error)) throw offsetGone(error, cursors);
        if (!isRetriable(error)) throw error;
        if (++failures > MAX_RETRIES) {
          throw new LakeError(
            `reading Kafka offset ranges: the brokers failed ${failures} times in a row (${(error as Error).message}); retrying later may help`,
            { cause: error, retryable: true },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** failures)));
        await cluster.refreshMetadata();
      }
    }
  } finally {
    await cluster.disconnect().catch(() => undefined);
  }
}

/** One Fetch per leader for every partition with ranges left; records handed over partition by partition. */
async function fetchRound(
  cluster: KafkaCluster,
  cursors: Map<string, Cursor>,
  onRecords: ReadRangesOptions['onRecords'],
  concurrency: number,
): Promise<void> {
  const byLeader = new Map<string, Cursor[]>();
  const byTopic = new Map<string, Cursor[]>();
  for (const cursor of cursors.values()) {
    byTopic.set(cursor.topic, [...(byTopic.get(cursor.topic) ?? []), cursor]);
  }
  for (const [topic, list] of byTopic) {
    const leaders = cluster.findLeaderForPartitions(
      topic,
      list.map((c) => c.partition),
    );
    const led = new Set<number>();
    for (const [nodeId, partitions] of Object.entries(leaders)) {
      for (const partition of partitions) {
        led.add(partition);
        byLeader.set(nodeId, [...(byLeader.get(nodeId) ?? []), cursors.get(rangeKey(topic, partition))!]);
      }
    }
    const leaderless = list.filter((c) => !led.has(c.partition)).map((c) => c.partition);
    if (leaderless.length > 0) {
      throw Object.assign(new Error(`no leader known for ${topic} partition(s) ${leaderless.join(', ')}`), {
        retriable: true,
      });
    }
  }
  // Settled, not all: a leader failing first must not let the caller disconnect the cluster while
  // another leader's connect or fetch is under way (it would reconnect its socket after the disconnect,
  // and the process would never exit).
  const asked = await Promise.allSettled(
    [...byLeader].map(async ([nodeId, list]) => {
      const broker = await cluster.findBroker({ nodeId });
      const topics = new Map<string, { partition: number; fetchOffset: string; maxBytes: number }[]>();
      for (const c of list) {
        const wanted = {
          partition: c.partition,
          fetchOffset: c.next.toString(),
          maxBytes: PARTITION_MAX_BYTES,
        };
        topics.set(c.topic, [...(topics.get(c.topic) ?? []), wanted]);
      }
      return broker.fetch({
        replicaId: -1,
        isolationLevel: READ_COMMITTED,
        maxWaitTime: MAX_WAIT_MS,
        minBytes: 1,
        maxBytes: FETCH_MAX_BYTES,
        topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
      });
    }),
  );
  const fetched = new Map<string, FetchedPartition>();
  for (const answer of asked) {
    if (answer.status === 'rejected') throw answer.reason;
    for (const t of answer.value.responses) {
      for (const p of t.partitions) fetched.set(rangeKey(t.topicName, p.partition), p);
    }
  }
  const handOver = async (key: string, cursor: Cursor, partition: FetchedPartition): Promise<void> => {
    const from = cursor.next;
    const records = filterAbortedMessages(partition)
      .filter((m) => {
        if (m.isControlRecord) return false;
        const o = BigInt(m.offset);
        return o >= from && inRanges(cursor.ranges, o);
      })
      .map((m) => toReadRecord(cursor.topic, cursor.partition, m));
    // Every offset up to the end of the last record batch returned is read, whatever it held
    // (control records, aborted or compacted records are not handed over, but they are passed).
    const after = maxOffset(from, afterBatches(partition.messages));
    if (records.length > 0 || after > from) {
      await onRecords(records, { topic: cursor.topic, partition: cursor.partition, from, after });
    }
    cursor.next = after;
    while (
      cursor.ranges.length > 0 &&
      cursor.ranges[0]!.end !== undefined &&
      cursor.ranges[0]!.end <= cursor.next
    ) {
      cursor.ranges.shift();
    }
    if (cursor.ranges.length === 0) cursors.delete(key);
    else cursor.next = maxOffset(cursor.next, cursor.ranges[0]!.start);
  };
  const work = [...cursors].flatMap(([key, cursor]) => {
    const partition = fetched.get(key);
    return partition ? [() => handOver(key, cursor, partition)] : [];
  });
  for (let i = 0; i < work.length; i += concurrency) {
    // Settled, not all: a failure is thrown once the batches handed over with it are done.
    const settled = await Promise.allSettled(work.slice(i, i + concurrency).map((w) => w()));
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/** The offset after the last record batch the messages came in (0 when none). */
function afterBatches(messages: FetchedMessage[]): bigint {
  let after = 0n;
  for (const m of messages) {
    const context = m.batchContext;
    const last =
      context === undefined
        ? BigInt(m.offset)
        : BigInt(context.firstOffset) + BigInt(context.lastOffsetDelta);
    if (last + 1n > after) after = last + 1n;
  }
  return after;
}

/** Math.max for offsets (it takes no bigints). */
function maxOffset(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function isOffsetOutOfRange(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'KafkaJSOffsetOutOfRange';
}

/** The range that starts before what the partition still holds, named (kafkajs says which partition). */
function offsetGone(error: unknown, cursors: Map<string, Cursor>): LakeError {
  const { topic, partition } = error as { topic?: string; partition?: number };
  const cursor =
    topic === undefined || partition === undefined ? undefined : cursors.get(rangeKey(topic, partition));
  const where = cursor
    ? `offset ${cursor.next} of ${cursor.topic}/${cursor.partition}`
    : 'an offset asked for';
  return new LakeError(
    `${where} is no longer held by Kafka (retention or compaction removed it, or the topic was recreated): the range cannot be read`,
    { cause: error, retryable: false },
  );
}

/** kafkajs marks broker errors a retry can help with (leader moved, not available, ...). */
function isRetriable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { retriable?: unknown; name?: unknown };
  if (e.name === 'KafkaJSOffsetOutOfRange') return false;
  return e.retriable === true;
}
