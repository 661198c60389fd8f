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
import type { Admin, Consumer, EachBatchPayload } from 'kafkajs';
import { describeError, ValidationError } from '../errors.js';
import { backoffDelay, DEFAULT_RETRY, deliverWithRetry } from './deliver-with-retry.js';
import {
  consumerConfigOf,
  type EventSourceOptions,
  type EventSourceSummary,
} from './event-source-options.js';
import { ESM_MAX_PAYLOAD_BYTES, type FormedEvent, formEsmEvents, markFetchStarts } from './esm-batch.js';
import { fetchStartOf, toConsumedMessage } from './kafka-client.js';
import { planTimestampSeeks, takeSeeks } from './offsets-by-time.js';
import { readGroupOffsets } from './read-group-offsets.js';
import { type PartitionProgress, partitionKey, isCaughtUp } from './partition-progress.js';

export {
  type EventSourceOptions,
  type EventSourceStatus,
  type EventSourceSummary,
  STARTING_POSITIONS,
  type StartingPosition,
} from './event-source-options.js';

/** Consumers kafkajs crashed in a row, with no batch delivered between, before the runner gives up. */
const MAX_CRASHES_WITHOUT_PROGRESS = 10;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs until the signal aborts or, with `exitWhenIdleMs`, everything available is committed.
 * @throws ValidationError for `at-timestamp` without a starting timestamp
 * @throws the delivery error that retrying cannot fix (group offsets of that batch stay uncommitted)
 * @throws Error when the Kafka client gives up (it retries transient trouble itself)
 */
export async function runEventSource<T>(options: EventSourceOptions<T>): Promise<EventSourceSummary> {
  if (options.startingPosition === 'at-timestamp' && options.startingTimestampMs === undefined) {
    throw new ValidationError('starting position at-timestamp needs a starting timestamp');
  }
  return new EventSourceRun(options).run();
}

/**
 * One run of the event source: its state (the consumer of the moment, what is in flight, the counts,
 * each partition's progress, why and whether it stops) and the steps that move it, in the order a run
 * goes through them: start ({@link run}: seeks, then consumers until stopped, a fresh one after a crash),
 * join ({@link onJoin}), fetch ({@link deliverFetch}: ESM events formed), deliver ({@link deliver}),
 * commit the group offset ({@link commitGroupOffset}), status and idleness ({@link reportStatus}), stop.
 */
class EventSourceRun<T> {
  private readonly admin: Admin;
  private readonly warn: (message: string) => void;
  /** The consumer of this life; replaced by a fresh one when kafkajs crashed the last one for good. */
  private consumer: Consumer;
  /** Consumers kafkajs crashed since the last batch was delivered. */
  private crashesWithoutProgress = 0;

  /** Set once: no new event is delivered after it. */
  private stopping = false;
  private stoppedBy: EventSourceSummary['stoppedBy'] = 'signal';
  /** What ends the run with an error: a delivery retrying cannot fix, or kafkajs crashing too often. */
  private fatal: { error: unknown } | undefined;
  /** Resolves when stopping starts, ending the wait of the consumer's life. */
  private readonly stopped: Promise<void>;
  private wake: () => void = () => undefined;
  private readonly onAbort = () => this.stop('signal');

  /** Events handed to `deliver` whose group offset is not committed yet (a stop waits for them). */
  private inFlight = 0;
  private records = 0;
  private batches = 0;
  /** When a fetch last brought messages (or an event was delivered, or the group joined): idleness. */
  private lastArrival = Date.now();

  /** This member holds partitions: the status can be taken. */
  private joined = false;
  private readonly progress = new Map<string, PartitionProgress>();
  /** Where `at-timestamp` starts, by partition key: applied at the join that assigns the partition. */
  private readonly pendingSeeks = new Map<string, string>();

