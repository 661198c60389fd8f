/**
 * Reads offset ranges of topic-partitions without a consumer group's commits: kafkajs has no
 * group-free reads, so a throwaway group (never committed to) carries the assignment and each
 * partition is sought to its start (as backfill.ts does). Records come in offset order per
 * partition, one batch at a time (never two partitions' handlers at once), with header values kept
 * as they are (a null value stays null).
 */
import { randomUUID } from 'node:crypto';
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';

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
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: { key: string; value: Uint8Array | null }[];
}

export interface ReadRangesOptions {
  kafka: Kafka;
  ranges: ReadRange[];
  /** Called per fetched batch, in offset order; the next batch waits for it. */
  onRecords: (records: ReadRecord[]) => Promise<void>;
  /** Stops reading (open-ended ranges stop only so). */
  signal?: AbortSignal;
  /** @default 30000 */
  sessionTimeoutMs?: number;
}

function bytes(value: Buffer | string | null | undefined): Uint8Array | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : new Uint8Array(value);
}

export function toReadRecord(topic: string, partition: number, message: KafkaMessage): ReadRecord {
  const headers: ReadRecord['headers'] = [];
  for (const [key, value] of Object.entries(message.headers ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) headers.push({ key, value: bytes(v) });
  }
  return {
    topic,
    partition,
    offset: BigInt(message.offset),
    timestampMs: Number(message.timestamp),
    key: bytes(message.key),
    value: bytes(message.value),
    headers,
  };
}

const rangeKey = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/**
 * Reads every range through `onRecords`; resolves when every bounded range is read (and, with an
 * open-ended one, when the signal aborts).
 * @throws what `onRecords` throws; Error when the Kafka client gives up
 */
export async function readRanges(options: ReadRangesOptions): Promise<void> {
  const ranges = new Map(options.ranges.map((r) => [rangeKey(r.topic, r.partition), r]));
  const next = new Map(options.ranges.map((r) => [rangeKey(r.topic, r.partition), r.start]));
  const pending = new Set(
    options.ranges
      .filter((r) => r.end === undefined || r.start < r.end)
      .map((r) => rangeKey(r.topic, r.partition)),
  );
  if (pending.size === 0 || options.signal?.aborted) return;
  const topics = [...new Set(options.ranges.map((r) => r.topic))];
  const sessionTimeout = options.sessionTimeoutMs ?? 30_000;
  const consumer: Consumer = options.kafka.consumer({
    groupId: `floe-read-${randomUUID()}`,
    sessionTimeout,
    heartbeatInterval: Math.max(100, Math.min(3_000, Math.floor(sessionTimeout / 3))),
    maxWaitTimeInMs: 100,
  });
  let fatal: { error: unknown } | undefined;
  let wake: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    wake = resolve;
  });
  let stopping = false;
  const stop = () => {
    stopping = true;
    wake();
  };
  options.signal?.addEventListener('abort', stop, { once: true });
  const finish = (topic: string, partition: number) => {
    if (!pending.delete(rangeKey(topic, partition))) return;
    consumer.pause([{ topic, partitions: [partition] }]);
    if (pending.size === 0) stop();
  };

  async function eachBatch({ batch, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const k = rangeKey(batch.topic, batch.partition);
    const range = ranges.get(k);
    if (stopping || !range || !pending.has(k) || !isRunning() || isStale()) return;
    const from = next.get(k)!;
    const records = batch.messages
      .filter((m) => {
        const o = BigInt(m.offset);
        return o >= from && (range.end === undefined || o < range.end);
      })
      .map((m) => toReadRecord(batch.topic, batch.partition, m));
    if (records.length > 0) {
      try {
        await options.onRecords(records);
      } catch (error) {
        fatal ??= { error };
        stop();
        return;
      }
    }
    const after = BigInt(batch.lastOffset()) + 1n;
    if (after > next.get(k)!) next.set(k, after);
    if (range.end !== undefined && next.get(k)! >= range.end) finish(batch.topic, batch.partition);
    if (!stopping) await heartbeat();
  }

  await consumer.connect();
  try {
    for (const topic of topics) await consumer.subscribe({ topics: [topic], fromBeginning: true });
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      // Registered before the generation's first fetch, so nothing is read from the default position.
      for (const [topic, partitions] of Object.entries(event.payload.memberAssignment)) {
        for (const partition of partitions) {
          const k = rangeKey(topic, partition);
          if (pending.has(k)) consumer.seek({ topic, partition, offset: next.get(k)!.toString() });
          else consumer.pause([{ topic, partitions: [partition] }]);
        }
      }
    });
    consumer.on(consumer.events.CRASH, (event) => {
      if (event.payload.restart) return;
      fatal ??= { error: event.payload.error };
      stop();
    });
    await consumer.run({ autoCommit: false, partitionsConsumedConcurrently: 1, eachBatch });
    if (!stopping) await stopped;
    await consumer.stop();
  } finally {
    options.signal?.removeEventListener('abort', stop);
    await consumer.disconnect();
  }
  if (fatal) throw fatal.error;
}
