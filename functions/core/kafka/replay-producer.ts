/**
 * The Kafka side of `floe replay` (functions/core/replay): a producer that cannot reorder, the target
 * topic's partition count, the key partitioner, and the checkpoints read back from the target's tail.
 *
 * Ordering and exactly once rest on the producer, not on the broker's idempotence (librdkafka's mock
 * cluster, like some managed brokers, has none): acks from all in-sync replicas, one request in flight,
 * every send awaited before the next, and no client-side retries. A retried request that had in fact
 * landed would duplicate it; instead a failed send fails the run, and the rerun reads back what landed.
 */
import { type Admin, type IHeaders, type Message, Partitioners, type Producer } from 'kafkajs';
import { LakeError, ValidationError } from '../errors.js';
import type { ReplayRecord } from '../records/replay-records.js';
import { type Checkpoint, checkpointFromTail } from '../records/replay-source.js';
import type { KafkaConnection } from './kafka-client.js';
import { readRanges, type ReadRecord } from './read-ranges.js';

export interface ReplayProducer {
  /** Sends the records in order and resolves once all are acknowledged. @throws LakeError (retryable) */
  send(records: ReplayRecord[]): Promise<void>;
  disconnect(): Promise<void>;
}

function headersOf(record: ReplayRecord): IHeaders {
  const out: Record<string, (Buffer | null)[]> = {};
  for (const h of record.headers) {
    // kafkajs writes a null header value as Kafka's null (length -1); its types do not say so.
    const values = out[h.key] ?? [];
    values.push(h.value === null ? null : Buffer.from(h.value));
    out[h.key] = values;
  }
  const headers: Record<string, Buffer | null | (Buffer | null)[]> = {};
  for (const [k, v] of Object.entries(out)) headers[k] = v.length === 1 ? v[0] : v;
  return headers as IHeaders;
}

export function toKafkaMessage(record: ReplayRecord): Message {
  return {
    partition: record.partition,
    key: record.key === null ? null : Buffer.from(record.key),
    value: record.value === null ? null : Buffer.from(record.value),
    headers: headersOf(record),
    ...(record.timestampMs === undefined ? {} : { timestamp: String(record.timestampMs) }),
  };
}

/** @throws LakeError (retryable) when the producer cannot connect */
export async function createReplayProducer(
  kafka: KafkaConnection,
  topic: string,
  options: { idempotent?: boolean } = {},
): Promise<ReplayProducer> {
  const idempotent = options.idempotent ?? false;
  const producer: Producer = kafka.producer({
    allowAutoTopicCreation: true,
    maxInFlightRequests: 1,
    idempotent,
    // The idempotent producer's retries are deduplicated by the broker (and kafkajs requires them);
    // a plain producer's are not, so it gets none.
    ...(idempotent ? {} : { retry: { retries: 0 } }),
  });
  try {
    await producer.connect();
  } catch (error) {
    throw new LakeError(`cannot connect the producer for ${topic}: ${(error as Error).message}`, {
      cause: error,
      retryable: true,
    });
  }
  return {
    async send(records) {
      if (records.length === 0) return;
      try {
        await producer.send({ topic, acks: -1, messages: records.map(toKafkaMessage) });
      } catch (error) {
        const message = (error as Error).message;
        // A batch over the broker's message.max.bytes fails the same way on every rerun.
        const tooLarge = /too large/i.test(message);
        throw new LakeError(
          tooLarge
            ? `producing to ${topic} failed: ${message}; lower --batch-size (the batch is one record batch per partition)`
            : `producing to ${topic} failed: ${message}; nothing is retried blindly — rerun: it reads back what landed and continues after it`,
          { cause: error, retryable: !tooLarge },
        );
      }
    },
    disconnect: () => producer.disconnect(),
  };
}

const defaultPartitioner = Partitioners.DefaultPartitioner();

/** Kafka's default partition for a key (murmur2, as the Java client and kafkajs compute it). */
export function keyPartition(key: Uint8Array, count: number): number {
  return defaultPartitioner({
    topic: '',
    partitionMetadata: Array.from({ length: count }, (_, partitionId) => ({
      partitionId,
      leader: 0,
      partitionErrorCode: 0,
      replicas: [0],
      isr: [0],
    })),
    message: { key: Buffer.from(key), value: null },
  });
}

export interface TopicPartitionOffsets {
  partition: number;
  low: bigint;
  high: bigint;
}

/**
 * Each target partition's checkpoint, from its tail: the last `window` records, then 4× further back
 * while no replayed record shows up, down to the low watermark (an empty partition, or one no replay
 * wrote, has an empty checkpoint).
 * @throws ValidationError for checkpoint headers floe did not write
 */
export async function readTargetCheckpoints(
  kafka: KafkaConnection,
  topic: string,
  partitions: TopicPartitionOffsets[],
  options: { window?: number } = {},
): Promise<Map<number, Checkpoint>> {
  const found = new Map<number, Checkpoint>();
  let window = BigInt(options.window ?? 64);
  let open = partitions.filter((p) => p.high > p.low);
  for (const p of partitions) if (p.high <= p.low) found.set(p.partition, new Map());
  const reachedLow = new Set<number>();
  while (open.length > 0) {
    const tails = new Map<number, ReadRecord[]>();
    const ranges = open.map((p) => {
      const start = maxOffset(p.high - window, p.low);
      if (start === p.low) reachedLow.add(p.partition);
      return { topic, partition: p.partition, start, end: p.high };
    });
    await readRanges({
      kafka,
      ranges,
      onRecords: async (records) => {
        for (const r of records) {
          let list = tails.get(r.partition);
          if (!list) {
            list = [];
            tails.set(r.partition, list);
          }
          list.push(r);
        }
      },
    });
    for (const p of open) {
      const checkpoint = checkpointFromTail(tails.get(p.partition) ?? []);
      if (checkpoint) found.set(p.partition, checkpoint);
      else if (reachedLow.has(p.partition)) found.set(p.partition, new Map());
    }
    open = open.filter((p) => !found.has(p.partition));
    window *= 4n;
  }
  return found;
}

/** Math.max for offsets (it takes no bigints). */
function maxOffset(a: bigint, b: bigint): bigint {
  if (a > b) return a;
  return b;
}

/** @throws ValidationError when the topic reports no partitions */
export async function partitionCountOf(admin: Admin, topic: string): Promise<number> {
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
  const count = metadata.topics[0]?.partitions.length ?? 0;
  if (count === 0) throw new ValidationError(`topic ${topic} has no partitions`);
  return count;
}
