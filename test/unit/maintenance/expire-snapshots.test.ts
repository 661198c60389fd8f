import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { commitRewrite } from '../../../functions/core/maintenance/commit-rewrite.js';
import { compactGroup, type GroupOutcome } from '../../../functions/core/maintenance/compact-group.js';
import { expireSnapshots } from '../../../functions/core/maintenance/expire-snapshots.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import { planCompaction } from '../../../functions/core/maintenance/plan-compaction.js';
import { readManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';
import { FaultyCatalog, tempWarehouse } from '../../support/tables.js';
import { appendBatch, createEventsTable, EVENTS_ID, eventRows, liveIds } from './maintenance-fixture.js';

describe('expiring snapshots', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  const now = () => Date.now() + 1000;
  const retainOne = (md: Parameters<typeof resolveSettings>[0]) =>
    resolveSettings(md, { maxSnapshotAgeMs: 0, minSnapshotsToKeep: 1 });

  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
    await createEventsTable(catalog);
    for (let b = 0; b < 5; b++) await appendBatch(catalog, eventRows(b * 8 + 1, b * 8 + 8), b * 8 + 8);
  });
  afterEach(() => cleanup());

  async function compact(): Promise<void> {
    const table = await catalog.loadTable(EVENTS_ID);
    const { plan } = await planCompaction(table, resolveSettings(table.metadata), 'exp', 'lake.events');
    const outcomes: GroupOutcome[] = [];
    for (const g of plan!.groups) outcomes.push(await compactGroup(table, plan!, g.index));
    await commitRewrite(catalog, EVENTS_ID, plan!, outcomes);
  }

  it('removes old snapshots and deletes the files only they reached; the rest stays readable', async () => {
    // Prepare
    await compact();
    const before = await catalog.loadTable(EVENTS_ID);
    const idsBefore = await liveIds(catalog);
    const oldLists = before.metadata.snapshots.slice(0, -1).map((s) => s['manifest-list']);
    const oldDataFiles = (
      await planScan(before, { snapshotId: before.metadata.snapshots[0]['snapshot-id'] })
    ).tasks.map((t) => t.file.file_path);
    // Act
    const result = await expireSnapshots(catalog, EVENTS_ID, retainOne, { nowMs: now() });
    // Assess
    const after = await catalog.loadTable(EVENTS_ID);
    expect(result).toMatchObject({
      status: 'expired',
      snapshotsExpired: 5,
      manifestListsDeleted: 5,
      deleteFailures: 0,
    });
    expect(result.filesDeleted).toBe(20);
    expect(after.metadata.snapshots).toHaveLength(1);
    for (const location of [...oldLists, ...oldDataFiles])
      expect(await after.io.exists(location)).toBe(false);
    const current = currentSnapshot(after.metadata)!;
    for (const m of await readManifestList(after.io, current['manifest-list'])) {
      expect(await after.io.exists(m.manifest_path)).toBe(true);
    }
    expect(await liveIds(catalog)).toEqual(idsBefore);
    expect(readCommittedOffsets(after.metadata)).toEqual(readCommittedOffsets(before.metadata));
  });

  it('reports what it would expire in a dry run, and changes nothing', async () => {
    // Prepare
    const before = await catalog.loadTable(EVENTS_ID);
    // Act
    const result = await expireSnapshots(catalog, EVENTS_ID, retainOne, { nowMs: now(), dryRun: true });
    // Assess
    expect(result).toMatchObject({ status: 'dry-run', snapshotsExpired: 4, filesDeleted: 0 });
    const after = await catalog.loadTable(EVENTS_ID);
    expect(after.metadataLocation).toBe(before.metadataLocation);
  });

  it('expires nothing under Iceberg’s defaults (5 days, keep 1) on a young table', async () => {
    const result = await expireSnapshots(catalog, EVENTS_ID, (md) => resolveSettings(md), { nowMs: now() });
    expect(result.status).toBe('nothing-to-expire');
  });

  it('chooses again when an ingest commit lands first, keeping the new snapshot', async () => {
    // Prepare: an append slips in right before the expiry's first swap
    const faulty = new FaultyCatalog(catalog);
    faulty.beforeCommit = async () => {
      await appendBatch(catalog, eventRows(100, 103), 103);
    };
    // Act
    const result = await expireSnapshots(faulty, EVENTS_ID, retainOne, {
      nowMs: now(),
      sleep: async () => {},
    });
    // Assess
    expect(faulty.commits).toBe(2);
    expect(result.snapshotsExpired).toBe(5);
    const after = await catalog.loadTable(EVENTS_ID);
    expect(after.metadata.snapshots).toHaveLength(1);
    expect(await liveIds(catalog)).toContain(101);
    expect((await liveIds(catalog)).length).toBe(44);
  });
});
