/**
 * `floe redrive-failed`: the batches an ESM gave up on, from what its on-failure destinations hold —
 * S3 objects (the whole invocation record, event included; here as downloaded files) and a Kafka
 * on-failure topic (one record per failed Kafka record) — ingested once through the table's route;
 * a second redrive adds nothing.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsumedMessage, formEsmEvents } from '../../../functions/core/kafka/esm-batch.js';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createBucket, describeWithMoto, motoEndpoint, s3ClientForTests, uniqueBucketName } from '../moto.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import {
  BINARY_HEADER,
  checkExactlyOnce,
  exitOf,
  kafkaClient,
  makeWarehouse,
  readLanded,
  spawnFloe,
} from './kafka-kit.js';

const TABLE = 'app.redriven';

/** Source records as the ESM would have read them (the shape produce() gives, so checkExactlyOnce applies). */
function sourceMessages(topic: string, count: number): ConsumedMessage[] {
  return Array.from({ length: count }, (_, id) => ({
    topic,
    partition: id % 4,
    offset: String(Math.floor(id / 4)),
    timestamp: 1_764_000_000_000 + id,
    timestampType: 'CREATE_TIME' as const,
    key: id % 7 === 0 ? null : Buffer.from(`key-${id}`),
    value: Buffer.from(JSON.stringify({ id, name: `name-${id}` })),
    headers: [
      { key: 'bin', value: BINARY_HEADER },
      { key: 'seq', value: Buffer.from(String(id)) },
    ],
  }));
}

/** The on-failure record the ESM writes (AWS's documented layout), with the event as its payload. */
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

describe('floe redrive-failed', () => {
  it('re-ingests the S3 on-failure records of a folder exactly once, and a second redrive adds nothing', async () => {
    // Prepare: 200 records the ESM gave up on, in 4 invocations
    const { dir, schemaFile } = await makeWarehouse();
    const failures = join(dir, '..', 'failures', '2026', '11', '30');
    await mkdir(failures, { recursive: true });
    const events = formEsmEvents('b-1:9092', sourceMessages('orders', 200), { batchSize: 50 });
    for (const [i, formed] of events.entries()) {
      await writeFile(
        join(failures, `batch-${i}.json`),
        JSON.stringify(failureRecord(formed.event, formed.records)),
      );
    }
    const args = [
      'redrive-failed',
      '--from-file',
      join(dir, '..', 'failures'),
      '--warehouse',
      dir,
      '--table',
      TABLE,
      '--schema',
      schemaFile,
    ];
    // Act
    const first = spawnFloe(args);
    const firstExit = await exitOf(first);
    const second = spawnFloe(args);
    const secondExit = await exitOf(second);
    // Assess
    expect(firstExit.code, first.output()).toBe(0);
    expect(first.output()).toMatch(/4 failed batch\(es\): 200 records, 200 rows written, 0 replays skipped/);
    expect(first.output()).toMatch(/batch-0\.json \(RetryAttemptsExhausted\): 50 records/);
    expect(secondExit.code, second.output()).toBe(0);
    expect(second.output()).toMatch(/200 records, 0 rows written, 200 replays skipped/);
    checkExactlyOnce(await readLanded(dir, TABLE), 200);
  });

  it('reports a record that carries no event (an SNS/SQS-style record) and exits 1', async () => {
    const { dir, schemaFile } = await makeWarehouse();
    const file = join(dir, '..', 'metadata-only.json');
    const { payload: _, ...metadataOnly } = failureRecord({}, 1);
    await writeFile(file, JSON.stringify(metadataOnly));
    const floe = spawnFloe([
      'redrive-failed',
      '--from-file',
      file,
      '--warehouse',
      dir,
      '--table',
      TABLE,
      '--schema',
      schemaFile,
    ]);
    const { code } = await exitOf(floe);
    expect(code, floe.output()).toBe(1);
    expect(floe.output()).toMatch(/carries no invocation payload/);
    expect(floe.output()).toMatch(/1 could not be redriven/);
  });

  describeWithMoto('from an S3 on-failure destination', () => {
    it('lists the prefix and re-ingests every record under it', async () => {
      // Prepare: the objects the ESM wrote under the destination prefix
      const { dir, schemaFile } = await makeWarehouse();
      const s3 = s3ClientForTests();
      const bucket = await createBucket(uniqueBucketName('floe-failures'));
      const events = formEsmEvents('b-1:9092', sourceMessages('orders', 90), { batchSize: 30 });
      for (const [i, formed] of events.entries()) {
        await s3.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: `esm/2026/11/30/failed-${i}.json`,
            Body: JSON.stringify(failureRecord(formed.event, formed.records)),
          }),
        );
      }
      // Act
      const floe = spawnFloe(
        [
          'redrive-failed',
          '--from',
          `s3://${bucket}/esm/`,
          '--warehouse',
          dir,
          '--table',
          TABLE,
          '--schema',
          schemaFile,
        ],
        { AWS_ENDPOINT_URL: motoEndpoint() },
      );
      const { code } = await exitOf(floe);
      // Assess
      expect(code, floe.output()).toBe(0);
      expect(floe.output()).toMatch(/3 failed batch\(es\): 90 records, 90 rows written/);
      checkExactlyOnce(await readLanded(dir, TABLE), 90);
    });
  });

  describe.skipIf(!kcatAvailable())('from a Kafka on-failure topic', () => {
    let broker: MockKafka;
    beforeAll(async () => {
      broker = await startMockKafka(3);
    });
    afterAll(async () => {
      await broker?.stop();
    });

    it('re-ingests one failed record per message exactly once', async () => {
      // Prepare: the on-failure topic holds one record per failed source record, event included
      const { dir, schemaFile } = await makeWarehouse();
      const topic = `dlt-${randomUUID()}`;
      const producer = kafkaClient(broker.bootstrapServers).producer({ allowAutoTopicCreation: true });
      await producer.connect();
      const messages = sourceMessages('orders', 120).map((m) => {
        const [formed] = formEsmEvents('b-1:9092', [m], { batchSize: 1 });
        return { value: JSON.stringify(failureRecord(formed.event, 1)), partition: m.partition };
      });
      await producer.send({ topic, acks: -1, messages });
      await producer.disconnect();
      const args = [
        'redrive-failed',
        '--from-topic',
        topic,
        '--bootstrap-servers',
        broker.bootstrapServers,
        '--warehouse',
        dir,
        '--table',
        TABLE,
        '--schema',
        schemaFile,
      ];
      // Act
      const first = spawnFloe(args);
      const firstExit = await exitOf(first);
      const second = spawnFloe(args);
      const secondExit = await exitOf(second);
      // Assess
      expect(firstExit.code, first.output()).toBe(0);
      expect(first.output()).toMatch(/120 failed batch\(es\): 120 records, 120 rows written/);
      expect(secondExit.code, second.output()).toBe(0);
      expect(second.output()).toMatch(/120 records, 0 rows written, 120 replays skipped/);
      checkExactlyOnce(await readLanded(dir, TABLE), 120);
    });
  });
});
