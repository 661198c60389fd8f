/**
 * Starting from a time (`floe run --starting-position at-timestamp`, `floe backfill --from/--to ISO`)
 * against a fake admin: the broker the integration tests run (librdkafka's mock cluster) cannot look
 * offsets up by time, so this is where the path is checked.
 */
import { describe, expect, it } from 'vitest';
import { planBackfill } from '../../../functions/core/kafka/backfill.js';
import {
  offsetsAtTime,
  planTimestampSeeks,
  TimeLookupUnsupportedError,
  takeSeeks,
} from '../../../functions/core/kafka/offsets-by-time.js';

const T0 = Date.parse('2026-11-30T12:00:00Z');
const T1 = Date.parse('2026-11-30T13:00:00Z');

/** A topic of 3 partitions; per time, the first offset at or after it (kafkajs's answer shape). */
function fakeAdmin(committed: Record<number, string> = {}) {
  const calls: { topic: string; ms: number }[] = [];
  const byTime = new Map([
    [T0, ['10', '200', '7']],
    [T1, ['25', '260', '7']],
  ]);
  return {
    calls,
    fetchTopicOffsetsByTimestamp: async (topic: string, ms?: number) => {
      calls.push({ topic, ms: ms ?? -1 });
      const offsets = byTime.get(ms ?? -1);
      if (!offsets) throw new Error(`no answer for ${ms}`);
      return offsets.map((offset, partition) => ({ partition, offset }));
    },
    fetchTopicOffsets: async (_topic: string) =>
      [
        ['0', '40'],
        ['150', '300'],
        ['7', '7'],
      ].map(([low, high], partition) => ({ partition, low, high, offset: high })),
    fetchOffsets: async ({ topics }: { groupId: string; topics?: string[] }) =>
      (topics ?? []).map((topic) => ({
        topic,
        partitions: [0, 1, 2].map((partition) => ({
          partition,
          offset: committed[partition] ?? '-1',
          metadata: null,
        })),
      })),
  };
}

describe('floe run --starting-position at-timestamp', () => {
  it('seeks each partition to its first offset at the time, then hands the seeks to the member that gets it', async () => {
    // Prepare
    const admin = fakeAdmin();

    // Act
    const seeks = await planTimestampSeeks(admin, 'g', ['orders'], T0);
    const firstMember = takeSeeks(
      [
        { topic: 'orders', partition: 0 },
        { topic: 'orders', partition: 2 },
      ],
      seeks,
    );
    const afterRebalance = takeSeeks([{ topic: 'orders', partition: 0 }], seeks);

    // Assess: the time was asked for, partitions are sought once, the unassigned one waits
    expect(admin.calls).toEqual([{ topic: 'orders', ms: T0 }]);
    expect(firstMember).toEqual([
      { topic: 'orders', partition: 0, offset: '10' },
      { topic: 'orders', partition: 2, offset: '7' },
    ]);
    expect(afterRebalance).toEqual([]);
    expect([...seeks]).toEqual([['orders-1', '200']]);
  });

  it('leaves partitions the group has committed on where the group is (a restart does not go back)', async () => {
    const seeks = await planTimestampSeeks(fakeAdmin({ 1: '280' }), 'g', ['orders'], T0);
    expect([...seeks]).toEqual([
      ['orders-0', '10'],
      ['orders-2', '7'],
    ]);
  });

  it('says what failed when the broker cannot look up by time', async () => {
    await expect(offsetsAtTime(fakeAdmin(), 'orders', 1)).rejects.toThrow(
      /could not look up the offsets of orders at 1970-01-01T00:00:00.001Z: .*no answer for 1.*mock cluster/,
    );
  });
});

/**
 * A topic of 2 partitions holding [0, 40) and [5, 9); `byTime` answers a time lookup as kafkajs does
 * (a broker's "none" becomes the high watermark).
 */
function endAnsweringAdmin(byTime: (ms: number) => string[]) {
  const asked: number[] = [];
  return {
    asked,
    fetchTopicOffsetsByTimestamp: async (_topic: string, ms?: number) => {
      asked.push(ms ?? -1);
      return byTime(ms ?? -1).map((offset, partition) => ({ partition, offset }));
    },
    fetchTopicOffsets: async (_topic: string) =>
      [
        ['0', '40'],
        ['5', '9'],
      ].map(([low, high], partition) => ({ partition, low, high, offset: high })),
    fetchOffsets: async () => [],
  };
}

describe('a broker that cannot look offsets up by time', () => {
  it('is refused, not read as "nothing at or after that time"', async () => {
    // Prepare: every time answers the end, as librdkafka's mock cluster does
    const admin = endAnsweringAdmin(() => ['40', '9']);

    // Act
    const error = await offsetsAtTime(admin, 'orders', T0).catch((e: unknown) => e);
    const viaBackfill = await planBackfill(admin, 'orders', T0, 'latest').catch((e: unknown) => e);
    const viaRun = await planTimestampSeeks(admin, 'g', ['orders'], T0).catch((e: unknown) => e);

    // Assess: the epoch was asked too, and each caller gets the refusal
    expect(admin.asked).toContain(0);
    expect(error).toBeInstanceOf(TimeLookupUnsupportedError);
    expect((error as Error).message).toMatch(
      /cannot look up the offsets of orders by time: .*2026-11-30T12:00:00\.000Z.*--from earliest.*--starting-position trim-horizon/,
    );
    expect(viaBackfill).toBeInstanceOf(TimeLookupUnsupportedError);
    expect(viaRun).toBeInstanceOf(TimeLookupUnsupportedError);
  });

  it('a time past the end on a broker that can look up reads nothing, as asked', async () => {
    // Prepare: the epoch answers each partition's first record
    const admin = endAnsweringAdmin((ms) => (ms === 0 ? ['0', '5'] : ['40', '9']));

    // Act
    const offsets = await offsetsAtTime(admin, 'orders', T1);

    // Assess
    expect([...offsets]).toEqual([
      [0, 40n],
      [1, 9n],
    ]);
  });

  it('an empty topic needs no second lookup', async () => {
    const admin = {
      ...endAnsweringAdmin(() => ['3']),
      fetchTopicOffsets: async () => [{ partition: 0, low: '3', high: '3', offset: '3' }],
    };
    expect([...(await offsetsAtTime(admin, 'orders', T0))]).toEqual([[0, 3n]]);
    expect(admin.asked).toEqual([T0]);
  });
});

describe('floe backfill --from ISO --to ISO', () => {
  it('reads from the first offset at --from to the first offset at --to, within the watermarks', async () => {
    const ranges = await planBackfill(fakeAdmin(), 'orders', T0, T1);
    expect(ranges).toEqual([
      { topic: 'orders', partition: 0, start: 10n, end: 25n },
      { topic: 'orders', partition: 1, start: 200n, end: 260n },
      { topic: 'orders', partition: 2, start: 7n, end: 7n },
    ]);
  });

  it('takes the watermarks for earliest and latest, and a time for one bound only', async () => {
    expect(await planBackfill(fakeAdmin(), 'orders', 'earliest', T1)).toEqual([
      { topic: 'orders', partition: 0, start: 0n, end: 25n },
      { topic: 'orders', partition: 1, start: 150n, end: 260n },
      { topic: 'orders', partition: 2, start: 7n, end: 7n },
    ]);
    expect(await planBackfill(fakeAdmin(), 'orders', T0, 'latest')).toEqual([
      { topic: 'orders', partition: 0, start: 10n, end: 40n },
      { topic: 'orders', partition: 1, start: 200n, end: 300n },
      { topic: 'orders', partition: 2, start: 7n, end: 7n },
    ]);
  });
});
