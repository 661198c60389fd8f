/**
 * The maintenance state machine exactly as the CDK construct synthesizes it (infra/maintenance-definition.ts
 * through renderMaintenanceDefinition), executed in-process by aws-local-stepfunctions with the real
 * Lambda handlers behind every Task state, configured from the environment as in Lambda, against real
 * storage: a local warehouse, and the embedded catalog on moto S3 with the DynamoDB commit lock.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { StateMachine } from 'aws-local-stepfunctions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog } from '../../../functions/core/catalog/catalog.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { normalizeLocation } from '../../../functions/core/maintenance/remove-orphans.js';
import { createLockTable } from '../../../functions/core/lock/dynamodb-lock.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';
import { loadHandlerConfig } from '../../../functions/handlers/config.js';
import type { createMaintenanceHandlers } from '../../../functions/handlers/maintenance.js';
import { MAINTENANCE_STATES, MAINTENANCE_TASKS } from '../../../infra/maintenance-definition.js';
import { renderMaintenanceDefinition } from '../../../infra/render-definition.js';
import { duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';
import {
  appendBatch,
  CATEGORIES,
  canonicalRows,
  commitEqualityDeletes,
  createEventsTable,
  EVENTS_ID,
  eventRows,
} from '../../unit/maintenance/maintenance-fixture.js';
import {
  createBucket,
  describeWithMoto,
  motoEndpoint,
  resetMoto,
  TEST_CREDENTIALS,
  TEST_REGION,
  uniqueBucketName,
} from '../moto.js';

type Json = Parameters<StateMachine['run']>[0];

/** The handlers module, imported once the log level is set (Powertools reads it when the logger is made). */
async function importHandlers(): Promise<typeof createMaintenanceHandlers> {
  process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
  return (await import('../../../functions/handlers/maintenance.js')).createMaintenanceHandlers;
}
type Handlers = ReturnType<typeof createMaintenanceHandlers>;

/** Runs the synthesized definition with `handlers` behind its Task states; `wrap` may intercept one. */
async function runMaintenance(
  handlers: Handlers,
  input: Record<string, unknown>,
  wrap: Partial<Record<string, (input: Json, next: (input: Json) => Promise<Json>) => Promise<Json>>> = {},
): Promise<{ output?: Record<string, unknown>; error?: unknown; entered: string[] }> {
  const machine = new StateMachine(
    renderMaintenanceDefinition() as unknown as ConstructorParameters<typeof StateMachine>[0],
  );
  const local = Object.fromEntries(
    MAINTENANCE_TASKS.map((task) => {
      const handler = handlers[task.handler] as (event: unknown) => Promise<unknown>;
      const next = async (event: Json) => (await handler(event)) as Json;
      const intercept = wrap[task.state];
      return [task.state, intercept ? (event: Json) => intercept(event, next) : next];
    }),
  );
  const execution = machine.run(input as Json, {
    overrides: {
      taskResourceLocalHandlers: local,
      retryIntervalOverrides: Object.fromEntries(
        [...MAINTENANCE_TASKS.map((t) => t.state), MAINTENANCE_STATES.compactGroups].map((s) => [s, 0]),
      ),
    },
  });
  const entered: string[] = [];
  const collect = (async () => {
    for await (const event of execution.eventLogs)
      if (event.type === 'StateEntered') entered.push(event.state.name);
  })();
  try {
    const output = (await execution.result) as Record<string, unknown>;
    await collect;
    return { output, entered };
  } catch (error) {
    await collect.catch(() => undefined);
    return { error, entered };
  }
}

async function floeRows(catalog: Catalog) {
  const table = await catalog.loadTable(EVENTS_ID);
  const plan = await planScan(table);
  return { rows: canonicalRows(await readScanRows(table, plan)), plan, table };
}

/** DuckDB over the live data files (valid when no delete file is live). */
async function duckdbRows(catalog: Catalog): Promise<string[]> {
  const table = await catalog.loadTable(EVENTS_ID);
  const files = (await liveEntries(table)).map((e) => sqlString(e.data_file.file_path));
  const rows = await duckdbQuery(
    `SELECT id, category, amount, note FROM read_parquet([${files.join(', ')}])`,
  );
  return canonicalRows(rows as never);
}

const RETAIN_ONE = { maxSnapshotAgeMs: 0, minSnapshotsToKeep: 1, orphanFileAgeMs: 0 };

