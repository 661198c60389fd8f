/**
 * How `runEventSource` stops: a status read still under way when the signal aborts finishes before the
 * admin client disconnects. A read that ran on after the disconnect would reconnect the admin's sockets
 * and the process (`floe run`) would never exit. The race is made certain here with a stand-in Kafka
 * client whose offset read waits until the test lets it go; the real client's side of it (a broker, a
 * group) is covered by test/integration/kafka/floe-status.test.ts and fetch-starts.test.ts.
 */
import type { Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { runEventSource } from '../../../functions/core/kafka/event-source.js';

const TOPIC = 'orders';

/** A stand-in for the few kafkajs calls the runner makes, logging the admin's in order. */
function standInKafka() {
  const calls: string[] = [];
  let releaseRead: () => void = () => undefined;
  const readReleased = new Promise<void>((resolve) => {
    releaseRead = resolve;
  });
  let readStarted: () => void = () => undefined;
  const readStarting = new Promise<void>((resolve) => {
    readStarted = resolve;
  });
  const listeners = new Map<
    string,
    (event: { payload: { memberAssignment: Record<string, number[]> } }) => void
  >();
  const admin = {
    connect: async () => void calls.push('admin.connect'),
    disconnect: async () => void calls.push('admin.disconnect'),
    fetchOffsets: async () => {
      calls.push('admin.fetchOffsets');
      readStarted();
      await readReleased;
      return [{ topic: TOPIC, partitions: [{ partition: 0, offset: '-1' }] }];
    },
    fetchTopicOffsets: async () => {
      calls.push('admin.fetchTopicOffsets');
      return [{ partition: 0, low: '0', high: '0', offset: '0' }];
    },
  };
  const consumer = {
    events: { GROUP_JOIN: 'group_join', CRASH: 'crash' },
    connect: async () => undefined,
    subscribe: async () => undefined,
    on: (
      name: string,
      listener: (event: { payload: { memberAssignment: Record<string, number[]> } }) => void,
    ) => listeners.set(name, listener),
    run: async () => {
      calls.push('consumer.run');
      listeners.get('group_join')?.({ payload: { memberAssignment: { [TOPIC]: [0] } } });
    },
    stop: async () => undefined,
    disconnect: async () => undefined,
  };
  const kafka = { admin: () => admin, consumer: () => consumer } as unknown as Kafka;
  return { kafka, calls, readStarting, releaseRead };
}

describe('runEventSource stopping', () => {
  it('lets a status read under way finish before the admin disconnects', async () => {
    // Prepare: a run whose first status read hangs in its offset fetch
    const { kafka, calls, readStarting, releaseRead } = standInKafka();
    const controller = new AbortController();
    const run = runEventSource({
      kafka,
      bootstrapServers: 'stand-in:9092',
      topics: [TOPIC],
      groupId: 'g',
      batchSize: 10,
      batchingWindowMs: 0,
      startingPosition: 'trim-horizon',
      statusIntervalMs: 5,
      signal: controller.signal,
      deliver: async () => undefined,
    });
    await readStarting;

    // Act: the signal aborts while the read waits, and the read is let go only after the stop began
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 20));
    releaseRead();
    const summary = await run;
    await new Promise((resolve) => setTimeout(resolve, 20)); // what ran on after the run returned

    // Assess: every admin call of the read came before the disconnect, and the disconnect came last
    expect(summary.stoppedBy).toBe('signal');
    expect(calls.at(-1)).toBe('admin.disconnect');
    expect(calls.filter((c) => c === 'admin.disconnect')).toHaveLength(1);
    expect(calls).toContain('admin.fetchTopicOffsets');
  });

  it('stops at once when the signal aborted before the run began (a signal during start-up)', async () => {
    // Prepare: the signal aborts before runEventSource is called (floe run checking the brokers)
    const { kafka, calls } = standInKafka();
    const controller = new AbortController();
    controller.abort();

    // Act
    const summary = await runEventSource({
      kafka,
      bootstrapServers: 'stand-in:9092',
      topics: [TOPIC],
      groupId: 'g',
      batchSize: 10,
      batchingWindowMs: 0,
      startingPosition: 'trim-horizon',
      signal: controller.signal,
      deliver: async () => undefined,
    });

    // Assess: stopped by the signal, without ever consuming; the admin let go
    expect(summary).toEqual({ records: 0, batches: 0, stoppedBy: 'signal' });
    expect(calls).not.toContain('consumer.run');
    expect(calls.at(-1)).toBe('admin.disconnect');
  }, 10_000);
});
