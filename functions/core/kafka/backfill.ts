/**
 * Backfill: a bounded offset range per partition of one topic, read in ESM-sized events through the
 * same ingest code as the live tail. No group offsets are committed — the table's committed offsets
 * are the only record of what was ingested, so:
 * - exactly once: every record is offered to the table, which skips what it already holds;
 * - resumable: a rerun reads the range again and the table skips what it holds (no rewrite). It never
 *   jumps ahead by a "last offset" of its own, which would be wrong once a live tail (the Lambda or
 *   `floe run`) commits offsets past the backfill's: the table decides per record.
 */
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import { describeError } from '../errors.js';
import { deliverWithRetry, type RetryPolicy } from './deliver-with-retry.js';
import { ESM_MAX_PAYLOAD_BYTES, type FormedEvent, formEsmEvents, markFetchStarts } from './esm-batch.js';
import { fetchStartOf, toConsumedMessage } from './kafka-client.js';
import { offsetsAtTime } from './offsets-by-time.js';

/** One partition's range: `start` inclusive, `end` exclusive. */
export interface OffsetRange {
  topic: string;
  partition: number;
  start: bigint;
  end: bigint;
}

/** `earliest`/`latest` or a time in epoch milliseconds. */
export type BackfillBound = 'earliest' | 'latest' | number;

/**
 * The ranges from the partitions' watermarks and, for time bounds, the offset of the first record at
 * or after the time (the broker's offset-for-time lookup; the high watermark when there is none).
 * Clamped into [low, high], and `end` never before `start`.
 */
export function resolveRanges(
  topic: string,
  watermarks: { partition: number; low: bigint; high: bigint }[],
  fromOffsets?: Map<number, bigint>,
  toOffsets?: Map<number, bigint>,
): OffsetRange[] {
  const clamp = (v: bigint, lo: bigint, hi: bigint) => (v < lo ? lo : v > hi ? hi : v);
  return watermarks
    .map(({ partition, low, high }) => {
      const start = clamp(fromOffsets?.get(partition) ?? low, low, high);
      const end = clamp(toOffsets?.get(partition) ?? high, start, high);
      return { topic, partition, start, end };
    })
    .sort((a, b) => a.partition - b.partition);
}

/**
 * Resolves `--from`/`--to` against the broker.
 * @throws LakeError when a time bound cannot be looked up (offsets-by-time.ts)
 */
export async function planBackfill(
  admin: Pick<Admin, 'fetchTopicOffsets' | 'fetchTopicOffsetsByTimestamp'>,
  topic: string,
  from: BackfillBound,
  to: BackfillBound,
): Promise<OffsetRange[]> {
  const watermarks = (await admin.fetchTopicOffsets(topic)).map((p) => ({
    partition: p.partition,
    low: BigInt(p.low),
    high: BigInt(p.high),
  }));
  const fromOffsets = typeof from === 'number' ? await offsetsAtTime(admin, topic, from) : undefined;
  const toOffsets =
    typeof to === 'number'
      ? await offsetsAtTime(admin, topic, to)
      : to === 'earliest'
        ? new Map()
        : undefined;
  if (to === 'earliest') for (const w of watermarks) toOffsets!.set(w.partition, w.low);
  if (from === 'latest') {
    return resolveRanges(topic, watermarks, new Map(watermarks.map((w) => [w.partition, w.high])), toOffsets);
  }
  return resolveRanges(topic, watermarks, fromOffsets, toOffsets);
}

export interface BackfillProgress {
  ranges: OffsetRange[];
  /** Per partition, the next offset to read. */
  next: Map<number, bigint>;
  records: number;
  total: bigint;
  done: bigint;
  recordsPerSecond: number;
  /** Seconds left at the current rate; undefined until there is a rate. */
  etaSeconds?: number;
}

export interface BackfillOptions<T> {
  kafka: Kafka;
  bootstrapServers: string;
  ranges: OffsetRange[];
  batchSize: number;
  signal: AbortSignal;
  deliver: (formed: FormedEvent) => Promise<T>;
  onDelivered?: (formed: FormedEvent, result: T, attempts: number) => void;
  onRetry?: (formed: FormedEvent, error: unknown, attempt: number, delayMs: number) => void;
  onProgress?: (progress: BackfillProgress) => void;
  onWarning?: (message: string) => void;
  retry?: RetryPolicy;
  /** @default 30,000 */
  sessionTimeoutMs?: number;
  /** @default 4 */
  partitionsConsumedConcurrently?: number;
  /** @default 1,000 */
  progressIntervalMs?: number;
}

export interface BackfillSummary {
  records: number;
  batches: number;
  /** False when stopped by the signal before every range was read. */
  completed: boolean;
}

/**
 * Reads every range once through `deliver`. Kafka has no group-free reads in kafkajs, so a throwaway
 * consumer group (never committed to) carries the assignment, and each partition is sought to its start.
 * @throws the delivery error retrying cannot fix; Error when the Kafka client gives up
 */
