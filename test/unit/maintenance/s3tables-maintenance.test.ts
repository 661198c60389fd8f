/**
 * S3 Tables tables: floe configures S3 Tables' own maintenance instead of compacting, expiring and
 * deleting. moto does not implement Get/PutTableMaintenanceConfiguration, so the S3 Tables API is a stub
 * here that records the commands and keeps the configuration they set, as the service does.
 */
import {
  GetTableMaintenanceConfigurationCommand,
  type PutTableMaintenanceConfigurationCommand,
  type TableMaintenanceConfigurationValue,
} from '@aws-sdk/client-s3tables';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ValidationError } from '../../../functions/core/errors.js';
import {
  expireTask,
  planTask,
  removeOrphansTask,
} from '../../../functions/core/maintenance/maintenance-tasks.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import {
  configureS3TablesMaintenance,
  isS3TablesLocation,
  type S3TablesAccess,
} from '../../../functions/core/maintenance/s3tables-maintenance.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { OFFSETS_KEY, readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';
import { tempWarehouse } from '../../support/tables.js';
import { appendBatch, createEventsTable, EVENTS_ID, eventRows } from './maintenance-fixture.js';

const BUCKET_ARN = 'arn:aws:s3tables:us-east-1:123456789012:bucket/lake';

class StubS3Tables {
  readonly calls: { command: string; input: Record<string, unknown> }[] = [];
  readonly configuration: Record<string, TableMaintenanceConfigurationValue> = {};
  failWith?: Error & { $metadata?: { httpStatusCode: number } };

  async send(
    command: GetTableMaintenanceConfigurationCommand | PutTableMaintenanceConfigurationCommand,
  ): Promise<unknown> {
    if (this.failWith) throw this.failWith;
    const input = command.input as unknown as Record<string, unknown>;
    this.calls.push({ command: command.constructor.name, input });
    if (command instanceof GetTableMaintenanceConfigurationCommand) {
      return { tableARN: `${BUCKET_ARN}/table/1`, configuration: structuredClone(this.configuration) };
    }
    this.configuration[String(input.type)] = structuredClone(
      input.value as TableMaintenanceConfigurationValue,
    );
    return {};
  }
}

describe('S3 Tables maintenance configuration', () => {
  it('writes the compaction target and snapshot retention once, then leaves them', async () => {
    // Prepare
    const stub = new StubS3Tables();
    const access: S3TablesAccess = { client: stub, tableBucketArn: BUCKET_ARN };
    const md = { properties: { 'write.target-file-size-bytes': String(256 * 1024 * 1024) } };
    const settings = resolveSettings(md as never, {
      maxSnapshotAgeMs: 36 * 3_600_000,
      minSnapshotsToKeep: 3,
    });
    // Act
    const first = await configureS3TablesMaintenance(access, EVENTS_ID, settings);
    const second = await configureS3TablesMaintenance(access, EVENTS_ID, settings);
    // Assess
    expect(first).toMatchObject({ status: 'configured', targetFileSizeMB: 256, maxSnapshotAgeHours: 36 });
    expect(first.changed).toEqual(['icebergCompaction', 'icebergSnapshotManagement']);
    expect(second).toMatchObject({ status: 'unchanged', changed: [] });
    const puts = stub.calls.filter((c) => c.command === 'PutTableMaintenanceConfigurationCommand');
    expect(puts).toHaveLength(2);
    expect(puts[1].input).toEqual({
      tableBucketARN: BUCKET_ARN,
      namespace: 'lake',
      name: 'events',
      type: 'icebergSnapshotManagement',
      value: {
        status: 'enabled',
        settings: { icebergSnapshotManagement: { minSnapshotsToKeep: 3, maxSnapshotAgeHours: 36 } },
      },
    });
  });

  it('clamps the compaction target to what S3 Tables accepts (64–512 MB)', async () => {
    const stub = new StubS3Tables();
    const small = resolveSettings({ properties: { 'write.target-file-size-bytes': '1048576' } } as never);
    const result = await configureS3TablesMaintenance(
      { client: stub, tableBucketArn: BUCKET_ARN },
      EVENTS_ID,
      small,
    );
    expect(result.targetFileSizeMB).toBe(64);
  });

  it('maps throttling to a retryable error and access denied to a final one', async () => {
    const stub = new StubS3Tables();
    const access = { client: stub, tableBucketArn: BUCKET_ARN };
    const settings = resolveSettings({ properties: {} } as never);
    stub.failWith = Object.assign(new Error('slow down'), {
      name: 'TooManyRequestsException',
      $metadata: { httpStatusCode: 429 },
    });
    await expect(configureS3TablesMaintenance(access, EVENTS_ID, settings)).rejects.toMatchObject({
      name: 'TransientIOError',
      retryable: true,
    });
    stub.failWith = Object.assign(new Error('no'), {
      name: 'AccessDeniedException',
      $metadata: { httpStatusCode: 403 },
    });
    await expect(configureS3TablesMaintenance(access, EVENTS_ID, settings)).rejects.toMatchObject({
      name: 'LakeError',
      retryable: false,
    });
  });

  it('recognises table bucket locations', () => {
    expect(isS3TablesLocation('s3://63a8e430-6e0b-46f5-k833abtwr6s8tmtsycx66o2nnbx3pcta--table-s3')).toBe(
      true,
    );
    expect(isS3TablesLocation('s3://63a8e430--table-s3/metadata/x')).toBe(true);
    expect(isS3TablesLocation('s3://my-bucket/warehouse/lake/events')).toBe(false);
  });
});

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
    const ctx = { catalog, s3tables: { client: stub, tableBucketArn: BUCKET_ARN } };
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

  it('rejects input without a table', async () => {
    await expect(planTask({ catalog }, { maxSnapshotAgeMs: 1 })).rejects.toBeInstanceOf(ValidationError);
    await expect(planTask({ catalog }, { table: 'nodots' })).rejects.toBeInstanceOf(ValidationError);
  });
});
