/**
 * `floe backfill` and `floe redrive-failed` when the table holds offsets whose records are now other
 * ones (a cluster replaced; a failure record of a recreated topic): each exits ≠ 0 naming the topic and
 * partitions, and the table is as it was — nothing skipped as a replay, nothing appended.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { type ConsumedMessage, formEsmEvents } from '../../../functions/core/kafka/esm-batch.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { exitOf, kafkaClient, makeWarehouse, produce, readLanded, spawnFloe } from './kafka-kit.js';

async function headSnapshot(warehouse: string, name: string): Promise<bigint | undefined> {
  const loaded = await new EmbeddedCatalog({ warehouse }).loadTable({ namespace: ['app'], name });
  return currentSnapshot(loaded.metadata)?.['snapshot-id'];
}

const CONFLICT = /records inside the table's committed offsets are not the records it committed/;

describe.skipIf(!kcatAvailable())('floe backfill from a replaced cluster', () => {
  const brokers: MockKafka[] = [];
  afterAll(async () => {
    for (const b of brokers) await b.stop();
  });

  const backfillArgs = (bootstrap: string, topic: string, dir: string, schemaFile: string) => [
    'backfill',
    '--bootstrap-servers',
    bootstrap,
    '--topic',
    topic,
    '--warehouse',
    dir,
    '--table',
    'app.history',
    '--schema',
    schemaFile,
    '--from',
    'earliest',
    '--to',
    'latest',
    '--batch-size',
    '100',
  ];

  it('exits ≠ 0 naming the topic and partitions, and leaves the table unchanged', async () => {
    // Prepare: 1,200 records backfilled from the old cluster; a new one holds 300 others at offsets 0-74
    const topic = `history-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const old = await startMockKafka(1);
    brokers.push(old);
    await produce(kafkaClient(old.bootstrapServers), topic, 0, 1_200);
    const first = spawnFloe(backfillArgs(old.bootstrapServers, topic, dir, schemaFile));
    expect((await exitOf(first)).code, first.output()).toBe(0);
    await old.stop();
    const before = await headSnapshot(dir, 'history');
    const fresh = await startMockKafka(1);
    brokers.push(fresh);
    await produce(kafkaClient(fresh.bootstrapServers), topic, 5_000, 300);

    // Act
    const refused = spawnFloe(backfillArgs(fresh.bootstrapServers, topic, dir, schemaFile));
    const refusedExit = await exitOf(refused);

    // Assess
    expect(refusedExit.code, refused.output()).not.toBe(0);
    expect(refused.output()).toMatch(CONFLICT);
    expect(refused.output()).toMatch(new RegExp(`${topic}/[0-3] offsets`));
    expect(refused.output()).toMatch(new RegExp(`--topic ${topic} --partitions \\d`));
    expect(await headSnapshot(dir, 'history')).toBe(before);
    expect((await readLanded(dir, 'app.history')).length).toBe(1_200);
  }, 300_000);
});

/** Source records as the ESM read them: ids `first..first+count-1` at offsets 0.. of 4 partitions. */
function sourceMessages(topic: string, first: number, count: number): ConsumedMessage[] {
  return Array.from({ length: count }, (_, i) => ({
    topic,
    partition: i % 4,
    offset: String(Math.floor(i / 4)),
    timestamp: 1_764_000_000_000 + first + i,
    timestampType: 'CREATE_TIME' as const,
    key: Buffer.from(`key-${first + i}`),
    value: Buffer.from(JSON.stringify({ id: first + i, name: `name-${first + i}` })),
    headers: [],
  }));
}

/** The ESM's on-failure record (AWS's layout) of one event. */
function failureRecord(event: unknown, batchSize: number) {
  return {
    requestContext: {
      requestId: randomUUID(),
      functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:floe-ingest',
      condition: 'RetryAttemptsExhausted',
      approximateInvokeCount: 3,
    },
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    version: '1.0',
    timestamp: '2026-11-30T12:00:00.000Z',
    KafkaBatchInfo: { batchSize, bootstrapServers: 'b-1:9092', payloadSize: 1000 },
    payload: event,
  };
}

async function writeFailures(folder: string, messages: ConsumedMessage[]): Promise<void> {
  await mkdir(folder, { recursive: true });
  const events = formEsmEvents('b-1:9092', messages, { batchSize: 50 });
  for (const [i, formed] of events.entries()) {
    await writeFile(
      join(folder, `batch-${i}.json`),
      JSON.stringify(failureRecord(formed.event, formed.records)),
    );
  }
}

describe('floe redrive-failed of a recreated topic', () => {
  it('exits ≠ 0 naming the topic and partitions, and leaves the table unchanged', async () => {
    // Prepare: 200 records redriven; then failure records of other records at the same offsets
    const { dir, schemaFile } = await makeWarehouse();
    const firstFolder = join(dir, '..', 'failures-1');
    const secondFolder = join(dir, '..', 'failures-2');
    await writeFailures(firstFolder, sourceMessages('orders', 0, 200));
    await writeFailures(secondFolder, sourceMessages('orders', 9_000, 40));
    const args = (folder: string) => [
      'redrive-failed',
      '--from-file',
      folder,
      '--warehouse',
      dir,
      '--table',
      'app.redriven',
      '--schema',
      schemaFile,
    ];
    const first = spawnFloe(args(firstFolder));
    expect((await exitOf(first)).code, first.output()).toBe(0);
    const before = await headSnapshot(dir, 'redriven');

    // Act
    const refused = spawnFloe(args(secondFolder));
    const refusedExit = await exitOf(refused);

    // Assess
    expect(refusedExit.code, refused.output()).not.toBe(0);
    expect(refused.output()).toMatch(CONFLICT);
    expect(refused.output()).toMatch(/orders\/[0-3] offsets/);
    expect(await headSnapshot(dir, 'redriven')).toBe(before);
    expect((await readLanded(dir, 'app.redriven')).length).toBe(200);
  });
});
