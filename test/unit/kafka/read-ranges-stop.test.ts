/**
 * How `readRanges` ends when one leader's fetch fails: the cluster disconnects only after every other
 * leader's connect and fetch of the round settled. One still under way after the disconnect would
 * reconnect its broker's socket, and `floe backfill`, `replay` or `serve --live` would never exit. The
 * race is made certain with a stand-in for kafkajs's cluster (reached the way kafka-cluster.ts reaches
 * the real one) whose second leader connects only when the test lets it; the real cluster's side of
 * reading ranges is covered by the backfill, replay and live integration tests.
 */
import type { Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { readRanges } from '../../../functions/core/kafka/read-ranges.js';

const TOPIC = 'orders';

/** A cluster with two leaders: node 1 refuses its fetch, node 2 connects once `releaseConnect` is called. */
function standInCluster() {
  const calls: string[] = [];
  let releaseConnect: () => void = () => undefined;
  const connectReleased = new Promise<void>((resolve) => {
    releaseConnect = resolve;
  });
  let askedNode2: () => void = () => undefined;
  const node2Asked = new Promise<void>((resolve) => {
    askedNode2 = resolve;
  });
  const refusing = {
    fetch: async () => {
      calls.push('node 1 fetch');
      throw new Error('node 1 refused the fetch');
    },
  };
  const slow = {
    fetch: async () => {
      calls.push('node 2 fetch');
      return { responses: [] };
    },
  };
  const cluster = {
    connect: async () => void calls.push('connect'),
    disconnect: async () => void calls.push('disconnect'),
    addMultipleTargetTopics: async () => undefined,
    refreshMetadata: async () => undefined,
    findLeaderForPartitions: () => ({ '1': [0], '2': [1] }),
    findBroker: async ({ nodeId }: { nodeId: string }) => {
      if (nodeId === '1') return refusing;
      askedNode2();
      await connectReleased;
      calls.push('node 2 connected');
      return slow;
    },
  };
  const kafka = {
    [Symbol('private:Kafka:createCluster')]: () => cluster,
  } as unknown as Kafka;
  return { kafka, calls, node2Asked, releaseConnect };
}

describe('readRanges after a failed fetch', () => {
  it('disconnects only after the other leaders of the round settled', async () => {
    // Prepare: a read of two partitions led by two brokers
    const { kafka, calls, node2Asked, releaseConnect } = standInCluster();
    const reading = readRanges({
      kafka,
      ranges: [
        { topic: TOPIC, partition: 0, start: 0n, end: 10n },
        { topic: TOPIC, partition: 1, start: 0n, end: 10n },
      ],
      onRecords: async () => undefined,
    });
    reading.catch(() => undefined);
    await node2Asked;

    // Act: node 1's fetch fails while node 2 is still connecting; node 2 connects only afterwards
    await new Promise((resolve) => setTimeout(resolve, 20));
    releaseConnect();

    // Assess: the read fails with node 1's error, and the disconnect came after node 2's fetch, last
    await expect(reading).rejects.toThrow('node 1 refused the fetch');
    expect(calls.at(-1)).toBe('disconnect');
    expect(calls.indexOf('node 2 fetch')).toBeGreaterThan(calls.indexOf('node 2 connected'));
    expect(calls.indexOf('disconnect')).toBeGreaterThan(calls.indexOf('node 2 fetch'));
  });
});
