import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { readDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { MAINTENANCE_RUN_KEY } from '../../../functions/core/table/carried-summary.js';
import { commitRewrite } from '../../../functions/core/maintenance/commit-rewrite.js';
import { compactGroup, type GroupOutcome } from '../../../functions/core/maintenance/compact-group.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import { planCompaction } from '../../../functions/core/maintenance/plan-compaction.js';
import type { RewritePlan } from '../../../functions/core/maintenance/rewrite-run-files.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { OFFSETS_KEY, readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';
import { liveEntries } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';
import {
  appendBatch,
  commitEqualityDeletes,
  commitPositionDeletes,
  createEventsTable,
  EVENTS_ID,
  EVENTS_SCHEMA,
  eventRows,
  liveIds,
} from './maintenance-fixture.js';

const TARGET = 1024 * 1024;

describe('compaction: plan, compact each group, commit', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
    await createEventsTable(catalog, { 'write.target-file-size-bytes': String(TARGET) });
  });
  afterEach(() => cleanup());

  async function ingest(batches: number, rowsPerBatch = 8): Promise<void> {
    for (let b = 0; b < batches; b++) {
      await appendBatch(
        catalog,
        eventRows(b * rowsPerBatch + 1, (b + 1) * rowsPerBatch),
        (b + 1) * rowsPerBatch,
      );
    }
  }

  async function plan(runId: string): Promise<RewritePlan> {
    const table = await catalog.loadTable(EVENTS_ID);
    const { plan } = await planCompaction(table, resolveSettings(table.metadata), runId, 'lake.events');
    if (!plan) throw new Error('no plan');
    return plan;
  }

  async function compactAll(p: RewritePlan): Promise<GroupOutcome[]> {
    const table = await catalog.loadTable(EVENTS_ID);
    const out: GroupOutcome[] = [];
    for (const g of p.groups) out.push(await compactGroup(table, p, g.index));
    return out;
  }

  it('rewrites each partition’s small files into one file, same rows, with offsets and batch id carried', async () => {
    // Prepare
    await ingest(12);
    const idsBefore = await liveIds(catalog);
    const before = await catalog.loadTable(EVENTS_ID);
    const offsetsBefore = currentSnapshot(before.metadata)!.summary[OFFSETS_KEY];
    const p = await plan('run-1');
    // Act
    const result = await commitRewrite(catalog, EVENTS_ID, p, await compactAll(p));
    // Assess
    expect(p.groups).toHaveLength(4);
    expect(p.groups.every((g) => g.files.length === 12)).toBe(true);
    expect(result).toMatchObject({
      status: 'committed',
      operation: 'replace',
      dataFilesRemoved: 48,
      dataFilesAdded: 4,
    });
    const table = await catalog.loadTable(EVENTS_ID);
    expect(await liveIds(catalog)).toEqual(idsBefore);
    const live = await liveEntries(table);
    expect(live.map((e) => e.data_file.partition.category).sort()).toEqual([
      'alpha',
      'beta',
      'delta',
      'gamma',
    ]);
    // the new files keep the starting snapshot's sequence number
    expect(live.every((e) => e.sequence_number === BigInt(p.sequenceNumber))).toBe(true);
    const snap = currentSnapshot(table.metadata)!;
    expect(snap.summary).toMatchObject({
      operation: 'replace',
      [MAINTENANCE_RUN_KEY]: 'run-1',
      'total-data-files': '4',
      'total-records': String(idsBefore.length),
    });
    expect(offsetsBefore).toBe('{"events":{"0":"0-96"}}');
    expect(snap.summary[OFFSETS_KEY]).toBe(offsetsBefore);
    expect(snap.summary['floe.batch-id']).toBe('batch-96');
    expect(readCommittedOffsets(table.metadata).get('events')?.get(0)).toEqual([[0n, 96n]]);
    // the run's plan and result files are gone
    expect(await table.io.list(`${table.metadata.location}/metadata/floe-maintenance`)).toEqual([]);
  });

  it('applies the deletes live at the start and drops the delete files it leaves dangling', async () => {
    // Prepare
    await ingest(6);
    await commitEqualityDeletes(catalog, [3, 4, 5, 6]);
    const someFile = (await liveEntries(await catalog.loadTable(EVENTS_ID))).find(
      (e) => e.data_file.content === 0 && e.data_file.partition.category === 'beta',
    )!.data_file;
    await commitPositionDeletes(catalog, someFile, [0]);
    const idsBefore = await liveIds(catalog);
    const p = await plan('run-2');
    // Act
    const result = await commitRewrite(catalog, EVENTS_ID, p, await compactAll(p));
    // Assess
    expect(result).toMatchObject({ status: 'committed', operation: 'overwrite' });
    expect(result.deleteFilesRemoved).toBe(5);
    const table = await catalog.loadTable(EVENTS_ID);
    expect(await liveIds(catalog)).toEqual(idsBefore);
    expect(idsBefore).not.toContain(3);
    expect((await liveEntries(table)).filter((e) => e.data_file.content !== 0)).toEqual([]);
    expect(currentSnapshot(table.metadata)!.summary['total-delete-files']).toBe('0');
  });

  it('keeps equality deletes committed while the rewrite ran applying to the new files', async () => {
    // Prepare
    await ingest(6);
    const p = await plan('run-3');
    const outcomes = await compactAll(p);
    await commitEqualityDeletes(catalog, [10, 11, 12, 13]);
    const expected = await liveIds(catalog);
    // Act
    const result = await commitRewrite(catalog, EVENTS_ID, p, outcomes);
    // Assess
    expect(result.status).toBe('committed');
    expect(result.deleteFilesRemoved).toBe(0);
    expect(await liveIds(catalog)).toEqual(expected);
    expect(expected).not.toContain(11);
  });

  it('abandons the groups whose files another rewrite replaced first, and deletes what they wrote', async () => {
    // Prepare
    await ingest(6);
    const first = await plan('run-a');
    const second = await plan('run-b');
    const firstOutcomes = await compactAll(first);
    const secondOutcomes = await compactAll(second);
    await commitRewrite(catalog, EVENTS_ID, second, secondOutcomes);
    const expected = await liveIds(catalog);
    // Act
    const result = await commitRewrite(catalog, EVENTS_ID, first, firstOutcomes);
    // Assess
    expect(result.status).toBe('abandoned');
    expect(result.groupsAbandoned).toHaveLength(4);
    expect(result.groupsAbandoned[0].reason).toMatch(/removed since the plan/);
    expect(await liveIds(catalog)).toEqual(expected);
    const table = await catalog.loadTable(EVENTS_ID);
    const written = await table.io.list(`${table.metadata.location}/data`);
    expect(written.filter((f) => f.location.includes('rewrite-run-a'))).toEqual([]);
  });

  it('abandons a group when position deletes for its files were committed meanwhile', async () => {
    // Prepare
    await ingest(6);
    const p = await plan('run-4');
    const outcomes = await compactAll(p);
    const beta = p.groups.find((g) => g.partition === 'category=beta')!;
    const table = await catalog.loadTable(EVENTS_ID);
    const target = (await liveEntries(table)).find((e) => e.data_file.file_path === beta.files[0])!.data_file;
    await commitPositionDeletes(catalog, target, [1]);
    const expected = await liveIds(catalog);
    // Act
    const result = await commitRewrite(catalog, EVENTS_ID, p, outcomes);
    // Assess
    expect(result.status).toBe('committed');
    expect(result.groupsAbandoned).toEqual([
      { index: beta.index, reason: expect.stringMatching(/position deletes/) },
    ]);
    expect(result.groupsCommitted).toHaveLength(3);
    expect(await liveIds(catalog)).toEqual(expected);
  });

  it('recognises its own snapshot when the commit step is retried', async () => {
    // Prepare
    await ingest(4);
    const p = await plan('run-5');
    const outcomes = await compactAll(p);
    const first = await commitRewrite(catalog, EVENTS_ID, p, outcomes);
    const snapshots = (await catalog.loadTable(EVENTS_ID)).metadata.snapshots.length;
    // Act
    const again = await commitRewrite(catalog, EVENTS_ID, p, outcomes);
    // Assess
    expect(again).toMatchObject({ status: 'already-committed', snapshotId: first.snapshotId });
    expect((await catalog.loadTable(EVENTS_ID)).metadata.snapshots).toHaveLength(snapshots);
    expect((await liveIds(catalog)).length).toBe(32);
  });

  it('takes on at most floe.maintenance.max-groups-per-run groups, the ones removing most files', async () => {
    // Prepare: one partition gets more small files than the others
    await ingest(3);
    for (let b = 0; b < 3; b++)
      await appendBatch(catalog, eventRows(1000 + b * 4, 1000 + b * 4).slice(0, 1), 2000 + b);
    await catalog.commitTable(
      EVENTS_ID,
      [],
      [{ action: 'set-properties', updates: { 'floe.maintenance.max-groups-per-run': '1' } }],
    );
    // Act
    const p = await plan('capped');
    // Assess
    expect(p.groups).toHaveLength(1);
    expect(p.groups[0]).toMatchObject({ index: 0, partition: 'category=alpha' });
    expect(p.groups[0].files).toHaveLength(6);
  });

  it('plans nothing for a table whose files are already at size', async () => {
    // Prepare
    await ingest(4);
    const p = await plan('run-6');
    await commitRewrite(catalog, EVENTS_ID, p, await compactAll(p));
    // Act
    const next = await plan('run-7');
    // Assess
    expect(next.groups).toEqual([]);
    expect((await planScan(await catalog.loadTable(EVENTS_ID))).tasks).toHaveLength(4);
  });
});

