/**
 * The S3 Tables catalog's maintenance capability: floe configures S3 Tables' own maintenance instead of
 * compacting, expiring and deleting. The S3 Tables API is a stub (test/support/s3tables-maintenance-stub.ts).
 */
import type { S3TablesClient } from '@aws-sdk/client-s3tables';
import { describe, expect, it } from 'vitest';
import { S3TablesCatalog } from '../../../functions/core/catalog/s3tables-catalog.js';
import { S3TablesMaintenance } from '../../../functions/core/catalog/s3tables-maintenance.js';
import { isS3TablesLocation } from '../../../functions/core/catalog/s3tables-names.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import {
  STUB_BUCKET_ARN as BUCKET_ARN,
  StubS3Tables,
  unimplementedRoute,
} from '../../support/s3tables-maintenance-stub.js';
import { EVENTS_ID } from '../maintenance/maintenance-fixture.js';

describe('S3 Tables maintenance configuration', () => {
  it('writes the compaction target and snapshot retention once, then leaves them', async () => {
    // Prepare
    const stub = new StubS3Tables();
    const maintenance = new S3TablesMaintenance(stub, BUCKET_ARN);
    const md = { properties: { 'write.target-file-size-bytes': String(256 * 1024 * 1024) } };
    const settings = resolveSettings(md as never, {
      maxSnapshotAgeMs: 36 * 3_600_000,
      minSnapshotsToKeep: 3,
    });
    // Act
    const first = await maintenance.configure(EVENTS_ID, settings);
    const second = await maintenance.configure(EVENTS_ID, settings);
    // Assess
    expect(first).toMatchObject({ status: 'configured', targetFileSizeMB: 256, maxSnapshotAgeHours: 36 });
    if (first.status === 'unsupported') throw new Error(first.reason);
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
    const result = await new S3TablesMaintenance(stub, BUCKET_ARN).configure(EVENTS_ID, small);
    if (result.status === 'unsupported') throw new Error(result.reason);
    expect(result.targetFileSizeMB).toBe(64);
  });

  it('maps throttling to a retryable error and access denied to a final one', async () => {
    const stub = new StubS3Tables();
    const maintenance = new S3TablesMaintenance(stub, BUCKET_ARN);
    const settings = resolveSettings({ properties: {} } as never);
    stub.failWith = Object.assign(new Error('slow down'), {
      name: 'TooManyRequestsException',
      $metadata: { httpStatusCode: 429 },
    });
    await expect(maintenance.configure(EVENTS_ID, settings)).rejects.toMatchObject({
      name: 'TransientIOError',
      retryable: true,
    });
    stub.failWith = Object.assign(new Error('no'), {
      name: 'AccessDeniedException',
      $metadata: { httpStatusCode: 403 },
    });
    await expect(maintenance.configure(EVENTS_ID, settings)).rejects.toMatchObject({
      name: 'LakeError',
      retryable: false,
    });
  });

  it('reports an endpoint without the maintenance API as unsupported, not as a failure', async () => {
    // Prepare: moto's answer to GetTableMaintenanceConfiguration, and a 501 as emulators answer
    const stub = new StubS3Tables();
    const maintenance = new S3TablesMaintenance(stub, BUCKET_ARN);
    const settings = resolveSettings({ properties: {} } as never);
    const notImplemented = Object.assign(new Error('not yet implemented'), {
      name: 'NotImplemented',
      $metadata: { httpStatusCode: 501 },
    });
    for (const failure of [unimplementedRoute(), notImplemented]) {
      stub.failWith = failure;
      // Act
      const result = await maintenance.configure(EVENTS_ID, settings);
      // Assess
      expect(result).toMatchObject({
        status: 'unsupported',
        reason: expect.stringMatching(
          /^S3 Tables maintenance configuration not available from this endpoint: GetTableMaintenanceConfiguration answered /,
        ),
      });
    }
  });

  it('is the S3 Tables catalog’s maintenance capability, on the catalog’s own client', async () => {
    // Prepare
    const stub = new StubS3Tables();
    const catalog = new S3TablesCatalog({
      tableBucketArn: BUCKET_ARN,
      client: stub as unknown as S3TablesClient,
    });
    // Act
    const result = await catalog.maintenance.configure(
      EVENTS_ID,
      resolveSettings({ properties: {} } as never),
    );
    // Assess
    expect(result.status).toBe('configured');
    expect(stub.calls[0].input).toMatchObject({
      tableBucketARN: BUCKET_ARN,
      namespace: 'lake',
      name: 'events',
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
