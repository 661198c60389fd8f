/**
 * A maintenance property floe cannot read fails the task it governs with a message naming the property;
 * it is never read as its default (expiring with 5 days where the user wrote something else, compacting
 * with a codec they did not ask for). The table is left as it was.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ValidationError } from '../../../functions/core/errors.js';
import {
  expireTask,
  type MaintenanceContext,
  planTask,
  rewriteManifestsTask,
} from '../../../functions/core/maintenance/maintenance-tasks.js';
import { tempWarehouse } from '../../support/tables.js';
import { appendBatch, createEventsTable, EVENTS_ID, eventRows, liveIds } from './maintenance-fixture.js';

describe('maintenance of a table with a malformed property', () => {
  let catalog: EmbeddedCatalog;
  let dir: string;
  let cleanup: () => Promise<void>;
  let ctx: MaintenanceContext;

  beforeEach(async () => {
    ({ catalog, dir, cleanup } = await tempWarehouse());
    await createEventsTable(catalog);
    for (let b = 0; b < 4; b++) await appendBatch(catalog, eventRows(b * 5 + 1, b * 5 + 5), b * 5 + 5);
    ctx = { catalog };
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await cleanup();
  });

  const set = (updates: Record<string, string>) =>
    catalog.commitTable(EVENTS_ID, [], [{ action: 'set-properties', updates }]);
  const input = { table: 'lake.events', maxSnapshotAgeMs: 0, orphanFileAgeMs: 0 };

  it('history.expire.min-snapshots-to-keep=none: expiry fails naming it, no snapshot expired', async () => {
    // Prepare
    await set({ 'history.expire.min-snapshots-to-keep': 'none' });
    const before = (await catalog.loadTable(EVENTS_ID)).metadata.snapshots.length;

    // Act
    const expiring = expireTask(ctx, input);

    // Assess
    await expect(expiring).rejects.toBeInstanceOf(ValidationError);
    await expect(expiring).rejects.toThrow(
      'table property history.expire.min-snapshots-to-keep: must be an integer ≥ 1, got "none"',
    );
    expect((await catalog.loadTable(EVENTS_ID)).metadata.snapshots).toHaveLength(before);
  });

  it('floe.maintenance.max-group-bytes=64MB: planning compaction fails naming it', async () => {
    await set({ 'floe.maintenance.max-group-bytes': '64MB' });
    await expect(planTask(ctx, input)).rejects.toThrow(
      'table property floe.maintenance.max-group-bytes: must be an integer ≥ 1, got "64MB"',
    );
  });

  it('floe.maintenance.min-input-files=1: refused (a group of one file rewrites nothing), not raised to 2', async () => {
    await set({ 'floe.maintenance.min-input-files': '1' });
    await expect(planTask(ctx, input)).rejects.toThrow(
      'table property floe.maintenance.min-input-files: must be an integer ≥ 2, got "1"',
    );
  });

  it('write.avro.compression-codec=zstd: rewriting manifests fails naming it, the manifests stay', async () => {
    // Prepare
    await set({ 'write.avro.compression-codec': 'zstd' });
    const before = await catalog.loadTable(EVENTS_ID);

    // Act / Assess
    await expect(rewriteManifestsTask(ctx, input)).rejects.toThrow(
      'table property write.avro.compression-codec: must be one of gzip, uncompressed',
    );
    const after = await catalog.loadTable(EVENTS_ID);
    expect(after.metadata['current-snapshot-id']).toBe(before.metadata['current-snapshot-id']);
  });

  it('floe maintain reports the failed task with the message and a failing exit code; the data is intact', async () => {
    // Prepare
    await set({ 'history.expire.max-snapshot-age-ms': '5d' });
    const ids = await liveIds(catalog);
    let err = '';
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err += String(chunk);
      return true;
    });

    // Act
    const code = await main(['maintain', 'expire-snapshots', '--warehouse', dir, '--table', 'lake.events']);

    // Assess
    expect(code).not.toBe(0);
    expect(err).toContain(
      'table property history.expire.max-snapshot-age-ms: must be an integer ≥ 1, got "5d"',
    );
    expect(await liveIds(catalog)).toEqual(ids);
  });
});
