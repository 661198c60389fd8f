/**
 * `floe` against S3 Tables + the DynamoDB lock on moto, as separate processes that find moto only
 * through AWS_ENDPOINT_URL (what a user does with LocalStack): several `floe ingest` processes at once,
 * each delivering its partition's batches in order, while replay processes deliver the same event files
 * again, then a late replay of everything. Afterwards every record is in the table exactly once (floe's
 * reader and DuckDB agree), the snapshot history is linear, no batch id repeats; scan and inspect show
 * the same through the CLI.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { CreateTableBucketCommand } from '@aws-sdk/client-s3tables';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { S3TablesCatalog } from '../../../functions/core/catalog/s3tables-catalog.js';
import { S3FileIO } from '../../../functions/core/io/s3-file-io.js';
import { parseJsonLossless } from '../../../functions/core/spec/json-codec.js';
import type { TableIdentifier } from '../../../functions/core/spec/types.js';
import { EO_SCHEMA, esmEvent, expectedKeys, type OffsetRange } from '../../support/esm-batches.js';
import { expectExactlyOnce } from '../../support/exactly-once-checks.js';
import { dynamoClientForTests, s3TablesClientForTests, uniqueSuffix } from '../../support/moto-lakes.js';
import { describeWithMoto, motoEndpoint, resetMoto, s3ClientForTests } from '../moto.js';
import { awsEnv, type CliResult, runCli, runCliOk } from './run-cli.js';

const WRITERS = 3;
const BATCHES = 4;
const RECORDS_PER_BATCH = 3;
/** How often a writer process is rerun after a failure, as the ESM redelivers a failed batch. */
const MAX_RUNS = 4;

const SEED: OffsetRange[] = [{ partition: 99, first: 0, count: 1 }];
const batchOf = (partition: number, b: number): OffsetRange[] => [
  { partition, first: b * RECORDS_PER_BATCH, count: RECORDS_PER_BATCH },
];

