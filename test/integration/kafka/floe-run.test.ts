/**
 * `floe run` against a real Kafka-protocol broker (librdkafka's mock cluster through kcat), as a child
 * process: everything ingested exactly once with group offsets at the high watermarks; a kill -9
 * mid-stream followed by a restart loses and duplicates nothing; SIGTERM stops cleanly, with the group
 * offsets exactly where the table's are (the in-flight batch committed to both, or to neither).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import {
  checkExactlyOnce,
  exitOf,
  kafkaClient,
  makeWarehouse,
  produce,
  readLanded,
  spawnFloe,
  tableOffsets,
} from './kafka-kit.js';

const TABLE = 'app.events';

async function groupOffsets(bootstrap: string, groupId: string, topic: string): Promise<Map<number, bigint>> {
  const admin = kafkaClient(bootstrap).admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return new Map(t.partitions.map((p) => [p.partition, BigInt(p.offset)]));
  } finally {
    await admin.disconnect();
  }
}

async function highWatermarks(bootstrap: string, topic: string): Promise<Map<number, bigint>> {
  const admin = kafkaClient(bootstrap).admin();
  await admin.connect();
  try {
    return new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]));
  } finally {
    await admin.disconnect();
  }
}

describe.skipIf(!kcatAvailable())('floe run against a Kafka broker', () => {
  let broker: MockKafka;

  beforeAll(async () => {
    broker = await startMockKafka(3);
  });
  afterAll(async () => {
    await broker?.stop();
  });

  function runArgs(
    topic: string,
    warehouse: string,
    schemaFile: string,
    group: string,
    extra: string[] = [],
  ) {
    return [
      'run',
      '--bootstrap-servers',
      broker.bootstrapServers,
      '--topics',
      topic,
      '--group',
      group,
      '--warehouse',
      warehouse,
      '--table',
      TABLE,
      '--schema',
      schemaFile,
      '--starting-position',
      'trim-horizon',
      '--batch-size',
      '100',
      '--batching-window-ms',
      '100',
      // A killed member holds its partitions until its session times out: keep the restart quick.
      '--session-timeout-ms',
      '6000',
      ...extra,
    ];
  }

  it('ingests keys, binary headers and compressed batches of 4 partitions exactly once, then exits when idle', async () => {
    // Prepare
    const topic = `run-${randomUUID()}`;
    const group = `g-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    await produce(kafkaClient(broker.bootstrapServers), topic, 0, 1_200);
    // Act
    const floe = spawnFloe(runArgs(topic, dir, schemaFile, group, ['--exit-when-idle', '1500']));
    const { code } = await exitOf(floe);
    // Assess
    expect(code, floe.output()).toBe(0);
    expect(floe.output()).toMatch(/stopped \(idle: everything available is committed\); 1200 records/);
    checkExactlyOnce(await readLanded(dir, TABLE), 1_200);
    const high = await highWatermarks(broker.bootstrapServers, topic);
    expect(await groupOffsets(broker.bootstrapServers, group, topic)).toEqual(high);
    expect([...high.values()]).toEqual([300n, 300n, 300n, 300n]);
  });

  it('leaves every record exactly once after a kill -9 mid-stream and a restart', async () => {
    // Prepare: records keep arriving while floe runs
    const topic = `kill-${randomUUID()}`;
    const group = `g-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    await produce(kafka, topic, 0, 800);
    const first = spawnFloe(runArgs(topic, dir, schemaFile, group));
    await first.waitFor(/→ app\.events: \d+ rows/, 3);
    const producing = produce(kafka, topic, 800, 1_200, 50);
    await first.waitFor(/→ app\.events: \d+ rows/, 40);
    // Act
    first.child.kill('SIGKILL');
    expect((await exitOf(first)).signal).toBe('SIGKILL');
    const partial = await readLanded(dir, TABLE);
    await producing;
    const second = spawnFloe(runArgs(topic, dir, schemaFile, group, ['--exit-when-idle', '1500']));
    const { code } = await exitOf(second);
    // Assess
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(2_000);
    expect(code, second.output()).toBe(0);
    checkExactlyOnce(await readLanded(dir, TABLE), 2_000);
    expect(await groupOffsets(broker.bootstrapServers, group, topic)).toEqual(
      await highWatermarks(broker.bootstrapServers, topic),
    );
  });

  it('stops with exit 1 and commits nothing to the group when a batch can never commit', async () => {
    // Prepare: no --schema, so the missing table cannot be created (a ValidationError: retrying cannot help)
    const topic = `bad-${randomUUID()}`;
    const group = `g-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    await produce(kafkaClient(broker.bootstrapServers), topic, 0, 40);
    const args = runArgs(topic, dir, schemaFile, group, ['--exit-when-idle', '1500']);
    args.splice(args.indexOf('--schema'), 2);
    // Act
    const floe = spawnFloe(args);
    const { code } = await exitOf(floe);
    // Assess
    expect(code, floe.output()).toBe(1);
    expect(floe.output()).toMatch(/does not exist and no schema was given/);
    const committed = await groupOffsets(broker.bootstrapServers, group, topic);
    expect([...committed.values()]).toEqual([-1n, -1n, -1n, -1n]);
  });

  // Holds because committed offsets are ranges: with one high-water offset per partition,
  // the live tail's commits made the table skip the backfill's older offsets as replays (938 of 3,000
  // rows landed).
  it('a backfill racing floe run on the same table lands every record exactly once', async () => {
    // Prepare: history, then a live tail started at latest
    const topic = `race-${randomUUID()}`;
    const group = `g-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    await produce(kafka, topic, 0, 2_000);
    const tail = spawnFloe(
      runArgs(topic, dir, schemaFile, group, ['--exit-when-idle', '3000']).map((a) =>
        a === 'trim-horizon' ? 'latest' : a,
      ),
    );
    await tail.waitFor(/joined group/);
    // Act: the tail commits newer offsets first, then the backfill reads the history under it
    const producing = produce(kafka, topic, 2_000, 1_000, 50);
    await tail.waitFor(/→ app\.events: \d+ rows/, 4);
    const backfill = spawnFloe([
      'backfill',
      '--bootstrap-servers',
      broker.bootstrapServers,
      '--topic',
      topic,
      '--warehouse',
      dir,
      '--table',
      TABLE,
      '--schema',
      schemaFile,
      '--batch-size',
      '200',
    ]);
    await producing;
    const [tailExit, backfillExit] = await Promise.all([exitOf(tail), exitOf(backfill)]);
    // Assess
    expect(tailExit.code, tail.output()).toBe(0);
    expect(backfillExit.code, backfill.output()).toBe(0);
    checkExactlyOnce(await readLanded(dir, TABLE), 3_000);
  });

  it('stops cleanly on SIGTERM: exit 0, the group offsets exactly where the table committed', async () => {
    // Prepare
    const topic = `term-${randomUUID()}`;
    const group = `g-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    await produce(kafkaClient(broker.bootstrapServers), topic, 0, 4_000);
    const floe = spawnFloe(runArgs(topic, dir, schemaFile, group, ['--batch-size', '20']));
    await floe.waitFor(/→ app\.events: \d+ rows/, 4);
    // Act
    floe.child.kill('SIGTERM');
    const { code } = await exitOf(floe);
    // Assess
    expect(code, floe.output()).toBe(0);
    expect(floe.output()).toMatch(/SIGTERM: stopping after the batch in flight/);
    expect(floe.output()).toMatch(/stopped \(signal\)/);
    const table = await tableOffsets(dir, TABLE, topic);
    const committed = await groupOffsets(broker.bootstrapServers, group, topic);
    for (const [partition, next] of committed) {
      // Nothing committed to the group that the table lacks, and nothing the table holds uncommitted.
      expect(next, `partition ${partition}`).toBe(next < 0n ? -1n : (table.get(partition) ?? -1n) + 1n);
      if (next < 0n) expect(table.has(partition)).toBe(false);
    }
    const rows = await readLanded(dir, TABLE);
    expect(rows.length).toBe([...table.values()].reduce((n, last) => n + Number(last) + 1, 0));
    expect(rows.length).toBeLessThan(4_000);
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
  });
});
