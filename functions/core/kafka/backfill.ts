/**
 * Backfill: a bounded offset range per partition of one topic, read in ESM-sized events through the
 * same ingest code as the live tail. No group offsets are committed — the table's committed offsets
 * are the only record of what was ingested, so:
 * - exactly once: every record is offered to the table, which skips what it already holds;
 * - resumable: a rerun reads the range again and the table skips what it holds (no rewrite). It never
 *   jumps ahead by a "last offset" of its own, which would be wrong once a live tail (the Lambda or
 *   `floe run`) commits offsets past the backfill's: the table decides per record.
 */
import type { Admin } from 'kafkajs';
import { describeError } from '../errors.js';
import { deliverWithRetry, type RetryPolicy } from './deliver-with-retry.js';
import { type FormedEvent, formEsmEvents, markFetchStarts } from './esm-batch.js';
import type { KafkaConnection } from './kafka-client.js';
import { offsetsAtTime } from './offsets-by-time.js';
import { type FetchedSpan, type ReadRecord, readRanges, consumedOf } from './read-ranges.js';

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

/**
 * planBackfill through an admin client of `kafka`, connected for the lookup only.
 * @throws as planBackfill; Error from the Kafka client when the brokers cannot be reached
 */
export async function planBackfillFromBrokers(
  kafka: KafkaConnection,
  topic: string,
  from: BackfillBound,
  to: BackfillBound,
): Promise<OffsetRange[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await planBackfill(admin, topic, from, to);
  } finally {
    await admin.disconnect();
  }
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
  kafka: KafkaConnection;
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
 * Reads every range once through `deliver`, without a consumer group (read-ranges.ts): up to
 * `partitionsConsumedConcurrently` partitions are delivered at once, each in offset order.
 * @throws the delivery error retrying cannot fix; Error when the Kafka client gives up
 */
export async function runBackfill<T>(options: BackfillOptions<T>): Promise<BackfillSummary> {
  const topic = options.ranges[0]?.topic;
  const next = new Map(options.ranges.map((r) => [r.partition, r.start]));
  const pending = options.ranges.filter((r) => r.start < r.end);
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
  if (topic === undefined || pending.length === 0) return { records: 0, batches: 0, completed: true };
  const warn = options.onWarning ?? (() => undefined);
  const stopped = () => options.signal.aborted;
  // A delivery that fails for good stops the other partitions too (after their batch in flight).
  let failed = false;

  const onRecords = async (fetched: ReadRecord[], span: FetchedSpan): Promise<void> => {
    const end = options.ranges.find((r) => r.partition === span.partition)!.end;
    const events = formEsmEvents(options.bootstrapServers, fetched.map(consumedOf), {
      batchSize: options.batchSize,
    });
    // The fetch started where this backfill's previous batch of the partition ended (or at the range's
    // start): nothing a consumer is handed lies before the first event's first record.
    markFetchStarts(events, span.from);
    for (const formed of events) {
      if (stopped() || failed) return;
      const outcome = await deliverWithRetry(() => options.deliver(formed), {
        retry: options.retry,
        shouldStop: () => stopped() || failed,
        onRetry: (error, attempt, delay) => options.onRetry?.(formed, error, attempt, delay),
      });
      if (outcome.status === 'abandoned') return;
      if (outcome.status === 'failed') {
        failed = true;
        throw outcome.error;
      }
      next.set(span.partition, formed.spans[0].last + 1n);
      records += formed.records;
      batches += 1;
      options.onDelivered?.(formed, outcome.result, outcome.attempts);
    }
    // Offsets past the last record (control records, compaction gaps) count as read too.
    let after = span.after;
    if (after > end) after = end; // bigints: Math.min takes none
    if (after > next.get(span.partition)!) next.set(span.partition, after);
  };

  const timer = setInterval(() => {
    try {
      options.onProgress?.(progress());
    } catch (error) {
      warn(`progress: ${describeError(error)}`);
    }
  }, options.progressIntervalMs ?? 1_000);
  try {
    await readRanges({
      kafka: options.kafka,
      ranges: pending,
      signal: options.signal,
      concurrency: options.partitionsConsumedConcurrently ?? 4,
      onRecords,
    });
  } finally {
    clearInterval(timer);
  }
  options.onProgress?.(progress());
  return { records, batches, completed: pending.every((r) => next.get(r.partition)! >= r.end) };
}
