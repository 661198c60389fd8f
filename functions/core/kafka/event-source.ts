/**
 * A local Kafka event source mapping: a consumer group reads the topics, forms ESM events per partition
 * (offset order within a partition, partitions concurrently), hands each to `deliver` (the ingest code
 * the Lambda runs), and commits the group offset of an event only after `deliver` returned — that is,
 * after the table commit. So the group offsets never run ahead of the tables: a crash at any moment
 * leaves at most a redelivery, which the tables' committed offsets skip as a replay.
 *
 * Stopping (the signal) never cuts a batch in half: an event being delivered finishes (its table commit
 * lands or fails whole) and is then committed to the group; an event waiting for a retry is abandoned
 * whole; the rest of the fetched messages are refetched by the next run.
 */
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { describeError, ValidationError } from '../errors.js';
import { backoffDelay, DEFAULT_RETRY, deliverWithRetry, type RetryPolicy } from './deliver-with-retry.js';
import { ESM_MAX_PAYLOAD_BYTES, type FormedEvent, formEsmEvents, markFetchStarts } from './esm-batch.js';
import { fetchStartOf, toConsumedMessage } from './kafka-client.js';
import { planTimestampSeeks, takeSeeks } from './offsets-by-time.js';
import { type PartitionProgress, partitionKey, isCaughtUp } from './partition-progress.js';

/** Consumers kafkajs crashed in a row, with no batch delivered between, before the runner gives up. */
const MAX_CRASHES_WITHOUT_PROGRESS = 10;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type StartingPosition = 'latest' | 'trim-horizon' | 'at-timestamp';
export const STARTING_POSITIONS: readonly StartingPosition[] = ['latest', 'trim-horizon', 'at-timestamp'];

export interface EventSourceOptions<T> {
  kafka: Kafka;
  /** What the events carry as `bootstrapServers`. */
  bootstrapServers: string;
  topics: string[];
  groupId: string;
  batchSize: number;
  /** How long the broker may hold a fetch to fill a batch (the ESM's MaximumBatchingWindow). */
  batchingWindowMs: number;
  /** Where a partition with no committed group offset starts (as the ESM's StartingPosition). */
  startingPosition: StartingPosition;
  startingTimestampMs?: number;
  /** Stop once every assigned partition is committed up to its high watermark and nothing arrived for this long. */
  exitWhenIdleMs?: number;
  /** @default 30,000 (kafkajs's); a crashed member holds its partitions this long */
  sessionTimeoutMs?: number;
  /** @default 4 */
  partitionsConsumedConcurrently?: number;
  retry?: RetryPolicy;
  signal: AbortSignal;
  /** Ingests one event; throws a LakeError (retryable or not) when the batch did not commit. */
  deliver: (formed: FormedEvent) => Promise<T>;
  onDelivered?: (formed: FormedEvent, result: T, attempts: number) => void;
  onRetry?: (formed: FormedEvent, error: unknown, attempt: number, delayMs: number) => void;
  onStatus?: (status: EventSourceStatus) => void;
  onWarning?: (message: string) => void;
  /** Told the partitions this member holds after every (re)join of the group. */
  onJoin?: (partitions: { topic: string; partition: number }[]) => void;
  /** How often status is taken (and idleness checked). @default 1,000 */
  statusIntervalMs?: number;
}

export interface EventSourceStatus {
  records: number;
  batches: number;
  recordsPerSecond: number;
  partitions: PartitionProgress[];
}

export interface EventSourceSummary {
  records: number;
  batches: number;
  stoppedBy: 'signal' | 'idle';
}

/** Group offsets per partition (-1 when none), high watermarks per partition. */
async function readOffsets(
  admin: Admin,
  groupId: string,
  topics: string[],
): Promise<{ committed: Map<string, bigint>; low: Map<string, bigint>; high: Map<string, bigint> }> {
  const committed = new Map<string, bigint>();
  const low = new Map<string, bigint>();
  const high = new Map<string, bigint>();
  for (const t of await admin.fetchOffsets({ groupId, topics })) {
    for (const p of t.partitions) committed.set(partitionKey(t.topic, p.partition), BigInt(p.offset));
  }
  for (const topic of topics) {
    for (const p of await admin.fetchTopicOffsets(topic)) {
      low.set(partitionKey(topic, p.partition), BigInt(p.low));
      high.set(partitionKey(topic, p.partition), BigInt(p.high));
    }
  }
  return { committed, low, high };
}

/**
 * Runs until the signal aborts or, with `exitWhenIdleMs`, everything available is committed.
 * @throws the delivery error that retrying cannot fix (group offsets of that batch stay uncommitted)
 * @throws Error when the Kafka client gives up (it retries transient trouble itself)
 */
