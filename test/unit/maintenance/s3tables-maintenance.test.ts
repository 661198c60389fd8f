/**
 * Maintenance tasks on an S3 Tables table: floe configures S3 Tables' own maintenance (the catalog's
 * maintenance capability) instead of compacting, expiring and deleting. The tables live in an embedded
 * catalog given S3 Tables' capability on a stub of its API (moto does not implement it).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Catalog } from '../../../functions/core/catalog/catalog.js';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { S3TablesMaintenance } from '../../../functions/core/catalog/s3tables-maintenance.js';
import { ValidationError } from '../../../functions/core/errors.js';
import {
  expireTask,
  planTask,
  removeOrphansTask,
} from '../../../functions/core/maintenance/maintenance-tasks.js';
import { formatSummary, summarizeRun } from '../../../functions/core/maintenance/maintenance-summary.js';
import { readTableFileStats } from '../../../functions/core/maintenance/plan-compaction.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { OFFSETS_KEY, readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';
import {
  STUB_BUCKET_ARN,
  StubS3Tables,
  unimplementedRoute,
} from '../../support/s3tables-maintenance-stub.js';
import { tempWarehouse } from '../../support/tables.js';
import { appendBatch, createEventsTable, EVENTS_ID, eventRows } from './maintenance-fixture.js';

/** The embedded catalog's tables, with the S3 Tables catalog's maintenance capability on `stub`. */
function withS3TablesMaintenance(catalog: EmbeddedCatalog, stub: StubS3Tables): Catalog {
  const maintenance = new S3TablesMaintenance(stub, STUB_BUCKET_ARN);
  return Object.assign(Object.create(catalog) as EmbeddedCatalog, { maintenance });
}

describe('maintenance tasks on an S3 Tables table', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  let stub: StubS3Tables;

  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
    await createEventsTable(catalog);
    for (let b = 0; b < 3; b++) await appendBatch(catalog, eventRows(b * 4 + 1, b * 4 + 4), b * 4 + 4);
    stub = new StubS3Tables();
  });
  afterEach(() => cleanup());

  it('plans no compaction, removes no orphans, and configures S3 Tables in the expiry step', async () => {
    // Prepare: S3 Tables' own compaction left a snapshot without floe's offsets on top
    const base = await catalog.loadTable(EVENTS_ID);
    const parent = currentSnapshot(base.metadata)!;
    await catalog.commitTable(
      EVENTS_ID,
      [],
      [
        {
          action: 'add-snapshot',
          snapshot: {
            'snapshot-id': 777n,
            'parent-snapshot-id': parent['snapshot-id'],
            'sequence-number': base.metadata['last-sequence-number'] + 1,
            'timestamp-ms': Date.now(),
            'manifest-list': parent['manifest-list'],
            summary: { operation: 'replace' },
          },
        },
        { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 777n },
      ],
    );
    const ctx = { catalog: withS3TablesMaintenance(catalog, stub) };
    const input = { table: 'lake.events', maxSnapshotAgeMs: 3_600_000, orphanFileAgeMs: 0 };
    const before = await catalog.loadTable(EVENTS_ID);
    // Act
    const plan = await planTask(ctx, input);
    const orphans = await removeOrphansTask(ctx, input);
    const expire = await expireTask(ctx, input);
    const again = await expireTask(ctx, input);
    // Assess
    expect(plan).toMatchObject({
      groups: [],
      planLocation: null,
      skipped: expect.stringMatching(/S3 Tables/),
    });
    expect(plan.before.dataFiles).toBe(12);
    expect(orphans).toMatchObject({ status: 'skipped', removed: 0 });
    expect(expire).toMatchObject({
      status: 'skipped',
      snapshotsExpired: 0,
      offsetsAnchor: 'anchored',
      s3Tables: { status: 'configured', maxSnapshotAgeHours: 1 },
    });
    expect(again).toMatchObject({ offsetsAnchor: 'not-needed', s3Tables: { status: 'unchanged' } });
    const after = await catalog.loadTable(EVENTS_ID);
    expect(currentSnapshot(after.metadata)!.summary[OFFSETS_KEY]).toBeDefined();
    expect(readCommittedOffsets(after.metadata)).toEqual(readCommittedOffsets(before.metadata));
    expect(after.metadata.snapshots).toHaveLength(before.metadata.snapshots.length + 1);
  });

  it('reports an endpoint without the maintenance API in the run, and goes on', async () => {
    // Prepare: moto's answer to Get/PutTableMaintenanceConfiguration
    stub.failWith = unimplementedRoute();
    const ctx = { catalog: withS3TablesMaintenance(catalog, stub) };
    const input = { table: 'lake.events', maxSnapshotAgeMs: 3_600_000 };
    // Act
    const expire = await expireTask(ctx, input);
    const summary = summarizeRun(
      'lake.events',
      { ...input, expire },
      await readTableFileStats(await catalog.loadTable(EVENTS_ID)),
    );
    // Assess
    expect(expire).toMatchObject({
      status: 'skipped',
      s3Tables: { status: 'unsupported' },
      warning: expect.stringMatching(
        /^S3 Tables maintenance configuration not available from this endpoint: /,
      ),
      offsetsAnchor: 'not-needed',
    });
    expect(summary.warnings).toEqual([expire.warning]);
    expect(formatSummary(summary).join('\n')).toMatch(
      /warning\s+S3 Tables maintenance configuration not available from this endpoint: GetTableMaintenanceConfiguration answered HTTP 404 with a body that is not the service's answer/,
    );
  });

  it('keeps access denied on the maintenance API an error', async () => {
    stub.failWith = Object.assign(new Error('denied'), {
      name: 'AccessDeniedException',
      $metadata: { httpStatusCode: 403 },
    });
    const ctx = { catalog: withS3TablesMaintenance(catalog, stub) };
    await expect(expireTask(ctx, { table: 'lake.events' })).rejects.toMatchObject({ retryable: false });
  });

  it('rejects input without a table', async () => {
    await expect(planTask({ catalog }, { maxSnapshotAgeMs: 1 })).rejects.toBeInstanceOf(ValidationError);
    await expect(planTask({ catalog }, { table: 'nodots' })).rejects.toBeInstanceOf(ValidationError);
  });
});