describe('compaction with a sort order', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
  });
  afterEach(() => cleanup());

  it('writes each new file sorted by the table’s sort order and records the order id', async () => {
    // Prepare: amount descending, so the sorted order differs from the ingest order
    await createEventsTable(
      catalog,
      {},
      {
        'order-id': 1,
        fields: [{ 'source-id': 3, transform: 'identity', direction: 'desc', 'null-order': 'nulls-last' }],
      },
    );
    for (let b = 0; b < 5; b++) await appendBatch(catalog, eventRows(b * 10 + 1, b * 10 + 10), b * 10 + 10);
    const table = await catalog.loadTable(EVENTS_ID);
    const { plan } = await planCompaction(table, resolveSettings(table.metadata), 'sorted', 'lake.events');
    const outcomes: GroupOutcome[] = [];
    for (const g of plan!.groups) outcomes.push(await compactGroup(table, plan!, g.index));
    // Act
    await commitRewrite(catalog, EVENTS_ID, plan!, outcomes);
    // Assess
    const after = await catalog.loadTable(EVENTS_ID);
    for (const e of await liveEntries(after)) {
      expect(e.data_file.sort_order_id).toBe(1);
      const amounts = (await readDataFile(after.io, e.data_file.file_path, EVENTS_SCHEMA)).map(
        (r) => r.amount as number,
      );
      expect(amounts).toEqual([...amounts].sort((a, b) => b - a));
      expect(amounts.length).toBeGreaterThan(1);
    }
  });
});