export async function runBackfill<T>(options: BackfillOptions<T>): Promise<BackfillSummary> {
  const topic = options.ranges[0]?.topic;
  const byPartition = new Map(options.ranges.map((r) => [r.partition, r]));
  const next = new Map(options.ranges.map((r) => [r.partition, r.start]));
  const pending = new Set(options.ranges.filter((r) => r.start < r.end).map((r) => r.partition));
  const total = options.ranges.reduce((sum, r) => sum + (r.end - r.start), 0n);
  const startedAt = Date.now();
  let records = 0;
  let batches = 0;
  const progress = (): BackfillProgress => {
    let done = 0n;
    for (const r of options.ranges) done += next.get(r.partition)! - r.start;
    const seconds = (Date.now() - startedAt) / 1000;
    const rate = seconds > 0 ? records / seconds : 0;
    const left = Number(total - done);
    return {
      ranges: options.ranges,
      next,
      records,
      total,
      done,
      recordsPerSecond: rate,
      etaSeconds: rate > 0 ? left / rate : undefined,
    };
  };
  if (topic === undefined || pending.size === 0) return { records: 0, batches: 0, completed: true };

  const sessionTimeout = options.sessionTimeoutMs ?? 30_000;
  const consumer: Consumer = options.kafka.consumer({
    groupId: `floe-backfill-${randomUUID()}`,
    sessionTimeout,
    heartbeatInterval: Math.max(100, Math.min(3_000, Math.floor(sessionTimeout / 3))),
    maxWaitTimeInMs: 100,
    maxBytesPerPartition: ESM_MAX_PAYLOAD_BYTES,
    maxBytes: ESM_MAX_PAYLOAD_BYTES * 4,
  });
  const warn = options.onWarning ?? (() => undefined);
  let stopping = false;
  let fatal: { error: unknown } | undefined;
  let inFlight = 0;
  let wake: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const stop = () => {
    stopping = true;
    wake();
  };
  options.signal.addEventListener('abort', stop, { once: true });

  const finish = (partition: number) => {
    if (!pending.delete(partition)) return;
    consumer.pause([{ topic, partitions: [partition] }]);
    if (pending.size === 0) stop();
  };

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
    const range = byPartition.get(batch.partition);
    if (stopping || !range || !pending.has(batch.partition)) return;
    const from = next.get(batch.partition)!;
    const inRange = batch.messages.filter((m) => {
      const o = BigInt(m.offset);
      return o >= from && o < range.end;
    });
    const events = formEsmEvents(
      options.bootstrapServers,
      inRange.map((m) => toConsumedMessage(batch.topic, batch.partition, m)),
      { batchSize: options.batchSize },
    );
    // Records below `from` may be filtered out of this fetch, but only ones this backfill delivered
    // (or that hold nothing): the fetch start, never before the range, bounds what the first event claims.
    const fetched = fetchStartOf(batch);
    markFetchStarts(events, fetched === undefined || fetched < range.start ? undefined : fetched);
    const gone = () => stopping || !isRunning() || isStale();
    for (const formed of events) {
      if (gone()) return;
      inFlight++;
      try {
        const outcome = await deliverWithRetry(() => options.deliver(formed), {
          retry: options.retry,
          shouldStop: gone,
          heartbeat,
          onRetry: (error, attempt, delay) => options.onRetry?.(formed, error, attempt, delay),
        });
        if (outcome.status === 'abandoned') return;
        if (outcome.status === 'failed') {
          fatal ??= { error: outcome.error };
          stop();
          return;
        }
        const last = formed.spans[0].last;
        resolveOffset(last.toString());
        next.set(batch.partition, last + 1n);
        records += formed.records;
        batches += 1;
        options.onDelivered?.(formed, outcome.result, outcome.attempts);
      } finally {
        inFlight--;
      }
      // One fetch can hold many events: keep the membership alive between them (a rebalance throws).
      if (!gone()) await heartbeat();
    }
    // Offsets past the last record (control records, compaction gaps) count as read too.
    const after = BigInt(batch.lastOffset()) + 1n;
    if (after > next.get(batch.partition)! && after <= range.end) next.set(batch.partition, after);
    if (BigInt(batch.lastOffset()) + 1n >= range.end || next.get(batch.partition)! >= range.end) {
      next.set(batch.partition, range.end);
      finish(batch.partition);
    }
  }

  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      // Registered before the generation's first fetch, so nothing is read from the default position.
      for (const partition of event.payload.memberAssignment[topic] ?? []) {
        const range = byPartition.get(partition);
        if (range && pending.has(partition)) {
          consumer.seek({ topic, partition, offset: next.get(partition)!.toString() });
        }
      }
    });
    consumer.on(consumer.events.CRASH, (event) => {
      if (event.payload.restart) return;
      fatal ??= { error: event.payload.error };
      stop();
    });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 4,
      eachBatch,
    });
    const done = options.ranges.filter((r) => r.start >= r.end).map((r) => r.partition);
    if (done.length > 0) consumer.pause([{ topic, partitions: done }]);
    const timer = setInterval(() => {
      try {
        options.onProgress?.(progress());
      } catch (error) {
        warn(`progress: ${describeError(error)}`);
      }
    }, options.progressIntervalMs ?? 1_000);
    try {
      if (!stopping) await stopped;
    } finally {
      clearInterval(timer);
    }
    while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    await consumer.stop();
  } finally {
    options.signal.removeEventListener('abort', stop);
    await consumer.disconnect();
  }
  if (fatal) throw fatal.error;
  options.onProgress?.(progress());
  return { records, batches, completed: pending.size === 0 };
}
