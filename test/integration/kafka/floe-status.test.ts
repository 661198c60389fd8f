/**
 * `floe status` against a real Kafka-protocol broker (librdkafka's mock cluster): the lag of a table fed
 * by `floe run` while a producer still writes shrinks to 0 once the producer stops; a batch that never
 * commits between two that do is a gap with its age (stale at --gap-age 0s: exit 3); and the live
 * snapshot of that table says how fresh it is.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { routeFromOptions } from '../../../functions/cli/commands/ingest.js';
import { main } from '../../../functions/cli/main.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { formEsmEvents } from '../../../functions/core/kafka/esm-batch.js';
import { createKafka, type KafkaConnection } from '../../../functions/core/kafka/kafka-client.js';
import { collectRanges } from '../../../functions/core/kafka/read-range.js';
import {
  LIVE_HOT_RECORDS_KEY,
  LIVE_NEWEST_RECORD_KEY,
  LIVE_READ_UP_TO_KEY,
} from '../../../functions/core/live/freshness.js';
import { defaultCacheRoot, writeLiveVersion } from '../../../functions/core/live/live-snapshot.js';
import { readHotset } from '../../../functions/core/live/read-hotset.js';
import { readTableStatus } from '../../../functions/core/status/table-status.js';
import { EO_TOPIC, eoRoute } from '../../support/esm-batches.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { tempWarehouse } from '../../support/tables.js';
import { exitOf, kafkaClient, makeWarehouse, produce, spawnFloe } from './kafka-kit.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const TABLE = { namespace: ['app'], name: 'events' };

describe.skipIf(!kcatAvailable())('floe status against a Kafka broker', () => {
  let broker: MockKafka;
  let kafka: KafkaConnection;

  beforeAll(async () => {
    broker = await startMockKafka(1);
    kafka = await createKafka({ brokers: [broker.bootstrapServers], clientId: 'floe-status-test' });
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it('shows the lag of a table fed by floe run shrinking to 0 once the producer stops', async () => {
    // Prepare: 200 records; the table created with the first 10 of each partition, through the route
    // floe run builds from the same flags, so status has a lag to show before floe run starts
    const topic = `status-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const producer = kafkaClient(broker.bootstrapServers);
    await produce(producer, topic, 0, 200);
    const catalog = new EmbeddedCatalog({ warehouse: dir });
    const route = await routeFromOptions({ table: 'app.events', schema: schemaFile, topics: topic }, []);
    const head = [0, 1, 2, 3].map((partition) => ({ topic, partition, from: 0n, toExclusive: 10n }));
    for (const formed of formEsmEvents(broker.bootstrapServers, await collectRanges(kafka, head), {
      batchSize: 100,
    }))
      await ingestEvent({ catalog, routes: [route] }, formed.event);
    const lagNow = async () =>
      (await readTableStatus({ catalog, table: TABLE, kafka, gapAgeMs: 60_000 })).totalLag;
    const before = await lagNow();
    const run = spawnFloe([
      'run',
      '--bootstrap-servers',
      broker.bootstrapServers,
      '--topics',
      topic,
      '--group',
      `g-${randomUUID()}`,
      '--warehouse',
      dir,
      '--table',
      'app.events',
      '--schema',
      schemaFile,
      '--starting-position',
      'trim-horizon',
      '--batch-size',
      '40',
      '--batching-window-ms',
      '50',
    ]);
    // Act: the producer writes while floe run ingests; then status is polled until run catches up
    const producing = produce(producer, topic, 200, 100, 10);
    const during: bigint[] = [];
    while (!(await Promise.race([producing.then(() => true), pause(300).then(() => false)]))) {
      during.push((await lagNow())!);
    }
    const after: bigint[] = [];
    // Bounded so a run that never catches up fails with the lags seen rather than at the test's timeout.
    for (let polls = 0; polls < 400; polls++) {
      const lag = (await lagNow())!;
      after.push(lag);
      if (lag === 0n || run.child.exitCode !== null) break;
      await pause(300);
    }
    run.child.kill('SIGTERM');
    const { code } = await exitOf(run);
    const final = await statusInProcess([
      '--warehouse',
      dir,
      '--table',
      'app.events',
      '--bootstrap-servers',
      broker.bootstrapServers,
      '--json',
    ]);
    // Assess: all but the 40 committed records before; never growing once the producer stopped; 0 at the end
    expect(before).toBe(200n - 40n);
    expect(code, run.output()).toBe(0);
    for (const lag of during) expect(lag).toBeGreaterThanOrEqual(0n);
    for (let i = 1; i < after.length; i++)
      expect(after[i], after.join(',')).toBeLessThanOrEqual(after[i - 1]);
    expect(after[after.length - 1], after.join(',')).toBe(0n);
    expect(final.code, final.stdout).toBe(0);
    const json = JSON.parse(final.stdout) as Record<string, unknown>;
    expect(json).toMatchObject({
      version: 1,
      table: 'app.events',
      kafka: true,
      totalLag: 0,
      staleGaps: 0,
      gaps: [],
    });
    const partitions = json.partitions as Record<string, unknown>[];
    expect(partitions.map((p) => [p.partition, p.committed, p.highWatermark, p.lag])).toEqual([
      [0, [[0, 74]], 75, 0],
      [1, [[0, 74]], 75, 0],
      [2, [[0, 74]], 75, 0],
      [3, [[0, 74]], 75, 0],
    ]);
  });

  it('reports the hole a withheld batch leaves as a gap with its age (stale at --gap-age 0s: exit 3), and the live snapshot says how fresh it is', async () => {
    // Prepare: 30 records in each of 4 partitions of the ESM batches' topic; partition 0's offsets
    // 0-9 and 20-29 commit through the ingest path as ESM events of the broker's own records, 10-19 never do
    const wh = await tempWarehouse();
    try {
      const producedFrom = Date.now();
      await produceEoRecords(broker.bootstrapServers);
      const route = eoRoute(TABLE);
      for (const first of [0n, 20n]) {
        const read = await collectRanges(kafka, [
          { topic: EO_TOPIC, partition: 0, from: first, toExclusive: first + 10n },
        ]);
        for (const formed of formEsmEvents(broker.bootstrapServers, read, { batchSize: 100 }))
          await ingestEvent({ catalog: wh.catalog, routes: [route] }, formed.event);
      }
      const flags = [
        '--warehouse',
        wh.dir,
        '--table',
        'app.events',
        '--bootstrap-servers',
        broker.bootstrapServers,
      ];
      // Act: the command in this process (a child per call costs seconds of start-up)
      const stale = await statusInProcess([...flags, '--gap-age', '0s', '--json']);
      const human = await statusInProcess(flags);
      const table = await wh.catalog.loadTable(TABLE);
      const hotset = await readHotset({ table, route, kafka });
      const live = await writeLiveVersion(table, hotset, defaultCacheRoot(table));
      // Assess: the gap, its age, and the lag it adds to the tail of the partitions never committed
      expect(stale.code, stale.stdout).toBe(3);
      const json = JSON.parse(stale.stdout) as Record<string, unknown>;
      const openSince = table.metadata.snapshots.at(-1)!['timestamp-ms'];
      expect(json).toMatchObject({ totalLag: 10 + 3 * 30, staleGaps: 1 });
      expect(json.gaps).toEqual([
        {
          topic: EO_TOPIC,
          partition: 0,
          first: 10,
          last: 19,
          size: 10,
          openSinceMs: openSince,
          ageMs: (json.nowMs as number) - openSince,
          atLeast: false,
          records: 10,
          stale: true,
          expired: false,
        },
      ]);
      const lags = (json.partitions as Record<string, unknown>[]).map((p) => [
        p.partition,
        p.lag,
        p.logStart,
        p.highWatermark,
      ]);
      expect(lags).toEqual([
        [0, 10, 0, 30],
        [1, 30, 0, 30],
        [2, 30, 0, 30],
        [3, 30, 0, 30],
      ]);
      expect(human.code, human.stdout).toBe(0);
      expect(human.stdout).toMatch(/gaps: 1, 0 stale \(open ≥ 15m\)/);
      expect(human.stdout).toMatch(/payments \| 0\s+\| 10-19\s+\| 10 /);
      // the live snapshot: the 100 records the table lacks, read up to the high watermarks
      const summary: Record<string, string> = live.snapshot?.summary ?? {};
      expect(summary[LIVE_HOT_RECORDS_KEY]).toBe('100');
      expect(JSON.parse(summary[LIVE_READ_UP_TO_KEY])).toEqual({
        payments: { '0': '30', '1': '30', '2': '30', '3': '30' },
      });
      const newest = Number(summary[LIVE_NEWEST_RECORD_KEY]);
      expect(newest).toBeGreaterThanOrEqual(producedFrom);
      expect(newest).toBeLessThanOrEqual(Date.now());
    } finally {
      await wh.cleanup();
    }
  });
});

/** `floe status <args>` run by the CLI's main in this process: its exit code and what it printed. */
async function statusInProcess(args: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  });
  try {
    const code = await main(['status', ...args]);
    return { code, stdout };
  } finally {
    spy.mockRestore();
  }
}

/** 30 records in each of partitions 0-3 of the ESM batches' topic, shaped for its table (EO_SCHEMA). */
async function produceEoRecords(bootstrap: string): Promise<void> {
  const producer = kafkaClient(bootstrap).producer({ allowAutoTopicCreation: true });
  await producer.connect();
  try {
    for (let partition = 0; partition < 4; partition++) {
      await producer.send({
        topic: EO_TOPIC,
        acks: -1,
        messages: Array.from({ length: 30 }, (_, offset) => ({
          partition,
          value: JSON.stringify({
            id: partition * 1_000_000 + offset,
            partition,
            note: `p${partition}-o${offset}`,
            event_ts: new Date(Date.UTC(2026, 10, 1) + offset * 1000).toISOString(),
          }),
        })),
      });
    }
  } finally {
    await producer.disconnect();
  }
}
