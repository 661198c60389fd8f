import { utimes, writeFile } from 'node:fs/promises';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { expireSnapshots } from '../../../functions/core/maintenance/expire-snapshots.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import { markRemoved } from '../../../functions/core/table/actions/mark-removed.js';
import { normalizeLocation, removeOrphanFiles } from '../../../functions/core/maintenance/remove-orphans.js';
import { readSnapshotManifests } from '../../../functions/core/table/snapshot-manifests.js';
import { readManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { fakeDataFile, ORDERS_ID, SIMPLE_SCHEMA, tempWarehouse } from '../../support/tables.js';

type Op =
  | { kind: 'append'; files: number }
  | { kind: 'remove'; pick: number }
  | { kind: 'expire'; keep: number }
  | { kind: 'junk'; dir: 'data' | 'metadata' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('append' as const), files: fc.integer({ min: 1, max: 3 }) }),
  },
  fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('expire' as const), keep: fc.integer({ min: 1, max: 3 }) }),
  fc.record({
    kind: fc.constant('junk' as const),
    dir: fc.constantFrom('data' as const, 'metadata' as const),
  }),
);

const HOUR = 3_600_000;

/** Everything a reader of any snapshot still in the metadata needs, found through the scan planner. */
async function neededFiles(table: LoadedTable): Promise<Set<string>> {
  const md = table.metadata;
  const needed = new Set<string>([
    table.metadataLocation,
    ...md['metadata-log'].map((e) => e['metadata-file']),
  ]);
  for (const s of md.snapshots) {
    needed.add(s['manifest-list']);
    for (const m of await readManifestList(table.io, s['manifest-list'])) needed.add(m.manifest_path);
    for (const t of (await planScan(table, { snapshotId: s['snapshot-id'] })).tasks) {
      needed.add(t.file.file_path);
      for (const d of t.deletes) needed.add(d.file.file_path);
    }
  }
  return new Set([...needed].map(normalizeLocation));
}

