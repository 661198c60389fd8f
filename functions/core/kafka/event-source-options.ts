/**
 * What `runEventSource` (./event-source.ts) is given and what it reports: the settings of a local Kafka
 * event source mapping, named as the ESM's, and the callbacks a caller (`floe run`) watches it with.
 */
import type { ConsumerConfig, Kafka } from 'kafkajs';
import type { RetryPolicy } from './deliver-with-retry.js';
import { ESM_MAX_PAYLOAD_BYTES, type FormedEvent } from './esm-batch.js';
import type { PartitionProgress } from './partition-progress.js';

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

/** The consumer a run's options make (each consumer of the run, a fresh one after a crash too). */
export function consumerConfigOf<T>(options: EventSourceOptions<T>): ConsumerConfig {
  const sessionTimeout = options.sessionTimeoutMs ?? 30_000;
  const window = options.batchingWindowMs;
  return {
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
  };
}
