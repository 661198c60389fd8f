/**
 * `floe maintain all` on an S3 Tables table (moto), as a user runs it: S3 Tables maintains the table
 * itself, so floe only configures its maintenance — and moto does not implement
 * Get/PutTableMaintenanceConfiguration (it answers its 404 page). The run reports that as a warning in its
 * summary and goes on (the offsets anchor and the manifest rewrite still run); it does not fail.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EO_SCHEMA, esmEvent } from '../../support/esm-batches.js';
import { createTableBucketForTests, uniqueSuffix } from '../../support/moto-lakes.js';
import { describeWithMoto, motoEndpoint, resetMoto } from '../moto.js';
import { awsEnv, runCli, runCliOk } from './run-cli.js';

describeWithMoto('floe maintain on S3 Tables (moto, no maintenance API)', () => {
  let dir: string;
  let tableBucketArn: string;
  const lockTable = `floe-maintain-locks-${uniqueSuffix()}`;
  const table = `upkeep.events_${uniqueSuffix()}`;

  beforeAll(async () => {
    await resetMoto();
    dir = await mkdtemp(join(tmpdir(), 'floe-cli-s3t-maintain-'));
    tableBucketArn = await createTableBucketForTests('floe-maintain');
    await writeFile(join(dir, 'schema.json'), JSON.stringify(EO_SCHEMA));
    await writeFile(
      join(dir, 'batch.json'),
      JSON.stringify(esmEvent([{ partition: 0, first: 0, count: 3 }])),
    );
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const catalogFlags = () => ['--table-bucket-arn', tableBucketArn, '--lock-table', lockTable];

  it('reports the missing maintenance API as a warning and finishes the run', {
    timeout: 300_000,
  }, async () => {
    // Prepare
    await runCliOk(
      [
        'ingest',
        join(dir, 'batch.json'),
        ...catalogFlags(),
        '--table',
        table,
        '--schema',
        join(dir, 'schema.json'),
      ],
      awsEnv(motoEndpoint()),
    );

    // Act
    const run = await runCli(
      ['maintain', 'all', ...catalogFlags(), '--table', table],
      awsEnv(motoEndpoint()),
    );

    // Assess
    expect(run.code, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/compact: skipped — S3 Tables maintains this table itself/);
    expect(run.stdout).toMatch(
      /warning\s+S3 Tables maintenance configuration not available from this endpoint: GetTableMaintenanceConfiguration answered HTTP 404 with a body that is not the service's answer/,
    );
    expect(run.stdout).toMatch(/rewrite-manifests: /);
    expect(run.stdout).toMatch(/data files\s+1 → 1/);
  });
});