describe('orphan file removal', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  let counter = 0;

  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
  });
  afterEach(() => cleanup());

  async function apply(op: Op): Promise<void> {
    const table = await catalog.loadTable(ORDERS_ID);
    if (op.kind === 'append') {
      const files = Array.from({ length: op.files }, () => fakeDataFile(table, `f${counter++}`));
      for (const f of files) await table.io.write(f.file_path, new Uint8Array(16));
      await commitWithRetry(catalog, ORDERS_ID, {
        prepare: (base) =>
          prepareSnapshot(base, { operation: 'append', addedDataFiles: files, addedDeleteFiles: [] }),
      });
    } else if (op.kind === 'remove') {
      const snapshot = currentSnapshot(table.metadata);
      if (!snapshot) return;
      const manifests = await readSnapshotManifests(table.io, snapshot);
      const live = manifests.flatMap((m) =>
        m.entries.filter((e) => e.status !== 2).map((e) => e.data_file.file_path),
      );
      if (live.length === 0) return;
      const remove = new Set([live[op.pick % live.length]]);
      const loaded = new Map(manifests.map((m) => [m.manifest.manifest_path, m]));
      await commitWithRetry(catalog, ORDERS_ID, {
        prepare: (base) =>
          prepareSnapshot(base, {
            operation: 'delete',
            addedDataFiles: [],
            addedDeleteFiles: [],
            rewriteExisting: (b, carried, id) => markRemoved(b, carried, loaded, id, remove),
          }),
      });
    } else if (op.kind === 'expire') {
      await expireSnapshots(catalog, ORDERS_ID, (md) =>
        resolveSettings(md, { maxSnapshotAgeMs: 0, minSnapshotsToKeep: op.keep }),
      );
    } else {
      await table.io.write(`${table.metadata.location}/${op.dir}/junk-${counter++}.bin`, new Uint8Array(8));
    }
  }

  it('never removes a file a retained snapshot needs, nor one younger than the window', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 2, maxLength: 8 }),
        fc.array(fc.integer({ min: 0, max: 10 * 24 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 5 * 24 }),
        async (ops, agesInHours, windowHours) => {
          // Prepare: a table with a random history, random file ages
          await cleanup();
          ({ catalog, cleanup } = await tempWarehouse());
          await catalog.createTable(ORDERS_ID, {
            schema: SIMPLE_SCHEMA,
            properties: { 'write.avro.compression-codec': 'uncompressed' },
          });
          for (const op of ops) await apply(op);
          const table = await catalog.loadTable(ORDERS_ID);
          const now = Math.floor(Date.now() / 1000) * 1000;
          const listed = await table.io.list(table.metadata.location);
          const mtime = new Map<string, number>();
          for (const [i, f] of listed.entries()) {
            const t = now - agesInHours[i % agesInHours.length] * HOUR;
            await utimes(f.location, t / 1000, t / 1000);
            mtime.set(f.location, t);
          }
          const needed = await neededFiles(table);
          // Act
          const result = await removeOrphanFiles(table, { olderThanMs: windowHours * HOUR, nowMs: now });
          // Assess
          const remaining = new Set((await table.io.list(table.metadata.location)).map((f) => f.location));
          const removed = listed.map((f) => f.location).filter((l) => !remaining.has(l));
          expect(removed).toHaveLength(result.removed);
          for (const location of removed) {
            expect(needed.has(normalizeLocation(location)), location).toBe(false);
            expect(mtime.get(location)!, location).toBeLessThan(now - windowHours * HOUR);
          }
          for (const location of needed) {
            if (location.startsWith(table.metadata.location))
              expect(remaining.has(location), location).toBe(true);
          }
          for (const l of listed.map((f) => f.location).filter((x) => x.includes('/junk-'))) {
            expect(remaining.has(l), l).toBe(mtime.get(l)! >= now - windowHours * HOUR);
          }
          expect((await catalog.loadTable(ORDERS_ID)).metadataLocation).toBe(table.metadataLocation);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('lists orphans in a dry run without deleting, and never touches the embedded catalog’s version files', async () => {
    // Prepare
    const table = await catalog.createTable(ORDERS_ID, { schema: SIMPLE_SCHEMA });
    await apply({ kind: 'append', files: 2 });
    const junk = `${table.metadata.location}/data/stray.parquet`;
    await writeFile(junk, 'x');
    const old = (Date.now() - 10 * 24 * HOUR) / 1000;
    for (const f of await table.io.list(table.metadata.location)) await utimes(f.location, old, old);
    const loaded = await catalog.loadTable(ORDERS_ID);
    // Act
    const dry = await removeOrphanFiles(loaded, { olderThanMs: 3 * 24 * HOUR, dryRun: true });
    const real = await removeOrphanFiles(loaded, { olderThanMs: 3 * 24 * HOUR });
    // Assess
    expect(dry).toMatchObject({ status: 'dry-run', orphans: 1, removed: 0, sample: [junk] });
    expect(real).toMatchObject({ status: 'removed', orphans: 1, removed: 1 });
    expect(await loaded.io.exists(junk)).toBe(false);
    expect(await loaded.io.exists(`${table.metadata.location}/metadata/v1.metadata.json`)).toBe(true);
    expect(await loaded.io.exists(`${table.metadata.location}/metadata/version-hint.text`)).toBe(true);
  });

  it('treats file:// and plain paths, s3a:// and s3:// as the same files', () => {
    expect(normalizeLocation('file:///w/t/a.parquet')).toBe('/w/t/a.parquet');
    expect(normalizeLocation('file:/w/t/a.parquet')).toBe('/w/t/a.parquet');
    expect(normalizeLocation('file://localhost/w/t/a.parquet')).toBe('/w/t/a.parquet');
    expect(normalizeLocation('s3a://b/w/t/a.parquet')).toBe('s3://b/w/t/a.parquet');
    expect(normalizeLocation('s3://b/w//t/a.parquet')).toBe('s3://b/w/t/a.parquet');
  });
});