describe('the maintenance state machine on a local warehouse', () => {
  let dir: string;
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  let handlers: Handlers;
  const target = 8 * 1024;

  beforeAll(async () => {
    ({ dir, catalog, cleanup } = await tempWarehouse());
    const createMaintenanceHandlers = await importHandlers();
    handlers = createMaintenanceHandlers(() =>
      loadHandlerConfig({ FLOE_CATALOG: 'embedded', FLOE_WAREHOUSE: dir, FLOE_TABLES: '[]' }),
    );
  });
  afterAll(() => cleanup());

  it('after 200 small batches, one run leaves at most one small file per partition, the same rows, and cheap planning', async () => {
    // Prepare: 200 ingestion batches (8 rows over 4 partitions each), CDC deletes every 25 batches
    await createEventsTable(catalog, { 'write.target-file-size-bytes': String(target) });
    for (let b = 0; b < 200; b++) {
      await appendBatch(catalog, eventRows(b * 8 + 1, b * 8 + 8), b * 8 + 8);
      if (b % 25 === 24) await commitEqualityDeletes(catalog, [b * 8 - 3, b * 8 - 2, b * 8 + 5]);
    }
    const before = await floeRows(catalog);
    const offsetsBefore = readCommittedOffsets(before.table.metadata);
    // Act
    const { output, error, entered } = await runMaintenance(handlers, {
      table: 'lake.events',
      ...RETAIN_ONE,
    });
    // Assess: the run
    expect(error).toBeUndefined();
    expect(entered.filter((s) => s !== 'Compact')).toEqual([
      'ConvertEqualityDeletes',
      'Plan',
      'HasRewriteGroups',
      'CompactGroups',
      'Commit',
      'ExpireSnapshots',
      'RemoveOrphans',
      'RewriteManifests',
      'Done',
    ]);
    // The CDC deletes went to position deletes first (the table is in the default delete mode)
    const converted = output?.convertEqualityDeletes as { equalityDeleteFiles: number };
    expect(converted.equalityDeleteFiles).toBeGreaterThan(0);
    expect(converted).toMatchObject({
      status: 'converted',
      equalityDeletesRemoved: converted.equalityDeleteFiles,
      groupsAbandoned: [],
    });
    expect(output?.commit).toMatchObject({
      status: 'committed',
      operation: 'overwrite',
      dataFilesRemoved: 800,
    });
    // Assess: at most one file per partition below the small-file threshold (75% of the target), none above it
    const after = await floeRows(catalog);
    const live = await liveEntries(after.table);
    expect(live.every((e) => e.data_file.content === 0)).toBe(true);
    for (const category of CATEGORIES) {
      const sizes = live
        .filter((e) => e.data_file.partition.category === category)
        .map((e) => Number(e.data_file.file_size_in_bytes));
      expect(sizes.length).toBeGreaterThan(1);
      expect(sizes.filter((s) => s < target * 0.75).length, `${category}: ${sizes}`).toBeLessThanOrEqual(1);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(target);
    }
    // Assess: the same rows, by floe's reader and by DuckDB over the live files
    expect(after.rows).toEqual(before.rows);
    expect(await duckdbRows(catalog)).toEqual(before.rows);
    // Assess: planning reads far fewer manifests, and floe's offsets survived the expiry
    expect(before.plan.manifestsRead).toBeGreaterThanOrEqual(10);
    expect(after.plan.manifestsRead).toBe(1);
    expect(after.plan.bytesRead).toBeLessThan(before.plan.bytesRead / 5);
    expect(readCommittedOffsets(after.table.metadata)).toEqual(offsetsBefore);
    // Assess: nothing but the live files is left in data/, and the summary says so
    const dataFiles = (await after.table.io.list(`${after.table.metadata.location}/data`)).map(
      (f) => f.location,
    );
    expect(dataFiles.sort()).toEqual(live.map((e) => e.data_file.file_path).sort());
    const summary = (output!.rewriteManifests as { summary: Record<string, unknown> }).summary;
    expect(summary).toMatchObject({
      dataFilesBefore: 800,
      dataFilesAfter: live.length,
      manifestsReadAfter: 1,
      groupsCompacted: 4,
    });
    expect(summary.snapshotsExpired as number).toBeGreaterThan(200);
  });

  it('keeps rows deleted while the run compacts deleted, and ends through the failure state on a missing table', async () => {
    // Prepare
    const id = { namespace: ['lake'], name: 'events' };
    await catalog.dropTable(id);
    await createEventsTable(catalog);
    for (let b = 0; b < 10; b++) await appendBatch(catalog, eventRows(b * 8 + 1, b * 8 + 8), b * 8 + 8);
    // Act: a CDC commit lands between the compaction and its commit
    const raced = await runMaintenance(
      handlers,
      { table: 'lake.events' },
      {
        Commit: async (input, next) => {
          await commitEqualityDeletes(catalog, [1, 2, 3, 4]);
          return next(input);
        },
      },
    );
    const missing = await runMaintenance(handlers, { table: 'lake.nothing' });
    // Assess
    expect(raced.error).toBeUndefined();
    const ids = (await floeRows(catalog)).rows.map((r) => Number(JSON.parse(r).id));
    expect(ids).toHaveLength(76);
    expect(ids).not.toContain(3);
    expect(missing.entered).toEqual(['ConvertEqualityDeletes', 'ReportFailure', 'Failed']);
    const failure = (missing.error as Error).cause as Error;
    expect(failure.name).toBe('NoSuchTableError');
  });
});

