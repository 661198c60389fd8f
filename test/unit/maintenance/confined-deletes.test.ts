/**
 * Maintenance deletes only what is the table's own (issue 20, items 1–3): orphan removal and snapshot
 * expiry never delete a file of another table or outside the table's location, whatever its metadata
 * says; such paths are reported, not deleted.
 */
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ValidationError } from '../../../functions/core/errors.js';
import { expireSnapshots } from '../../../functions/core/maintenance/expire-snapshots.js';
import { removeOrphansTask } from '../../../functions/core/maintenance/maintenance-tasks.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import { markRemoved } from '../../../functions/core/table/actions/mark-removed.js';
import { removeOrphanFiles } from '../../../functions/core/maintenance/remove-orphans.js';
import { readSnapshotManifests } from '../../../functions/core/table/snapshot-manifests.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { DataFile, TableIdentifier } from '../../../functions/core/spec/types.js';
import { commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { LocationLyingCatalog, nestTables, tamperMetadata } from '../../support/tampering.js';
import { appendBatch, BY_CATEGORY, EVENTS_SCHEMA, eventRows, liveIds } from './maintenance-fixture.js';

const DAY = 86_400_000;
const PARENT: TableIdentifier = { namespace: ['a'], name: 'b' };
const CHILD: TableIdentifier = { namespace: ['a', 'b'], name: 'c' };
const EVENTS: TableIdentifier = { namespace: ['lake'], name: 'events' };
const OTHER: TableIdentifier = { namespace: ['lake'], name: 'other' };

describe('maintenance deletes only the table’s own files', () => {
  let root: string;
  let warehouse: string;
  let catalog: EmbeddedCatalog;
  const later = () => Date.now() + DAY;

  beforeEach(async () => {
    // The warehouse sits one level down so that its parent is a folder of this test alone.
    root = await mkdtemp(join(tmpdir(), 'floe-confined-'));
    warehouse = join(root, 'wh');
    catalog = new EmbeddedCatalog({ warehouse });
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  async function fill(id: TableIdentifier, batches = 2): Promise<void> {
    await catalog.createTable(id, {
      schema: EVENTS_SCHEMA,
      partitionSpec: BY_CATEGORY,
      properties: { 'write.avro.compression-codec': 'uncompressed' },
    });
    for (let b = 0; b < batches; b++)
      await appendBatch(catalog, eventRows(b * 4 + 1, b * 4 + 4), b * 4 + 4, id);
  }

  async function filesUnder(folder: string): Promise<string[]> {
    return (await catalog.io.list(folder)).map((f) => f.location);
  }

  async function allExist(locations: string[]): Promise<string[]> {
    const missing: string[] = [];
    for (const l of locations) if (!(await catalog.io.exists(l))) missing.push(l);
    return missing;
  }

  async function age(folder: string): Promise<void> {
    const old = (Date.now() - 10 * DAY) / 1000;
    for (const f of await catalog.io.list(folder)) await utimes(f.location, old, old);
  }

  it('orphan removal of a.b leaves table a.b.c, nested in its folder, whole (item 1)', async () => {
    // Prepare: a warehouse from before the nesting check
    await nestTables(catalog, PARENT, CHILD, (id) => fill(id));
    const childFiles = await filesUnder(catalog.tableLocation(CHILD));
    const childIds = await liveIds(catalog, CHILD);
    await writeFile(join(catalog.tableLocation(PARENT), 'data', 'stray.parquet'), 'x');
    await age(warehouse);
    // Act
    const result = await removeOrphanFiles(await catalog.loadTable(PARENT), {
      olderThanMs: DAY,
      nowMs: later(),
    });
    // Assess
    expect(await allExist(childFiles)).toEqual([]);
    expect(await liveIds(catalog, CHILD)).toEqual(childIds);
    expect(result.removed).toBe(1);
    expect(await catalog.io.exists(join(catalog.tableLocation(PARENT), 'data', 'stray.parquet'))).toBe(false);
  });

  it('the embedded catalog refuses a table whose location was edited to the warehouse’s parent (item 2)', async () => {
    // Prepare
    await fill(EVENTS);
    await fill(OTHER);
    const unrelated = join(root, 'notes.txt');
    await writeFile(unrelated, 'not a table file');
    await tamperMetadata(catalog, EVENTS, (md) => {
      md.location = root;
    });
    const everything = await filesUnder(root);
    await age(root);
    // Act
    const run = removeOrphansTask({ catalog, now: later }, { table: 'lake.events', orphanFileAgeMs: DAY });
    // Assess
    await expect(run).rejects.toThrow(ValidationError);
    await expect(run).rejects.toThrow(/lake\.events.*location/);
    expect(await allExist(everything)).toEqual([]);
  });

  it('a location taken on trust (a REST catalog’s) cannot widen orphan removal (item 2)', async () => {
    // Prepare: the catalog says the table lives in the warehouse's parent
    await fill(EVENTS);
    await fill(OTHER);
    const unrelated = join(root, 'notes.txt');
    await writeFile(unrelated, 'not a table file');
    await writeFile(join(root, 'data-stray.bin'), 'x');
    const lying = new LocationLyingCatalog(catalog, new Map([['lake.events', root]]));
    const everything = await filesUnder(root);
    await age(root);
    // Act
    const result = await removeOrphansTask(
      { catalog: lying, now: later },
      { table: 'lake.events', orphanFileAgeMs: DAY },
    );
    // Assess
    expect(await allExist(everything)).toEqual([]);
    expect(result).toMatchObject({ status: 'skipped', removed: 0 });
    expect(result.skipped).toMatch(/does not hold its current metadata.*cannot confirm/);
    expect(await liveIds(catalog, OTHER)).toHaveLength(8);
  });

  it('a location taken on trust that holds other tables keeps their files (item 2)', async () => {
    // Prepare: the catalog says lake.events lives at the warehouse root, which holds every table
    await fill(EVENTS);
    await fill(OTHER);
    const lying = new LocationLyingCatalog(catalog, new Map([['lake.events', warehouse]]));
    const table = await lying.loadTable(EVENTS);
    const everything = await filesUnder(warehouse);
    await age(warehouse);
    // Act
    const result = await removeOrphanFiles(table, { olderThanMs: DAY, nowMs: later() });
    // Assess
    expect(await allExist(everything)).toEqual([]);
    expect(result.removed).toBe(0);
  });

  it('expiry never deletes another table’s files an expired snapshot’s manifest list points at (item 3)', async () => {
    // Prepare: an old snapshot of lake.events names lake.other's manifest list
    await fill(EVENTS, 3);
    await fill(OTHER);
    const other = await catalog.loadTable(OTHER);
    const otherFiles = await filesUnder(catalog.tableLocation(OTHER));
    const otherIds = await liveIds(catalog, OTHER);
    const foreignList = currentSnapshot(other.metadata)!['manifest-list'];
    await tamperMetadata(catalog, EVENTS, (md) => {
      md.snapshots[0] = { ...md.snapshots[0], 'manifest-list': foreignList };
    });
    // Act
    const result = await expireSnapshots(
      catalog,
      EVENTS,
      (md) => resolveSettings(md, { maxSnapshotAgeMs: 0, minSnapshotsToKeep: 1 }),
      { nowMs: later() },
    );
    // Assess
    expect(result.snapshotsExpired).toBe(2);
    expect(await allExist(otherFiles)).toEqual([]);
    expect(await liveIds(catalog, OTHER)).toEqual(otherIds);
    expect(result.refused).toBeGreaterThan(0);
    expect(result.refusedSample.map((r) => r.location)).toContain(foreignList);
  });

  it('expiry never deletes another table’s data file, nor one outside the warehouse, that a manifest names (item 3)', async () => {
    // Prepare: lake.events once held lake.other's data file and a file outside the warehouse, then dropped them
    await fill(EVENTS, 1);
    await fill(OTHER);
    const other = await catalog.loadTable(OTHER);
    const foreign = (await readSnapshotManifests(other.io, currentSnapshot(other.metadata)!))[0].entries[0]
      .data_file;
    const outside = join(root, 'outside.parquet');
    await writeFile(outside, 'x');
    const borrowed: DataFile[] = [foreign, { ...foreign, file_path: outside }];
    await commitWithRetry(catalog, EVENTS, {
      prepare: (base) =>
        prepareSnapshot(base, { operation: 'append', addedDataFiles: borrowed, addedDeleteFiles: [] }),
    });
    const events = await catalog.loadTable(EVENTS);
    const manifests = await readSnapshotManifests(events.io, currentSnapshot(events.metadata)!);
    const loaded = new Map(manifests.map((m) => [m.manifest.manifest_path, m]));
    const remove = new Set(borrowed.map((f) => f.file_path));
    await commitWithRetry(catalog, EVENTS, {
      prepare: (base) =>
        prepareSnapshot(base, {
          operation: 'delete',
          addedDataFiles: [],
          addedDeleteFiles: [],
          rewriteExisting: (b, carried, id) => markRemoved(b, carried, loaded, id, remove),
        }),
    });
    // Act
    const result = await expireSnapshots(
      catalog,
      EVENTS,
      (md) => resolveSettings(md, { maxSnapshotAgeMs: 0, minSnapshotsToKeep: 1 }),
      { nowMs: later() },
    );
    // Assess
    expect(await catalog.io.exists(foreign.file_path)).toBe(true);
    expect(await catalog.io.exists(outside)).toBe(true);
    expect(await liveIds(catalog, OTHER)).toHaveLength(8);
    expect(result.refusedSample.map((r) => r.location).sort()).toEqual([...remove].sort());
    expect(dirname(outside)).toBe(root);
  });
});