export async function runEventSource<T>(options: EventSourceOptions<T>): Promise<EventSourceSummary> {
  if (options.startingPosition === 'at-timestamp' && options.startingTimestampMs === undefined) {
    throw new ValidationError('starting position at-timestamp needs a starting timestamp');
  }
  const sessionTimeout = options.sessionTimeoutMs ?? 30_000;
  const window = options.batchingWindowMs;
  const makeConsumer = (): Consumer =>
    options.kafka.consumer({
      groupId: options.groupId,
      sessionTimeout,
      heartbeatInterval: Math.max(100, Math.min(3_000, Math.floor(sessionTimeout / 3))),
      // The broker holds a fetch until a full 6 MB batch or the window: the ESM's batching window.
      // A window of 0 answers at once with whatever is there; an empty partition is held 100 ms, so an
      // idle consumer does not spin.
      minBytes: window > 0 ? ESM_MAX_PAYLOAD_BYTES : 1,
      maxWaitTimeInMs: window > 0 ? window : 100,
      maxBytesPerPartition: ESM_MAX_PAYLOAD_BYTES,
      maxBytes: ESM_MAX_PAYLOAD_BYTES * 4,
    });
  let consumer = makeConsumer();
  let progressSinceCrash = false;
  const admin = options.kafka.admin();
  const warn = options.onWarning ?? (() => undefined);

  let stopping = false;
  let stoppedBy: EventSourceSummary['stoppedBy'] = 'signal';
  let fatal: { error: unknown } | undefined;
  let inFlight = 0;
  let records = 0;
  let batches = 0;
  let joined = false;
  let lastArrival = Date.now();
  let assigned: { topic: string; partition: number }[] = [];
  const progress = new Map<string, PartitionProgress>();
  const pendingSeeks = new Map<string, string>();
  let wake: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const stop = (by: EventSourceSummary['stoppedBy']) => {
    if (stopping) return;
    stopping = true;
    stoppedBy = by;
    wake();
  };
  const onAbort = () => stop('signal');
  options.signal.addEventListener('abort', onAbort, { once: true });

  const progressOf = (topic: string, partition: number): PartitionProgress => {
    const key = partitionKey(topic, partition);
    let p = progress.get(key);
    if (!p) {
      p = { topic, partition };
      progress.set(key, p);
    }
    return p;
  };

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
    if (stopping || batch.isEmpty()) return;
    lastArrival = Date.now();
    const p = progressOf(batch.topic, batch.partition);
    p.high = BigInt(batch.highWatermark);
    const messages = batch.messages.map((m) => toConsumedMessage(batch.topic, batch.partition, m));
    const events = formEsmEvents(options.bootstrapServers, messages, { batchSize: options.batchSize });
    // Each event's span starts where the consumer read from, so holes between events can close.
    markFetchStarts(events, fetchStartOf(batch));
    const gone = () => stopping || !isRunning() || isStale();
    for (const formed of events) {
      // The rest of the fetch is abandoned whole; the next fetch (or the next run) starts where the group is.
      if (gone()) return;
      if (formed.records === 1 && formed.bytes > ESM_MAX_PAYLOAD_BYTES) {
        warn(
          `${batch.topic}-${batch.partition}@${formed.spans[0].first}: one record of ${formed.bytes} bytes exceeds the ESM's 6 MB payload (the Lambda could not take it); ingested alone`,
        );
      }
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
          stop('signal');
          return;
        }
        const last = formed.spans[0].last;
        resolveOffset(last.toString());
        // The commit point of the group: only now, after the table committed, may Kafka forget the batch.
        try {
          await consumer.commitOffsets([
            { topic: batch.topic, partition: batch.partition, offset: (last + 1n).toString() },
          ]);
          p.committed = last + 1n;
        } catch (error) {
          // The table holds the batch, so a redelivery is skipped as a replay. Thrown on, so kafkajs
          // rejoins the group when the cause is a rebalance (its usual one) instead of fetching on.
          warn(
            `group offset commit for ${batch.topic}-${batch.partition} failed (the table holds the batch; its redelivery will be skipped): ${describeError(error)}`,
          );
          records += formed.records;
          batches += 1;
          options.onDelivered?.(formed, outcome.result, outcome.attempts);
          throw error;
        }
        records += formed.records;
        batches += 1;
        progressSinceCrash = true;
        options.onDelivered?.(formed, outcome.result, outcome.attempts);
      } finally {
        inFlight--;
      }
      lastArrival = Date.now();
      // One fetch can hold many events: keep the membership alive between them (a rebalance throws).
      if (!gone()) await heartbeat();
    }
  }

  let ticking = false;
  let lastTick = { at: Date.now(), records: 0 };
  let highAtJoin: Map<string, bigint> | undefined;
  async function tick(): Promise<void> {
    if (ticking || stopping || !joined) return;
    ticking = true;
    try {
      // The whole group's partitions, not only this member's: "everything available is committed"
      // must not be declared while a partition sits with a member that died (until its session ends).
      const offsets = await readOffsets(admin, options.groupId, options.topics);
      highAtJoin ??= offsets.high;
      const all: PartitionProgress[] = [];
      for (const [key, high] of offsets.high) {
        const topic = key.slice(0, key.lastIndexOf('-'));
        const p = progressOf(topic, Number(key.slice(key.lastIndexOf('-') + 1)));
        p.high = high;
        p.low = offsets.low.get(key);
        const group = offsets.committed.get(key);
        if (group !== undefined && group >= 0n && (p.committed === undefined || group > p.committed)) {
          p.committed = group;
        }
        p.startHigh = highAtJoin.get(key);
        all.push(p);
      }
      all.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
      const now = Date.now();
      const rate = ((records - lastTick.records) * 1000) / Math.max(1, now - lastTick.at);
      lastTick = { at: now, records };
      options.onStatus?.({ records, batches, recordsPerSecond: rate, partitions: all });
      if (
        options.exitWhenIdleMs !== undefined &&
        inFlight === 0 &&
        now - lastArrival >= options.exitWhenIdleMs &&
        all.length > 0 &&
        all.every((p) => isCaughtUp(p, options.startingPosition))
      ) {
        stop('idle');
      }
    } catch (error) {
      warn(`could not read offsets for status: ${describeError(error)}`);
    } finally {
      ticking = false;
    }
  }

  /** One consumer's life: until the runner stops (undefined) or kafkajs crashes it for good. */
  async function consumeUntilStopOrCrash(c: Consumer): Promise<{ error: unknown } | undefined> {
    let crash: { error: unknown } | undefined;
    let onCrash: () => void = () => undefined;
    const crashed = new Promise<void>((resolve) => {
      onCrash = resolve;
    });
    await c.connect();
    try {
      await c.subscribe({
        topics: options.topics,
        fromBeginning: options.startingPosition === 'trim-horizon',
      });
      c.on(c.events.GROUP_JOIN, (event) => {
        assigned = Object.entries(event.payload.memberAssignment).flatMap(([topic, partitions]) =>
          partitions.map((partition) => ({ topic, partition })),
        );
        joined = true;
        lastArrival = Date.now();
        options.onJoin?.(assigned);
        // Seeks registered here, before the first fetch of the generation, so no message from
        // kafkajs's default position slips in first.
        for (const seek of takeSeeks(assigned, pendingSeeks)) c.seek(seek);
      });
      c.on(c.events.CRASH, (event) => {
        if (event.payload.restart) return; // kafkajs restarts the consumer itself
        crash = { error: event.payload.error };
        onCrash();
      });
      await c.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 4,
        eachBatch,
      });
      const timer = setInterval(() => void tick(), options.statusIntervalMs ?? 1_000);
      try {
        if (!stopping) await Promise.race([stopped, crashed]);
      } finally {
        clearInterval(timer);
      }
      // Let the event being delivered finish: its table commit lands or fails whole, then the group commit.
      while (inFlight > 0) await sleep(50);
      if (crash === undefined) await c.stop();
    } finally {
      await c.disconnect();
    }
    return crash;
  }

  await admin.connect();
  try {
    if (options.startingPosition === 'at-timestamp') {
      const seeks = await planTimestampSeeks(
        admin,
        options.groupId,
        options.topics,
        options.startingTimestampMs ?? 0,
      );
      for (const [key, offset] of seeks) pendingSeeks.set(key, offset);
    }
    for (let crashes = 0; ; ) {
      const crash = await consumeUntilStopOrCrash(consumer);
      if (stopping || crash === undefined) break;
      // kafkajs gave up on this consumer (it restarts by itself only on errors it deems retriable).
      // A fresh one loses nothing: the group offsets never run ahead of the tables.
      crashes = progressSinceCrash ? 1 : crashes + 1;
      progressSinceCrash = false;
      if (crashes > MAX_CRASHES_WITHOUT_PROGRESS) {
        fatal ??= { error: crash.error };
        break;
      }
      const delay = backoffDelay(options.retry ?? DEFAULT_RETRY, crashes);
      warn(`the Kafka consumer stopped (${describeError(crash.error)}); a new one starts in ${delay} ms`);
      for (let waited = 0; waited < delay && !stopping; waited += 200) await sleep(200);
      if (stopping) break;
      consumer = makeConsumer();
      joined = false;
    }
  } finally {
    options.signal.removeEventListener('abort', onAbort);
    await admin.disconnect();
  }
  if (fatal) throw fatal.error;
  return { records, batches, stoppedBy };
}