describeWithMoto('floe CLI on S3 Tables + DynamoDB lock (moto), as concurrent processes', () => {
  let dir: string;
  let tableBucketArn: string;
  const lockTable = `floe-cli-locks-${uniqueSuffix()}`;
  const id: TableIdentifier = { namespace: ['cli'], name: `payments_${uniqueSuffix()}` };
  const tableName = `${id.namespace[0]}.${id.name}`;
  /** batch files per partition, in delivery order */
  const files = new Map<number, string[]>();

  beforeAll(async () => {
    await resetMoto();
    dir = await mkdtemp(join(tmpdir(), 'floe-cli-s3t-'));
    const bucket = await s3TablesClientForTests().send(
      new CreateTableBucketCommand({ name: `floe-cli-${uniqueSuffix()}` }),
    );
    if (!bucket.arn) throw new Error('CreateTableBucket returned no ARN');
    tableBucketArn = bucket.arn;
    await writeFile(join(dir, 'schema.json'), JSON.stringify(EO_SCHEMA));
    await writeFile(join(dir, 'seed.json'), JSON.stringify(esmEvent(SEED)));
    for (let p = 0; p < WRITERS; p++) {
      const list: string[] = [];
      for (let b = 0; b < BATCHES; b++) {
        const file = join(dir, `p${p}-b${b}.json`);
        await writeFile(file, JSON.stringify(esmEvent(batchOf(p, b))));
        list.push(file);
      }
      files.set(p, list);
    }
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const catalogFlags = () => ['--table-bucket-arn', tableBucketArn, '--lock-table', lockTable];
  const env = () => ({ ...awsEnv(motoEndpoint()), FLOE_LOCK_LEASE_MS: '10000' });
  const ingest = (eventFiles: string[]) =>
    runCli(['ingest', ...eventFiles, ...catalogFlags(), '--table', tableName], env());

  /** Reruns a failed process (each run skips what an earlier one committed). @throws after MAX_RUNS */
  async function deliverAll(eventFiles: string[], failures: CliResult[]): Promise<CliResult> {
    for (let run = 1; ; run++) {
      const result = await ingest(eventFiles);
      if (result.code === 0) return result;
      failures.push(result);
      if (run >= MAX_RUNS) throw new Error(`floe ingest kept failing:\n${result.stderr}`);
    }
  }

  it('concurrent ingest processes and replays: every record once, a linear history', {
    timeout: 600_000,
  }, async () => {
    // Prepare: one process creates the table and the lock table (moto's CreateTable replaces a table
    // that exists, so creation races are left out: they would test moto, not floe)
    const seeded = await runCliOk(
      [
        'ingest',
        join(dir, 'seed.json'),
        ...catalogFlags(),
        '--table',
        tableName,
        '--schema',
        join(dir, 'schema.json'),
        '--partition-by',
        'day(event_ts)',
      ],
      env(),
    );
    expect(seeded.stdout).toMatch(/1 rows in 1 files .*; snapshot \d+ \(1 attempt\)/);
    const described = await dynamoClientForTests().send(new DescribeTableCommand({ TableName: lockTable }));
    expect(described.Table?.TableStatus).toBe('ACTIVE');

    // Act: a writer per partition, and two replay processes delivering the same files at the same time
    // (one partition after another, in two orders; each partition's batches in offset order, as the ESM)
    const all = [...files.values()].flat();
    const failures: CliResult[] = [];
    const started = Date.now();
    const results = await Promise.all([
      ...[...files.values()].map((list) => deliverAll(list, failures)),
      deliverAll(all, failures),
      deliverAll([...files.values()].reverse().flat(), failures),
    ]);
    const concurrentMs = Date.now() - started;
    const lateReplay = await runCliOk(['ingest', ...all, ...catalogFlags(), '--table', tableName], env());

    // Assess: the CLI's own reports
    // (a failed run may have committed some files before it failed: its lines count too)
    const output = [...results, ...failures].map((r) => r.stdout).join('');
    const commits = output.match(/; snapshot \d+ \(\d+ attempts?\)/g) ?? [];
    const skipped = output.match(/replay skipped/g) ?? [];
    const retried = commits.filter((c) => !c.includes('(1 attempt)'));
    const commitsBy = results.map((r) => (r.stdout.match(/; snapshot \d+ \(/g) ?? []).length);
    console.info(
      `[cli-s3tables] ${results.length} processes × ${BATCHES}-${all.length} files in ${concurrentMs} ms: ` +
        `${commits.length} commits (${retried.length} after a conflict), ${skipped.length} replays skipped, ` +
        `${failures.length} failed runs; commits per process ${JSON.stringify(commitsBy)}`,
    );
    // the processes really ran at the same time: one moment when every one of them was alive
    const lastStart = Math.max(...results.map((r) => r.startedAt));
    const firstEnd = Math.min(...results.map((r) => r.endedAt));
    expect(lastStart).toBeLessThan(firstEnd);
    const finalLines =
      results
        .map((r) => r.stdout)
        .join('')
        .match(/^.+ → .+$/gm) ?? [];
    expect(finalLines).toHaveLength(all.length * 3);
    expect(lateReplay.stdout.match(/already committed \(replay skipped\)|nothing new/g)).toHaveLength(
      all.length,
    );

    // Assess: the table, read by a catalog of this process and by DuckDB
    const catalog = new S3TablesCatalog({
      tableBucketArn,
      client: s3TablesClientForTests(),
      io: new S3FileIO({ client: s3ClientForTests() }),
    });
    const table = await catalog.loadTable(id);
    const expected = [
      ...expectedKeys(SEED),
      ...[...files.keys()].flatMap((p) =>
        Array.from({ length: BATCHES }, (_, b) => expectedKeys(batchOf(p, b))).flat(),
      ),
    ];
    await expectExactlyOnce(table, expected);
    // one snapshot for the seed and one per committed delivery: no commit was lost or doubled
    expect(table.metadata.snapshots).toHaveLength(1 + commits.length);

    // Assess: scan and inspect through the CLI see the same table, ids exact
    const scanned = await runCliOk(
      ['scan', '--table-bucket-arn', tableBucketArn, '--table', tableName, '--json'],
      env(),
    );
    expect(scanned.stdout.trim().split('\n')).toHaveLength(expected.length);
    const inspected = await runCliOk(['inspect', '--catalog', 's3tables', '--table', tableName, '--json'], {
      ...env(),
      FLOE_TABLE_BUCKET_ARN: tableBucketArn,
    });
    const shown = parseJsonLossless(inspected.stdout) as {
      metadata: { snapshots: { 'snapshot-id': bigint }[] };
      files: { snapshot: bigint }[];
    };
    const ids = table.metadata.snapshots.map((s) => s['snapshot-id']);
    expect(shown.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual(ids);
    for (const f of shown.files) expect(ids).toContain(f.snapshot);
  });
});
