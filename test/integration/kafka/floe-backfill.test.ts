/**
 * `floe backfill` of an existing topic against a real Kafka-protocol broker (librdkafka's mock cluster
 * through kcat), as a child process: the whole history lands exactly once in ESM-sized batches; a rerun
 * writes nothing; a backfill killed with SIGKILL continues when rerun and still lands every record once.
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
} from './kafka-kit.js';

const TABLE = 'app.history';

describe.skipIf(!kcatAvailable())('floe backfill against a Kafka broker', () => {
  let broker: MockKafka;

  beforeAll(async () => {
    broker = await startMockKafka(3);
  });
  afterAll(async () => {
    await broker?.stop();
  });

  function backfillArgs(topic: string, warehouse: string, schemaFile: string, batchSize: number) {
    return [
      'backfill',
      '--bootstrap-servers',
      broker.bootstrapServers,
      '--topic',
      topic,
      '--warehouse',
      warehouse,
      '--table',
      TABLE,
      '--schema',
      schemaFile,
      '--from',
      'earliest',
      '--to',
      'latest',
      '--batch-size',
      String(batchSize),
    ];
  }

  it('brings an existing topic into a new table exactly once; a rerun writes nothing', async () => {
    // Prepare
    const topic = `history-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    await produce(kafkaClient(broker.bootstrapServers), topic, 0, 3_000, 500);
    // Act
    const first = spawnFloe(backfillArgs(topic, dir, schemaFile, 250));
    const firstExit = await exitOf(first);
    const second = spawnFloe(backfillArgs(topic, dir, schemaFile, 250));
    const secondExit = await exitOf(second);
    // Assess
    expect(firstExit.code, first.output()).toBe(0);
    expect(first.output()).toMatch(/offsets 0:\[0,750\) 1:\[0,750\) 2:\[0,750\) 3:\[0,750\)/);
    expect(first.output()).toMatch(
      /done: 3000 records read, 3000 rows written, 0 dead letters, 0 replays skipped, (\d+) snapshots/,
    );
    expect(Number(/(\d+) snapshots/.exec(first.output())![1])).toBeGreaterThanOrEqual(12);
    expect(secondExit.code, second.output()).toBe(0);
    expect(second.output()).toMatch(
      /done: 3000 records read, 0 rows written, 0 dead letters, 3000 replays skipped, 0 snapshots/,
    );
    checkExactlyOnce(await readLanded(dir, TABLE), 3_000);
  });

  it('continues after a kill -9 and still lands every record once', async () => {
    // Prepare
    const topic = `resume-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    await produce(kafkaClient(broker.bootstrapServers), topic, 0, 4_000, 200);
    const killed = spawnFloe(backfillArgs(topic, dir, schemaFile, 50));
    await killed.waitFor(/→ app\.history: 50 rows/, 10);
    // Act
    killed.child.kill('SIGKILL');
    expect((await exitOf(killed)).signal).toBe('SIGKILL');
    const partial = await readLanded(dir, TABLE);
    const resumed = spawnFloe(backfillArgs(topic, dir, schemaFile, 50));
    const { code } = await exitOf(resumed);
    // Assess
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(4_000);
    expect(code, resumed.output()).toBe(0);
    const summary = /done: 4000 records read, (\d+) rows written, 0 dead letters, (\d+) replays skipped/.exec(
      resumed.output(),
    );
    expect(summary, resumed.output()).not.toBeNull();
    expect(Number(summary![1])).toBe(4_000 - partial.length);
    expect(Number(summary![2])).toBe(partial.length);
    checkExactlyOnce(await readLanded(dir, TABLE), 4_000);
  });
});