describeWithMoto('the maintenance state machine on moto S3 with the DynamoDB lock', () => {
  const saved = { endpoint: process.env.AWS_ENDPOINT_URL, region: process.env.AWS_REGION };
  let catalog: EmbeddedCatalog;
  let handlers: Handlers;

  beforeAll(async () => {
    await resetMoto();
    process.env.AWS_ENDPOINT_URL = motoEndpoint();
    process.env.AWS_REGION = TEST_REGION;
    const bucket = await createBucket(uniqueBucketName('floe-maint'));
    const lockTable = `floe-lock-${bucket.slice(-8)}`;
    await createLockTable(
      new DynamoDBClient({ endpoint: motoEndpoint(), region: TEST_REGION, credentials: TEST_CREDENTIALS }),
      lockTable,
    );
    const env = {
      FLOE_CATALOG: 'embedded',
      FLOE_WAREHOUSE: `s3://${bucket}/wh`,
      FLOE_TABLES: '[]',
      FLOE_LOCK_TABLE: lockTable,
    };
    catalog = new EmbeddedCatalog({ warehouse: env.FLOE_WAREHOUSE });
    const createMaintenanceHandlers = await importHandlers();
    handlers = createMaintenanceHandlers(() => loadHandlerConfig(env));
  });
  afterAll(() => {
    if (saved.endpoint === undefined) delete process.env.AWS_ENDPOINT_URL;
    else process.env.AWS_ENDPOINT_URL = saved.endpoint;
    if (saved.region === undefined) delete process.env.AWS_REGION;
    else process.env.AWS_REGION = saved.region;
  });

  it('compacts, expires, cleans up and rewrites manifests in S3', async () => {
    // Prepare
    await createEventsTable(catalog);
    for (let b = 0; b < 15; b++) await appendBatch(catalog, eventRows(b * 8 + 1, b * 8 + 8), b * 8 + 8);
    await commitEqualityDeletes(catalog, [5, 6, 7]);
    const before = await floeRows(catalog);
    // Act
    const { output, error } = await runMaintenance(handlers, { table: 'lake.events', ...RETAIN_ONE });
    // Assess
    expect(error).toBeUndefined();
    const after = await floeRows(catalog);
    expect(after.rows).toEqual(before.rows);
    const live = await liveEntries(after.table);
    expect(live.map((e) => e.data_file.partition.category).sort()).toEqual([...CATEGORIES].sort());
    const listed = (await after.table.io.list(after.table.metadata.location)).map((f) =>
      normalizeLocation(f.location),
    );
    const data = listed.filter((l) => l.includes('/data/'));
    expect(data.sort()).toEqual(live.map((e) => normalizeLocation(e.data_file.file_path)).sort());
    expect(listed.some((l) => l.includes('floe-maintenance'))).toBe(false);
    expect(output?.expire).toMatchObject({ status: 'expired', deleteFailures: 0 });
    expect((output!.rewriteManifests as { summary: { dataFilesAfter: number } }).summary.dataFilesAfter).toBe(
      4,
    );
  });
});