  /**
   * The status read under way (the next tick skips rather than piles up). A stop awaits it before the
   * admin disconnects: a read still running would reconnect the admin's sockets (the process hangs).
   */
  private tick: Promise<void> | undefined;
  private lastTick = { at: Date.now(), records: 0 };
  /** The high watermarks at the first status: where a `latest` start began. */
  private highAtJoin: Map<string, bigint> | undefined;

  constructor(private readonly options: EventSourceOptions<T>) {
    this.consumer = this.newConsumer();
    this.admin = options.kafka.admin();
    this.warn = options.onWarning ?? (() => undefined);
    this.stopped = new Promise<void>((resolve) => {
      this.wake = resolve;
    });
    // Aborted before the run began (a signal during start-up): no 'abort' event would come.
    if (options.signal.aborted) this.stop('signal');
    else options.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Start: the at-timestamp seeks planned, then consumers until stopped. */
  async run(): Promise<EventSourceSummary> {
    await this.admin.connect();
    try {
      if (this.options.startingPosition === 'at-timestamp') {
        const { groupId, topics, startingTimestampMs } = this.options;
        const seeks = await planTimestampSeeks(this.admin, groupId, topics, startingTimestampMs ?? 0);
        for (const [key, offset] of seeks) this.pendingSeeks.set(key, offset);
      }
      if (!this.stopping) await this.consumeUntilStopped();
    } finally {
      this.options.signal.removeEventListener('abort', this.onAbort);
      await this.tick;
      await this.admin.disconnect();
    }
    if (this.fatal) throw this.fatal.error;
    return { records: this.records, batches: this.batches, stoppedBy: this.stoppedBy };
  }

  /** Stop: no new event is delivered; the one in flight finishes (see {@link consumeOnce}). */
  private stop(by: EventSourceSummary['stoppedBy']): void {
    if (this.stopping) return;
    this.stopping = true;
    this.stoppedBy = by;
    this.wake();
  }

  /** A delivery failed for good: the run stops and throws it, its group offsets uncommitted. */
  private stopOnDeliveryFailure(error: unknown): void {
    this.fatal ??= { error };
    this.stop('signal');
  }

  private newConsumer(): Consumer {
    return this.options.kafka.consumer(consumerConfigOf(this.options));
  }

  /**
   * Crash handling: consumers one after the other, a fresh one (after a backoff) when kafkajs gave up on
   * the last, until the run stops or too many crash with no batch delivered between.
   */
  private async consumeUntilStopped(): Promise<void> {
    for (;;) {
      const crash = await this.consumeOnce(this.consumer);
      if (this.stopping || crash === undefined) return;
      // kafkajs gave up on this consumer (it restarts by itself only on errors it deems retriable).
      // A fresh one loses nothing: the group offsets never run ahead of the tables.
      this.crashesWithoutProgress += 1;
      if (this.crashesWithoutProgress > MAX_CRASHES_WITHOUT_PROGRESS) {
        this.fatal ??= { error: crash.error };
        return;
      }
      const delay = backoffDelay(this.options.retry ?? DEFAULT_RETRY, this.crashesWithoutProgress);
      this.warn(
        `the Kafka consumer stopped (${describeError(crash.error)}); a new one starts in ${delay} ms`,
      );
      for (let waited = 0; waited < delay && !this.stopping; waited += 200) await sleep(200);
      if (this.stopping) return;
      this.consumer = this.newConsumer();
      this.joined = false;
    }
  }

  /** One consumer's life: until the run stops (undefined) or kafkajs crashes it for good. */
  private async consumeOnce(c: Consumer): Promise<{ error: unknown } | undefined> {
    let crash: { error: unknown } | undefined;
    let onCrash: () => void = () => undefined;
    const crashed = new Promise<void>((resolve) => {
      onCrash = resolve;
    });
    await c.connect();
    try {
      await c.subscribe({
        topics: this.options.topics,
        fromBeginning: this.options.startingPosition === 'trim-horizon',
      });
      c.on(c.events.GROUP_JOIN, (event) => this.onJoin(c, event.payload.memberAssignment));
      c.on(c.events.CRASH, (event) => {
        if (event.payload.restart) return; // kafkajs restarts the consumer itself
        crash = { error: event.payload.error };
        onCrash();
      });
      await c.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 4,
        eachBatch: (payload) => this.deliverFetch(payload),
      });
      const timer = setInterval(() => this.startStatusRead(), this.options.statusIntervalMs ?? 1_000);
      try {
        if (!this.stopping) await Promise.race([this.stopped, crashed]);
      } finally {
        clearInterval(timer);
      }
      // Let the event being delivered finish: its table commit lands or fails whole, then the group commit.
      while (this.inFlight > 0) await sleep(50);
      if (crash === undefined) await c.stop();
    } finally {
      await c.disconnect();
    }
    return crash;
  }

  /** Join: every (re)join of the group hands this member its partitions. */
  private onJoin(c: Consumer, memberAssignment: Record<string, number[]>): void {
    const assigned = Object.entries(memberAssignment).flatMap(([topic, partitions]) =>
      partitions.map((partition) => ({ topic, partition })),
    );
    this.joined = true;
    this.lastArrival = Date.now();
    this.options.onJoin?.(assigned);
    // Seeks registered here, before the first fetch of the generation, so no message from
    // kafkajs's default position slips in first.
    for (const seek of takeSeeks(assigned, this.pendingSeeks)) c.seek(seek);
  }

  private progressOf(topic: string, partition: number): PartitionProgress {
    const key = partitionKey(topic, partition);
    let p = this.progress.get(key);
    if (!p) {
      p = { topic, partition };
      this.progress.set(key, p);
    }
    return p;
  }

  /** Fetch: one partition's fetched messages formed into ESM events, delivered one after the other. */
  private async deliverFetch(payload: EachBatchPayload): Promise<void> {
    const { batch, heartbeat, isRunning, isStale } = payload;
    if (this.stopping || batch.isEmpty()) return;
    this.lastArrival = Date.now();
    this.progressOf(batch.topic, batch.partition).high = BigInt(batch.highWatermark);
    const messages = batch.messages.map((m) => toConsumedMessage(batch.topic, batch.partition, m));
    const events = formEsmEvents(this.options.bootstrapServers, messages, {
      batchSize: this.options.batchSize,
    });
    // Each event's span starts where the consumer read from, so holes between events can close.
    markFetchStarts(events, fetchStartOf(batch));
    const gone = () => this.stopping || !isRunning() || isStale();
    for (const formed of events) {
      // The rest of the fetch is abandoned whole; the next fetch (or the next run) starts where the group is.
      if (gone()) return;
      if (formed.records === 1 && formed.bytes > ESM_MAX_PAYLOAD_BYTES) {
        this.warn(
          `${batch.topic}-${batch.partition}@${formed.spans[0].first}: one record of ${formed.bytes} bytes exceeds the ESM's 6 MB payload (the Lambda could not take it); ingested alone`,
        );
      }
      if (!(await this.deliver(formed, payload, gone))) return;
      this.lastArrival = Date.now();
      // One fetch can hold many events: keep the membership alive between them (a rebalance throws).
      if (!gone()) await heartbeat();
    }
  }

  /**
   * Deliver: one event to `deliver`, retried while retrying can help, then its group offset committed.
   * @returns false when the rest of the fetch is to be abandoned (stopping, or a failure that stops the run)
   * @throws the group commit's error (see {@link commitGroupOffset})
   */
  private async deliver(
    formed: FormedEvent,
    payload: EachBatchPayload,
    gone: () => boolean,
  ): Promise<boolean> {
    this.inFlight++;
    try {
      const outcome = await deliverWithRetry(() => this.options.deliver(formed), {
        retry: this.options.retry,
        shouldStop: gone,
        heartbeat: payload.heartbeat,
        onRetry: (error, attempt, delay) => this.options.onRetry?.(formed, error, attempt, delay),
      });
      if (outcome.status === 'abandoned') return false;
      if (outcome.status === 'failed') {
        this.stopOnDeliveryFailure(outcome.error);
        return false;
      }
      await this.commitGroupOffset(formed, payload, outcome.result, outcome.attempts);
      return true;
    } finally {
      this.inFlight--;
    }
  }

  /**
   * Commit the group offset of a delivered event: the commit point of the group. Only now, after the
   * table committed, may Kafka forget the batch.
   * @throws the commit's error, so kafkajs rejoins the group when the cause is a rebalance (its usual one)
   * instead of fetching on; the table holds the batch, so its redelivery is skipped as a replay
   */
  private async commitGroupOffset(
    formed: FormedEvent,
    payload: EachBatchPayload,
    result: T,
    attempts: number,
  ) {
    const { topic, partition } = payload.batch;
    const last = formed.spans[0].last;
    payload.resolveOffset(last.toString());
    try {
      await this.consumer.commitOffsets([{ topic, partition, offset: (last + 1n).toString() }]);
      this.progressOf(topic, partition).committed = last + 1n;
    } catch (error) {
      this.warn(
        `group offset commit for ${topic}-${partition} failed (the table holds the batch; its redelivery will be skipped): ${describeError(error)}`,
      );
      this.countDelivered(formed, result, attempts);
      throw error;
    }
    this.crashesWithoutProgress = 0;
    this.countDelivered(formed, result, attempts);
  }

  private countDelivered(formed: FormedEvent, result: T, attempts: number): void {
    this.records += formed.records;
    this.batches += 1;
    this.options.onDelivered?.(formed, result, attempts);
  }

  /** Status and idleness: taken every `statusIntervalMs` while this member holds partitions. */
  private startStatusRead(): void {
    if (this.tick || this.stopping || !this.joined) return;
    this.tick = this.reportStatus().finally(() => {
      this.tick = undefined;
    });
  }

  /** One status read ({@link startStatusRead}). Never throws: a failed read is a warning. */
  private async reportStatus(): Promise<void> {
    try {
      const partitions = await this.groupProgress();
      const now = Date.now();
      const rate = ((this.records - this.lastTick.records) * 1000) / Math.max(1, now - this.lastTick.at);
      this.lastTick = { at: now, records: this.records };
      this.options.onStatus?.({
        records: this.records,
        batches: this.batches,
        recordsPerSecond: rate,
        partitions,
      });
      if (this.isIdle(partitions, now)) this.stop('idle');
    } catch (error) {
      this.warn(`could not read offsets for status: ${describeError(error)}`);
    }
  }

  /**
   * The progress of every partition of the topics, sorted. The whole group's partitions, not only this
   * member's: "everything available is committed" must not be declared while a partition sits with a
   * member that died (until its session ends).
   */
  private async groupProgress(): Promise<PartitionProgress[]> {
    const offsets = await readGroupOffsets(this.admin, this.options.groupId, this.options.topics);
    this.highAtJoin ??= offsets.high;
    const all: PartitionProgress[] = [];
    for (const [key, high] of offsets.high) {
      const topic = key.slice(0, key.lastIndexOf('-'));
      const p = this.progressOf(topic, Number(key.slice(key.lastIndexOf('-') + 1)));
      p.high = high;
      p.low = offsets.low.get(key);
      const group = offsets.committed.get(key);
      if (group !== undefined && group >= 0n && (p.committed === undefined || group > p.committed)) {
        p.committed = group;
      }
      p.startHigh = this.highAtJoin.get(key);
      all.push(p);
    }
    return all.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
  }

  /** With `exitWhenIdleMs`: nothing in flight, nothing arrived for that long, every partition caught up. */
  private isIdle(partitions: PartitionProgress[], now: number): boolean {
    const { exitWhenIdleMs, startingPosition } = this.options;
    return (
      exitWhenIdleMs !== undefined &&
      this.inFlight === 0 &&
      now - this.lastArrival >= exitWhenIdleMs &&
      partitions.length > 0 &&
      partitions.every((p) => isCaughtUp(p, startingPosition))
    );
  }
}
