/** Where a consumer group stands on its topics, read with the admin client (for status and idleness). */
import type { Admin } from 'kafkajs';
import { partitionKey } from './partition-progress.js';

export interface GroupOffsets {
  /** The group's committed offset per partition key (-1 when none). */
  committed: Map<string, bigint>;
  low: Map<string, bigint>;
  high: Map<string, bigint>;
}

/**
 * The group's offsets and every partition's low and high watermarks, by partition key.
 * @throws Error when the Kafka client gives up (it retries transient trouble itself)
 */
export async function readGroupOffsets(
  admin: Admin,
  groupId: string,
  topics: string[],
): Promise<GroupOffsets> {
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
