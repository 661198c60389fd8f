/**
 * The fetch positions the hole-closing rests on, from a real kafkajs consumer against a real
 * Kafka-protocol broker (librdkafka's mock cluster): every event the local event source forms says
 * where its span starts, the first at the fetch start and each next one right after the one before.
 * The mock cluster has no transactions (no idempotent producer) and no compaction, so the holes
 * themselves are unit-tested (test/unit/kafka/span-starts.test.ts); this checks kafkajs hands the
 * position over at all (it is not in its types).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartitionSpan } from '../../../functions/core/kafka/esm-batch.js';
import { runEventSource } from '../../../functions/core/kafka/event-source.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { kafkaClient, produce } from './kafka-kit.js';

describe.skipIf(!kcatAvailable())('fetch starts from a real consumer', () => {
  let broker: MockKafka;
  beforeAll(async () => {
    broker = await startMockKafka(1);
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it('chain every event of a partition from offset 0 with no offset left out', async () => {
    // Prepare: 200 records, 50 per partition
    const topic = `starts-${randomUUID()}`;
    const kafka = kafkaClient(broker.bootstrapServers);
    await produce(kafka, topic, 0, 200);
    const spans: PartitionSpan[] = [];

    // Act
    await runEventSource({
      kafka,
      bootstrapServers: broker.bootstrapServers,
      topics: [topic],
      groupId: `g-${randomUUID()}`,
      batchSize: 7,
      batchingWindowMs: 0,
      startingPosition: 'trim-horizon',
      exitWhenIdleMs: 1_500,
      sessionTimeoutMs: 6_000,
      statusIntervalMs: 200,
      signal: new AbortController().signal,
      deliver: async (formed) => {
        spans.push(...formed.spans);
      },
    });

    // Assess
    for (const partition of [0, 1, 2, 3]) {
      const mine = spans.filter((s) => s.partition === partition);
      expect(mine.length).toBeGreaterThan(1);
      let next = 0n;
      for (const s of mine) {
        expect(s.from, `${topic}-${partition}@${s.first}`).toBe(next);
        expect(s.first).toBe(next);
        next = s.last + 1n;
      }
      expect(next).toBe(50n);
    }
  });
});
