/**
 * Starting from a time: `floe run --starting-position at-timestamp` and `floe backfill --from/--to ISO`
 * ask the broker for the first offset at or after a time per partition (Kafka's ListOffsets by
 * timestamp). Apart from the consumers, on the admin calls alone, so the lookup is tested with a fake
 * admin; librdkafka's mock cluster, the broker the integration tests run, cannot look offsets up by time,
 * which is how the refusal is tested end to end.
 */
import type { Admin } from 'kafkajs';
import { describeError, LakeError } from '../errors.js';
import { partitionKey } from './partition-progress.js';

/** The admin calls a time lookup needs (a kafkajs Admin has them). */
export type TimeLookupAdmin = Pick<Admin, 'fetchTopicOffsets' | 'fetchTopicOffsetsByTimestamp'>;
export type SeekPlanningAdmin = Pick<
  Admin,
  'fetchOffsets' | 'fetchTopicOffsets' | 'fetchTopicOffsetsByTimestamp'
>;

/** The broker answered, but cannot look offsets up by time: a retry cannot help. */
export class TimeLookupUnsupportedError extends LakeError {
  constructor(message: string) {
    super(message, { retryable: false });
  }
}

async function lookUp(admin: TimeLookupAdmin, topic: string, ms: number): Promise<Map<number, bigint>> {
  let answer: Awaited<ReturnType<Admin['fetchTopicOffsetsByTimestamp']>>;
  try {
    answer = await admin.fetchTopicOffsetsByTimestamp(topic, ms);
  } catch (cause) {
    throw new LakeError(
      `the broker could not look up the offsets of ${topic} at ${new Date(ms).toISOString()}: ${describeError(cause)} ` +
        '(brokers without offset-for-time lookup, such as librdkafka’s mock cluster, never can; start from ' +
        'trim-horizon/earliest instead. Retrying helps only if the broker was briefly unavailable)',
      { cause },
    );
  }
  const out = new Map<number, bigint>();
  for (const p of answer) out.set(p.partition, BigInt(p.offset));
  return out;
}

/**
 * Per partition, the offset of the first record at or after `ms` (kafkajs answers the high watermark
 * where there is none, so a time past the end starts at the end).
 *
 * A broker that cannot look up by time answers "none" (-1) for every time, which kafkajs turns into the
 * high watermarks: indistinguishable from a time past the end, and a backfill would read nothing and
 * succeed. So when every partition holding records answers its end, the time 0 is looked up too: a
 * broker that can look up answers the first record there, one that cannot answers the end again.
 * @throws TimeLookupUnsupportedError when the broker answers the end even for time 0
 * @throws LakeError when the broker cannot answer (not retryable when the broker cannot look up by time)
 */
export async function offsetsAtTime(
  admin: TimeLookupAdmin,
  topic: string,
  ms: number,
): Promise<Map<number, bigint>> {
  const offsets = await lookUp(admin, topic, ms);
  const holding = (await admin.fetchTopicOffsets(topic)).filter((p) => BigInt(p.low) < BigInt(p.high));
  const atEnd = (answer: Map<number, bigint>) =>
    holding.every((p) => (answer.get(p.partition) ?? BigInt(p.high)) >= BigInt(p.high));
  if (holding.length === 0 || !atEnd(offsets)) return offsets;
  if (ms > 0 && !atEnd(await lookUp(admin, topic, 0))) return offsets;
  throw new TimeLookupUnsupportedError(
    `the broker cannot look up the offsets of ${topic} by time: it answers "no record at or after" ` +
      `${new Date(ms).toISOString()} and even the epoch on partitions that hold records (librdkafka’s mock ` +
      'cluster never can; so do brokers older than Kafka 0.10.1). Start from offsets instead: ' +
      '--from earliest (backfill) or --starting-position trim-horizon (run)',
  );
}

/**
 * Where `at-timestamp` puts each partition (key `topic-partition`, offset as decimal text). As the
 * ESM's StartingPosition, it applies only to partitions the group has committed nothing on: a restart
 * continues from the group's offsets, it does not go back to the time.
 * @throws as offsetsAtTime
 */
export async function planTimestampSeeks(
  admin: SeekPlanningAdmin,
  groupId: string,
  topics: string[],
  ms: number,
): Promise<Map<string, string>> {
  const committed = new Map<string, bigint>();
  for (const t of await admin.fetchOffsets({ groupId, topics })) {
    for (const p of t.partitions) committed.set(partitionKey(t.topic, p.partition), BigInt(p.offset));
  }
  const seeks = new Map<string, string>();
  for (const topic of topics) {
    for (const [partition, offset] of await offsetsAtTime(admin, topic, ms)) {
      const key = partitionKey(topic, partition);
      if ((committed.get(key) ?? -1n) < 0n) seeks.set(key, offset.toString());
    }
  }
  return seeks;
}

/**
 * The planned seeks of the partitions a member was just assigned, taken out of `pending` (a partition
 * is sought once: after a rebalance the group's committed offset is where it continues).
 */
export function takeSeeks(
  assigned: readonly { topic: string; partition: number }[],
  pending: Map<string, string>,
): { topic: string; partition: number; offset: string }[] {
  const out: { topic: string; partition: number; offset: string }[] = [];
  for (const { topic, partition } of assigned) {
    const key = partitionKey(topic, partition);
    const offset = pending.get(key);
    if (offset === undefined) continue;
    pending.delete(key);
    out.push({ topic, partition, offset });
  }
  return out;
}
