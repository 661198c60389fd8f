/**
 * The example app users deploy (infra/example-stack.ts: Debezium change events → the S3 Tables table
 * `sales.orders`, DynamoDB lock), synthesized with bundling; its ingest function run from `cdk.out` under
 * aws-lambda-ric against moto: the table bucket and the namespace its template creates, the lock table
 * its template references, and nothing else but the endpoint.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CreateNamespaceCommand, CreateTableBucketCommand } from '@aws-sdk/client-s3tables';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { S3TablesCatalog } from '../../../functions/core/catalog/s3tables-catalog.js';
import { S3FileIO } from '../../../functions/core/io/s3-file-io.js';
import { createLockTable } from '../../../functions/core/lock/dynamodb-lock.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { buildExampleApp } from '../../../infra/example-stack.js';
import { dynamoClientForTests, s3TablesClientForTests, uniqueSuffix } from '../../support/moto-lakes.js';
import { duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';
import { type RicProcess, startRic } from '../../support/ric-process.js';
import { type SynthesizedStack, synthesizeStack } from '../../support/synthesized-functions.js';
import {
  describeWithMoto,
  motoEndpoint,
  resetMoto,
  s3ClientForTests,
  TEST_CREDENTIALS,
  TEST_REGION,
} from '../moto.js';

const TOPIC = 'shop.public.orders';

/** A sample event as this stack's ESM delivers it: only the records of the topic it subscribes to. */
function event(file: string): unknown {
  const e = JSON.parse(readFileSync(file, 'utf8')) as { records: Record<string, { topic: string }[]> };
  const records = Object.entries(e.records).filter(([, list]) => list[0]?.topic === TOPIC);
  return { ...e, records: Object.fromEntries(records) };
}
const TABLE = { namespace: ['sales'], name: 'orders' };

describeWithMoto('the example app’s ingest function under aws-lambda-ric, on S3 Tables in moto', () => {
  let stack: SynthesizedStack;
  let fn: RicProcess;
  let catalog: S3TablesCatalog;

  beforeAll(async () => {
    await resetMoto();
    // Prepare: the example as `cdk synth -c topic=shop.public.orders` builds it (Debezium's topic name)
    stack = await synthesizeStack((app) => {
      app.node.setContext('topic', TOPIC);
      return buildExampleApp(app).stack;
    });
    // Prepare: what CloudFormation would create, in moto
    const s3tables = s3TablesClientForTests();
    const bucket = await s3tables.send(
      new CreateTableBucketCommand({ name: `floe-example-${uniqueSuffix()}` }),
    );
    await s3tables.send(new CreateNamespaceCommand({ tableBucketARN: bucket.arn, namespace: ['sales'] }));
    const lockTable = `floe-example-lock-${uniqueSuffix()}`;
    await createLockTable(dynamoClientForTests(), lockTable);
    const [bucketId] = stack.idsOfType('AWS::S3Tables::TableBucket');
    const [lockId] = stack.idsOfType('AWS::DynamoDB::Table');
    const resolve = (id: string, attribute?: string): string => {
      if (id === bucketId && attribute === 'TableBucketARN') return bucket.arn!;
      if (id === lockId && attribute === undefined) return lockTable;
      throw new Error(`the test cannot resolve ${id}${attribute ? `.${attribute}` : ''}`);
    };
    const [ingestId] = stack.functionIds['index.handler'] ?? [];
    fn = await startRic(stack.functionSpec(ingestId!, resolve), {
      AWS_ENDPOINT_URL: motoEndpoint(),
      AWS_REGION: TEST_REGION,
      AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    });
    // the test's own reader of the table, on the same moto
    catalog = new S3TablesCatalog({
      tableBucketArn: bucket.arn!,
      client: s3tables,
      io: new S3FileIO({ client: s3ClientForTests() }),
    });
  }, 300_000);

  afterAll(async () => {
    await fn?.stop();
    await stack?.cleanup();
  });

  it('creates the table from the first change events and commits them', async () => {
    // Act
    const result = await fn.invoke(event('events/orders-cdc-1.json'));
    // Assess: the summary as posted, then the rows by DuckDB (no delete files yet on a new table)
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (!result.ok) return;
    const [table] = (result.payload as { tables: Record<string, unknown>[] }).tables;
    expect(table).toMatchObject({ table: 'sales.orders', status: 'committed', deleteFiles: 0 });
    const loaded = await catalog.loadTable(TABLE);
    expect(table!.snapshotId).toBe(String(loaded.metadata['current-snapshot-id']));
    // DuckDB reads no s3:// here (no httpfs): the live files are copied out of moto for it
    const entries = await liveEntries(loaded);
    expect(entries.every((e) => e.data_file.file_path.startsWith('s3://'))).toBe(true);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'floe-example-'));
    try {
      const local = await Promise.all(
        entries.map(async (e, i) => {
          const file = path.join(dir, `${i}.parquet`);
          await writeFile(file, await loaded.io.read(e.data_file.file_path));
          return sqlString(file);
        }),
      );
      const [count] = await duckdbQuery(
        `SELECT count(*)::INTEGER AS n FROM read_parquet([${local.join(', ')}])`,
      );
      const rows = await readScanRows(loaded, await planScan(loaded));
      expect(rows.length).toBeGreaterThan(0);
      expect(Number(count!.n)).toBe(rows.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('applies the next changes with position deletes (the default), and a redelivery changes nothing', async () => {
    // Prepare
    const before = await catalog.loadTable(TABLE);
    // Act
    const result = await fn.invoke(event('events/orders-cdc-2.json'));
    const again = await fn.invoke(event('events/orders-cdc-2.json'));
    // Assess
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (!result.ok || !again.ok) return;
    const [table] = (result.payload as { tables: Record<string, number>[] }).tables;
    expect(table!.deleteFiles).toBeGreaterThan(0);
    expect(table!.positionDeletes).toBeGreaterThan(0);
    expect(table!.equalityDeletes).toBe(0);
    expect((again.payload as { tables: Record<string, unknown>[] }).tables[0]).toMatchObject({
      status: 'nothing-to-commit',
    });
    const after = await catalog.loadTable(TABLE);
    expect(after.metadata.snapshots?.length).toBe((before.metadata.snapshots?.length ?? 0) + 1);
    // the current state: one row per key (floe's reader applies the position deletes)
    const rows = await readScanRows(after, await planScan(after));
    const keys = rows.map((r) => String(r.order_id));
    expect(new Set(keys).size).toBe(keys.length);
  });
});
