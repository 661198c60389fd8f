/**
 * The ingest function as Lambda runs it: the bundle `cdk synth` wrote, started by AWS's runtime interface
 * client (aws-lambda-ric) against a loopback Runtime API, with the environment the template gives it
 * (REST catalog, DynamoDB lock in moto). What it posted to /response or /error is what Lambda would have
 * seen; the tables are read back by DuckDB over the live data files.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { parseIdentifier } from '../../../functions/core/catalog/catalog.js';
import { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';
import { makeOrderMessages, makeOrdersEvent } from '../../bench/orders-batch.js';
import type { InvokeResult } from '../../support/lambda-runtime-api.js';
import { duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';
import type { RicProcess } from '../../support/ric-process.js';
import { describeWithMoto, resetMoto } from '../moto.js';
import { type DeployedPipeline, DOCS_TABLE, deployPipeline, ORDERS_TABLE } from './deployed-pipeline.js';

const event = (file: string): Record<string, unknown> => JSON.parse(readFileSync(file, 'utf8'));

/** What a successful invocation returned (the compact ingest summary). */
interface Summary {
  batchId: string;
  records: number;
  tables: {
    table: string;
    status: string;
    rowsWritten: number;
    deadLettered: number;
    skippedAsReplayed: number;
    snapshotId: string | null;
  }[];
}

function payloadOf(result: InvokeResult): Summary {
  if (!result.ok) throw new Error(`the function posted an error: ${JSON.stringify(result.error)}`);
  return result.payload as Summary;
}

/** The same records on self-managed Kafka: its own event source, its brokers instead of a cluster ARN. */
function selfManaged(msk: Record<string, unknown>, offsetShift: number): Record<string, unknown> {
  const records = msk.records as Record<string, { offset: number }[]>;
  return {
    eventSource: 'SelfManagedKafka',
    bootstrapServers: 'broker-1.example.internal:9092,broker-2.example.internal:9092',
    records: Object.fromEntries(
      Object.entries(records).map(([k, list]) => [
        k,
        list.map((r) => ({ ...r, offset: r.offset + offsetShift })),
      ]),
    ),
  };
}

