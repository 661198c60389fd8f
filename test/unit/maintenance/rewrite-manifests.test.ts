import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { rewriteManifests } from '../../../functions/core/table/actions/rewrite-manifests.js';
import { readManifestEntries } from '../../../functions/core/manifest/manifest-reader.js';
import { readManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';
import { liveEntries } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';
import {
  appendBatch,
  commitEqualityDeletes,
  createEventsTable,
  EVENTS_ID,
  eventRows,
  liveIds,
} from './maintenance-fixture.js';

describe('rewriting manifests', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
    await createEventsTable(catalog, { 'commit.manifest-merge.enabled': 'false' });
    for (let b = 0; b < 12; b++) await appendBatch(catalog, eventRows(b * 4 + 1, b * 4 + 4), b * 4 + 4);
    // equality deletes between appends: their sequence numbers must keep applying to the right files
    await commitEqualityDeletes(catalog, [2, 7]);
    for (let b = 12; b < 15; b++) await appendBatch(catalog, eventRows(b * 4 + 1, b * 4 + 4), b * 4 + 4);
    await commitEqualityDeletes(catalog, [50, 51]);
  });
  afterEach(() => cleanup());

  it('rewrites many small manifests into one per content type, same files, same sequence numbers', async () => {
    // Prepare
    const before = await catalog.loadTable(EVENTS_ID);
    const entriesBefore = (await liveEntries(before)).map((e) => [
      e.data_file.file_path,
      e.sequence_number,
      e.snapshot_id,
    ]);
    const idsBefore = await liveIds(catalog);
    const planBefore = await planScan(before);
    // Act
    const result = await rewriteManifests(catalog, EVENTS_ID);
    // Assess
    const after = await catalog.loadTable(EVENTS_ID);
    expect(result).toMatchObject({
      status: 'rewritten',
      manifestsBefore: 17,
      manifestsAfter: 2,
      manifestsReplaced: 17,
    });
    const manifests = await readManifestList(after.io, currentSnapshot(after.metadata)!['manifest-list']);
    expect(manifests.map((m) => m.content).sort()).toEqual([0, 1]);
    const entriesAfter = (await liveEntries(after)).map((e) => [
      e.data_file.file_path,
      e.sequence_number,
      e.snapshot_id,
    ]);
    expect(entriesAfter.sort()).toEqual(entriesBefore.sort());
    expect(await liveIds(catalog)).toEqual(idsBefore);
    expect(idsBefore).not.toContain(7);
    expect(idsBefore).toContain(52);
    expect((await planScan(after)).manifestsRead).toBeLessThan(planBefore.manifestsRead);
    expect(currentSnapshot(after.metadata)!.summary).toMatchObject({
      operation: 'replace',
      'manifests-created': '2',
    });
    expect(readCommittedOffsets(after.metadata)).toEqual(readCommittedOffsets(before.metadata));
  });

  it('clusters entries by partition so each partition’s files sit together', async () => {
    // Prepare: a small target splits the data entries over several manifests
    await catalog.commitTable(
      EVENTS_ID,
      [],
      [{ action: 'set-properties', updates: { 'commit.manifest.target-size-bytes': '6000' } }],
    );
    // Act
    const result = await rewriteManifests(catalog, EVENTS_ID);
    // Assess
    const after = await catalog.loadTable(EVENTS_ID);
    const all = await readManifestList(after.io, currentSnapshot(after.metadata)!['manifest-list']);
    const data = all.filter((m) => m.content === 0);
    expect(data.length).toBeGreaterThan(1);
    expect(result.manifestsAfter).toBe(all.length);
    const order: string[] = [];
    for (const m of data)
      for (const e of await readManifestEntries(after.io, m))
        order.push(String(e.data_file.partition.category));
    expect(order).toEqual([...order].sort());
  });

  it('commits nothing when the manifests are already in shape, and nothing in a dry run', async () => {
    // Prepare
    await rewriteManifests(catalog, EVENTS_ID);
    const location = (await catalog.loadTable(EVENTS_ID)).metadataLocation;
    // Act
    const again = await rewriteManifests(catalog, EVENTS_ID);
    // Assess
    expect(again.status).toBe('nothing-to-rewrite');
    expect((await catalog.loadTable(EVENTS_ID)).metadataLocation).toBe(location);
  });

  it('reports without committing in a dry run', async () => {
    const location = (await catalog.loadTable(EVENTS_ID)).metadataLocation;
    const dry = await rewriteManifests(catalog, EVENTS_ID, { dryRun: true });
    expect(dry).toMatchObject({
      status: 'dry-run',
      manifestsBefore: 17,
      manifestsAfter: 2,
      snapshotId: null,
    });
    expect((await catalog.loadTable(EVENTS_ID)).metadataLocation).toBe(location);
  });
});
