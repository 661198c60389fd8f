/**
 * Group-free reads of offset ranges (functions/core/kafka/read-ranges.ts) against librdkafka's mock
 * cluster (3 brokers, partitions led by different ones): exactly the offsets asked for, several
 * ranges of one partition, no consumer group, and a range past the partition's end named in the
 * error. (The mock cluster cannot run kafkajs transactions: READ_COMMITTED is kafkajs's own filter.)
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LakeError } from '../../../functions/core/errors.js';
import { createKafka } from '../../../functions/core/kafka/kafka-client.js';
import { collectRanges } from '../../../functions/core/kafka/read-range.js';
import { type ReadRecord, readRanges } from '../../../functions/core/kafka/read-ranges.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';

async function produce(kafka: Kafka, topic: string, partition: number, count: number): Promise<void> {
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  await producer.connect();
  try {
    // Several sends: several record batches, so a fetch may start inside the partition's log.
    for (let i = 0; i < count; i += 7) {
      const n = Math.min(7, count - i);
      await producer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: n }, (_, j) => ({
          partition,
          key: `k${i + j}`,
          value: `v${i + j}`,
          headers: { h: `x${i + j}` },
        })),
      });
    }
  } finally {
    await producer.disconnect();
  }
}

async function readAll(kafka: Kafka, ranges: Parameters<typeof readRanges>[0]['ranges']) {
  const got: ReadRecord[] = [];
  await readRanges({ kafka, ranges, timeoutMs: 20_000, onRecords: async (r) => void got.push(...r) });
  return got;
}

describe.skipIf(!kcatAvailable())('reading offset ranges without a consumer group', () => {
  let broker: MockKafka;
  let kafka: Kafka;

  beforeAll(async () => {
    broker = await startMockKafka(3);
    kafka = await createKafka({ brokers: broker.bootstrapServers.split(','), log: () => undefined });
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it('hands over exactly the offsets of each range, per partition in offset order', async () => {
    // Prepare: 30 records in partition 0, 12 in partition 3
    const topic = `rr-${randomUUID()}`;
    await produce(kafka, topic, 0, 30);
    await produce(kafka, topic, 3, 12);

    // Act: two ranges of partition 0 with a gap between them, one of partition 3
    const got = await readAll(kafka, [
      { topic, partition: 0, start: 20n, end: 26n },
      { topic, partition: 0, start: 3n, end: 9n },
      { topic, partition: 3, start: 0n, end: 12n },
    ]);

    // Assess
    const offsets = (p: number) => got.filter((r) => r.partition === p).map((r) => Number(r.offset));
    expect(offsets(0)).toEqual([3, 4, 5, 6, 7, 8, 20, 21, 22, 23, 24, 25]);
    expect(offsets(3)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    const r21 = got.find((r) => r.partition === 0 && r.offset === 21n)!;
    expect(Buffer.from(r21.key!).toString()).toBe('k21');
    expect(Buffer.from(r21.value!).toString()).toBe('v21');
    expect(r21.headers.map((h) => [h.key, Buffer.from(h.value!).toString()])).toEqual([['h', 'x21']]);
  });

  it('reads the gaps of the live view: every hot range of a partition, not only its last', async () => {
    // Prepare: the table holds [0, 9] and [15, 19] of partition 1; the hotset is [10, 15) and [20, 24)
    const topic = `rr-${randomUUID()}`;
    await produce(kafka, topic, 1, 24);

    // Act
    const messages = await collectRanges(kafka, [
      { topic, partition: 1, from: 10n, toExclusive: 15n },
      { topic, partition: 1, from: 20n, toExclusive: 24n },
    ]);

    // Assess
    expect(messages.map((m) => Number(m.offset))).toEqual([10, 11, 12, 13, 14, 20, 21, 22, 23]);
  });

  it('joins no consumer group', async () => {
    // Prepare: a client that fails the test if anything asks it for a (group) consumer; the mock
    // cluster does not answer ListGroups, so the groups cannot be listed afterwards
    const topic = `rr-${randomUUID()}`;
    await produce(kafka, topic, 2, 5);
    const noConsumers = new Proxy(kafka, {
      get(target, property, receiver) {
        if (property === 'consumer') throw new Error('a consumer group was asked for');
        return Reflect.get(target, property, receiver);
      },
    });

    // Act
    const got = await readAll(noConsumers, [{ topic, partition: 2, start: 0n, end: 5n }]);

    // Assess
    expect(got.map((r) => Number(r.offset))).toEqual([0, 1, 2, 3, 4]);
  });

  it('says which partition when a range starts past what the partition holds', async () => {
    // Prepare
    const topic = `rr-${randomUUID()}`;
    await produce(kafka, topic, 0, 3);

    // Act
    const read = readAll(kafka, [{ topic, partition: 0, start: 50n, end: 60n }]);

    // Assess
    const error = await read.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LakeError);
    expect((error as LakeError).retryable).toBe(false);
    expect((error as Error).message).toContain(`offset 50 of ${topic}/0 is no longer held by Kafka`);
  });
});