describeWithMoto('the bundled ingest function under aws-lambda-ric', () => {
  let pipeline: DeployedPipeline;
  let fn: RicProcess;
  let reader: RestCatalog;

  const load = (name: string): Promise<LoadedTable> => reader.loadTable(parseIdentifier(name));
  /** Rows in the table's live data files, counted by DuckDB. */
  const duckdbCount = async (name: string): Promise<number> => {
    const files = (await liveEntries(await load(name))).map((e) => sqlString(e.data_file.file_path));
    if (files.length === 0) return 0;
    const [row] = await duckdbQuery(`SELECT count(*)::INTEGER AS n FROM read_parquet([${files.join(', ')}])`);
    return Number(row!.n);
  };

  beforeAll(async () => {
    await resetMoto();
    pipeline = await deployPipeline();
    reader = new RestCatalog({ uri: pipeline.catalog.uri });
    fn = await pipeline.start(pipeline.functionId('handler'));
  }, 300_000);

  afterAll(async () => {
    await pipeline?.cleanup();
  });

  it('commits an MSK batch and posts a JSON summary with the snapshot id as a decimal string', async () => {
    // Act
    const result = await fn.invoke(event('events/orders-batch-1.json'));
    // Assess
    const summary = payloadOf(result);
    expect(summary.tables).toHaveLength(1);
    const [table] = summary.tables;
    expect(table).toMatchObject({ table: ORDERS_TABLE, status: 'committed', rowsWritten: 120 });
    const current = (await load(ORDERS_TABLE)).metadata['current-snapshot-id'];
    expect(table!.snapshotId).toBe(String(current));
    expect(await duckdbCount(ORDERS_TABLE)).toBe(120);
  });

  it('skips a redelivered batch: the second invoke commits nothing and posts success', async () => {
    // Act
    const again = payloadOf(await fn.invoke(event('events/orders-batch-1.json')));
    // Assess
    expect(again.tables[0]).toMatchObject({
      status: 'nothing-to-commit',
      rowsWritten: 0,
      skippedAsReplayed: 120,
      snapshotId: null,
    });
    expect(await duckdbCount(ORDERS_TABLE)).toBe(120);
  });

  it("dead-letters AWS's own sample record (its value is not JSON) and the batch succeeds", async () => {
    // Act
    const summary = payloadOf(await fn.invoke(event('test/fixtures/aws-docs-msk-event.json')));
    // Assess
    expect(summary.tables[0]).toMatchObject({ table: DOCS_TABLE, rowsWritten: 0, deadLettered: 1 });
    expect(await duckdbCount(`${DOCS_TABLE}__dlq`)).toBe(1);
  });

  it('posts a retryable error while the catalog is down, and commits the redelivered batch once when it is back', async () => {
    // Prepare
    const batch = event('events/orders-batch-2.json');
    pipeline.proxy.down();
    // Act
    const failed = await fn.invoke(batch);
    pipeline.proxy.up();
    const redelivered = await fn.invoke(batch);
    const replayed = await fn.invoke(batch);
    // Assess: the error as the runtime client posted it, its type the class name the alarms and Retry see
    expect(failed.ok).toBe(false);
    if (failed.ok) return;
    expect(failed.error.errorType).toBe('RestTransportError');
    expect(failed.error.errorMessage).toMatch(/.+/);
    // Powertools' injectLambdaContext: the failure's log line names the invocation it belongs to
    const line = fn
      .output()
      .split('\n')
      .find((l) => l.includes('"batch failed'));
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      level: 'ERROR',
      function_request_id: failed.requestId,
      error: { name: 'RestTransportError' },
    });
    expect(payloadOf(redelivered).tables[0]).toMatchObject({ rowsWritten: 118, deadLettered: 2 });
    expect(payloadOf(replayed).tables[0]).toMatchObject({ rowsWritten: 0, skippedAsReplayed: 120 });
    expect(await duckdbCount(ORDERS_TABLE)).toBe(238);
  });

  it('commits a self-managed Kafka batch', async () => {
    // Act: the same records at offsets no batch before used (else they would be replays)
    const summary = payloadOf(await fn.invoke(selfManaged(event('events/orders-batch-1.json'), 1_000)));
    // Assess
    expect(summary.tables[0]).toMatchObject({ status: 'committed', rowsWritten: 120 });
    expect(await duckdbCount(ORDERS_TABLE)).toBe(358);
  });

  it('posts an init error when the handler the configuration names is not exported', async () => {
    // Prepare
    const broken = await pipeline.start(pipeline.functionId('handler'), 'index.noSuchHandler');
    // Act
    const result = await broken.invoke(event('events/orders-batch-1.json'));
    // Assess: posted to /runtime/init/error, never to an invocation
    expect(broken.runtime.initError?.errorType).toBe('Runtime.HandlerNotFound');
    expect(result).toMatchObject({ ok: false, error: { errorType: 'Runtime.HandlerNotFound' } });
  });

  it('commits a 6 MB batch of 10,000 records', async () => {
    // Prepare
    const big = makeOrdersEvent(makeOrderMessages({ records: 10_000, partitions: 6, seed: 14 }), 100_000);
    const body = JSON.stringify(big);
    expect(Buffer.byteLength(body)).toBeGreaterThan(5_500_000);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(6 * 1024 * 1024);
    // Act
    const summary = payloadOf(await fn.invoke(body));
    // Assess
    expect(summary.records).toBe(10_000);
    expect(summary.tables[0]).toMatchObject({ status: 'committed', rowsWritten: 10_000 });
    expect(await duckdbCount(ORDERS_TABLE)).toBe(10_358);
    const offsets = readCommittedOffsets((await load(ORDERS_TABLE)).metadata);
    expect([...(offsets.get('orders')?.keys() ?? [])].sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('dead-letters a record of partition -1 under "orders--1" and an offset the runtime rounded, claiming neither', async () => {
    // Prepare: as text, so the runtime's own JSON.parse reads 2^63-1 (a double rounds it); then the
    // genuine record at orders/1 offset 7, which the hostile one must not have claimed
    const sample = (event('events/orders-batch-1.json').records as Record<string, Record<string, unknown>[]>)[
      'orders-1'
    ][0];
    const record = (partition: number, offset: string) =>
      JSON.stringify({ ...sample, partition, offset: 0 }).replace('"offset":0', `"offset":${offset}`);
    const hostile =
      '{"eventSource":"aws:kafka","records":{' +
      `"orders--1":[${record(-1, '7')}],"orders-1":[${record(1, '9223372036854775807')}]}}`;
    const genuine = `{"eventSource":"aws:kafka","records":{"orders-1":[${record(1, '7')}]}}`;
    const lettersBefore = await duckdbCount(`${ORDERS_TABLE}__dlq`);
    // Act
    const first = payloadOf(await fn.invoke(hostile));
    const second = payloadOf(await fn.invoke(genuine));
    // Assess: both dead-lettered with their values as given; the genuine record lands
    expect(first.tables[0]).toMatchObject({ rowsWritten: 0, deadLettered: 2 });
    expect(second.tables[0]).toMatchObject({ status: 'committed', rowsWritten: 1, skippedAsReplayed: 0 });
    expect(await duckdbCount(ORDERS_TABLE)).toBe(10_359);
    expect(await duckdbCount(`${ORDERS_TABLE}__dlq`)).toBe(lettersBefore + 2);
    const dlq = await load(`${ORDERS_TABLE}__dlq`);
    const files = (await liveEntries(dlq)).map((e) => sqlString(e.data_file.file_path));
    const letters = await duckdbQuery(
      `SELECT "partition", "offset", error FROM read_parquet([${files.join(', ')}]) WHERE "offset" = -1 ORDER BY error`,
    );
    expect(letters.map((l) => [Number(l.partition), Number(l.offset), l.error])).toEqual([
      [
        1,
        -1,
        'record offset 9223372036854776000 cannot be read exactly: it is past 2^53, and the event was parsed into doubles before floe saw it (the Lambda runtime parses it), which rounds such a number',
      ],
      [-1, -1, 'record partition -1 is not a Kafka partition number (an integer from 0 to 2147483647)'],
    ]);
  });
});
