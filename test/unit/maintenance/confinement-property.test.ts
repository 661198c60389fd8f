/**
 * Property (issue 20): in a random warehouse of nested and neighbouring tables with tampered metadata —
 * locations edited (or lied about by a catalog taken on trust), manifest lists and manifests borrowed
 * from other tables, data files of other tables or outside the warehouse once committed and dropped —
 * running every maintenance task on every table deletes, for table T, only files of T's own area: under
 * T's folder and not under another table's folder nested in it. So nothing outside T is deleted, and no
 * file another table reaches in its own area, or anywhere outside T's, is ever deleted by T.
 *
 * A file in T's own area that only a tampered other table still names is T's to delete (as Iceberg's
 * own orphan removal would): ownership is by folder, not by who names the file. Untampered tables keep
 * every row.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Catalog } from '../../../functions/core/catalog/catalog.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { NotFoundError } from '../../../functions/core/errors.js';
import { isWithinLocation } from '../../../functions/core/io/location.js';
import {
  commitTask,
  compactTask,
  expireTask,
  type MaintenanceContext,
  planTask,
  removeOrphansTask,
  rewriteManifestsTask,
} from '../../../functions/core/maintenance/maintenance-tasks.js';
import { markRemoved } from '../../../functions/core/table/actions/mark-removed.js';
import { readSnapshotManifests } from '../../../functions/core/table/snapshot-manifests.js';
import { readManifestList, writeManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { readManifestEntries } from '../../../functions/core/manifest/manifest-reader.js';
import { currentSnapshot, parseTableMetadata } from '../../../functions/core/spec/metadata.js';
import type { DataFile, TableIdentifier } from '../../../functions/core/spec/types.js';
import { commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { createUnchecked, LocationLyingCatalog, tamperMetadata } from '../../support/tampering.js';
import { appendBatch, BY_CATEGORY, EVENTS_SCHEMA, eventRows, liveIds } from './maintenance-fixture.js';

const DAY = 86_400_000;
/** Nested (w.a ⊃ w.a.b ⊃ w.a.b.c), neighbours sharing a prefix (w.ab, w.a-b), and one apart. */
const POOL = ['w.a', 'w.a.b', 'w.a.b.c', 'w.ab', 'w.a-b', 'v.t'];

type Tamper =
  | { kind: 'location'; table: number; to: 'parent' | 'warehouse' | 'neighbour' | 'inside' }
  | { kind: 'manifest-list' | 'manifests'; table: number; from: number }
  | { kind: 'data'; table: number; from: number; outside: boolean };

const tamperArb: fc.Arbitrary<Tamper> = fc.oneof(
  fc.record({
    kind: fc.constant('location' as const),
    table: fc.nat(),
    to: fc.constantFrom('parent' as const, 'warehouse' as const, 'neighbour' as const, 'inside' as const),
  }),
  fc.record({
    kind: fc.constantFrom('manifest-list' as const, 'manifests' as const),
    table: fc.nat(),
    from: fc.nat(),
  }),
  fc.record({ kind: fc.constant('data' as const), table: fc.nat(), from: fc.nat(), outside: fc.boolean() }),
);

const idOf = (text: string): TableIdentifier => {
  const parts = text.split('.');
  return { namespace: parts.slice(0, -1), name: parts[parts.length - 1] };
};

const decoder = new TextDecoder();

/**
 * Every file a table's metadata reaches (read straight from its latest version, trusting nothing). A
 * list or manifest already gone reaches nothing: a tampered table may name another table's files,
 * which that table was free to delete.
 */
async function reachableFrom(catalog: EmbeddedCatalog, name: string): Promise<Set<string>> {
  const folder = join(catalog.tableLocation(idOf(name)), 'metadata');
  const versions = (await catalog.io.list(folder))
    .map((f) => /\/v(\d+)\.metadata\.json$/.exec(f.location))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]));
  const latest = join(folder, `v${Math.max(...versions)}.metadata.json`);
  const md = parseTableMetadata(decoder.decode(await catalog.io.read(latest)));
  const reached = new Set([latest, ...md['metadata-log'].map((e) => e['metadata-file'])]);
  const missing = (error: unknown) => {
    if (error instanceof NotFoundError) return [];
    throw error;
  };
  for (const s of md.snapshots) {
    reached.add(s['manifest-list']);
    for (const m of await readManifestList(catalog.io, s['manifest-list']).catch(missing)) {
      reached.add(m.manifest_path);
      for (const e of await readManifestEntries(catalog.io, m).catch(missing))
        reached.add(e.data_file.file_path);
    }
  }
  return reached;
}

/** Plan → compact → commit → expire → remove orphans → rewrite manifests, as `floe maintain all`. */
async function maintainAll(ctx: MaintenanceContext, table: string): Promise<string[]> {
  const errors: string[] = [];
  const input = { table, maxSnapshotAgeMs: 0, minSnapshotsToKeep: 1, orphanFileAgeMs: 0 };
  const state: Record<string, unknown> = { ...input };
  const step = async (name: string, run: () => Promise<unknown>) => {
    try {
      state[name] = await run();
    } catch (error) {
      errors.push(`${name}: ${String(error)}`);
    }
  };
  await step('plan', () => planTask(ctx, input));
  const plan = state.plan as Awaited<ReturnType<typeof planTask>> | undefined;
  if (plan && plan.groups.length > 0) {
    const rewrites: unknown[] = [];
    await step('rewrites', async () => {
      for (const group of plan.groups) rewrites.push(await compactTask(ctx, { table, group }));
      return rewrites;
    });
    await step('commit', () => commitTask(ctx, state));
  }
  await step('expire', () => expireTask(ctx, state));
  await step('removeOrphans', () => removeOrphansTask(ctx, state));
  await step('rewriteManifests', () => rewriteManifestsTask(ctx, state));
  return errors;
}

describe('maintenance confinement (property)', () => {
  it('deletes only files of the table’s own area, whatever the warehouse holds', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(POOL, { minLength: 2, maxLength: 3 }),
        fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 4, maxLength: 4 }),
        fc.array(tamperArb, { maxLength: 3 }),
        fc.boolean(),
        async (tables, batches, tampers, trust) => {
          // Prepare: the tables, in the order drawn (so nesting arises both ways)
          const root = await mkdtemp(join(tmpdir(), 'floe-confine-'));
          try {
            const warehouse = join(root, 'wh');
            const catalog = new EmbeddedCatalog({ warehouse });
            let offset = 0;
            for (const [i, name] of tables.entries()) {
              await createUnchecked(catalog, idOf(name), async (id) => {
                await catalog.createTable(id, {
                  schema: EVENTS_SCHEMA,
                  partitionSpec: BY_CATEGORY,
                  properties: { 'write.avro.compression-codec': 'uncompressed' },
                });
                for (let b = 0; b < batches[i]; b++) {
                  offset += 4;
                  await appendBatch(catalog, eventRows(offset - 3, offset), offset, id);
                }
              });
            }
            const outside = join(root, 'outside');
            await mkdir(outside, { recursive: true });
            await writeFile(join(outside, 'unrelated.txt'), 'x');
            const lies = new Map<string, string>();
            const tampered = new Set<string>();
            const pick = (n: number) => tables[n % tables.length];
            const other = (self: string, n: number) => {
              const rest = tables.filter((t) => t !== self);
              return rest[n % rest.length];
            };
            // Commits first (they need a true location), then edits of old snapshots, then locations.
            const ordered = [...tampers].sort((a, b) => rank(a) - rank(b));
            for (const [k, t] of ordered.entries()) {
              const name = pick(t.table);
              const id = idOf(name);
              tampered.add(name);
              if (t.kind === 'data') {
                const source = await catalog.loadTable(idOf(other(name, t.from)));
                const foreign = (await readSnapshotManifests(source.io, currentSnapshot(source.metadata)!))[0]
                  .entries[0].data_file;
                const path = t.outside ? join(outside, `borrowed-${k}.parquet`) : foreign.file_path;
                if (t.outside) await writeFile(path, 'x');
                await borrowAndDrop(catalog, id, { ...foreign, file_path: path });
              } else if (t.kind !== 'location') {
                const source = await catalog.loadTable(idOf(other(name, t.from)));
                const sourceList = currentSnapshot(source.metadata)!['manifest-list'];
                let list = sourceList;
                if (t.kind === 'manifests') {
                  // A list in this table's own folder naming the other table's manifests.
                  list = join(catalog.tableLocation(id), 'metadata', `snap-borrowed-${k}.avro`);
                  const table = await catalog.loadTable(id);
                  const snapshot = table.metadata.snapshots[0];
                  await writeManifestList({
                    io: catalog.io,
                    location: list,
                    snapshotId: snapshot['snapshot-id'],
                    parentSnapshotId: null,
                    sequenceNumber: BigInt(snapshot['sequence-number']),
                    manifests: (
                      await readSnapshotManifests(source.io, currentSnapshot(source.metadata)!)
                    ).map((m) => m.manifest),
                  });
                }
                await tamperMetadata(catalog, id, (md) => {
                  md.snapshots[0] = { ...md.snapshots[0], 'manifest-list': list };
                });
              } else {
                const to = {
                  parent: root,
                  warehouse,
                  neighbour: catalog.tableLocation(idOf(other(name, 0))),
                  inside: join(catalog.tableLocation(id), 'data'),
                }[t.to];
                if (trust) lies.set(name, to);
                else if (!lies.has(name) && !(await edited(catalog, id))) {
                  await tamperMetadata(catalog, id, (md) => {
                    md.location = to;
                  });
                }
              }
            }
            const untampered = tables.filter((t) => !tampered.has(t));
            const rows = new Map<string, number[]>();
            for (const t of untampered) rows.set(t, await liveIds(catalog, idOf(t)));
            const lying: Catalog = trust ? new LocationLyingCatalog(catalog, lies) : catalog;
            const ctx: MaintenanceContext = { catalog: lying, now: () => Date.now() + DAY };

            // Act and Assess: one table at a time, checking what each run deleted
            for (const name of tables) {
              const own = catalog.tableLocation(idOf(name));
              const nested = tables
                .filter((t) => t !== name)
                .map((t) => catalog.tableLocation(idOf(t)))
                .filter((l) => isWithinLocation(l, own));
              const othersReach = new Set<string>();
              for (const t of tables.filter((x) => x !== name))
                for (const f of await reachableFrom(catalog, t)) othersReach.add(f);
              const before = (await catalog.io.list(root)).map((f) => f.location);
              const errors = await maintainAll(ctx, name);
              const after = new Set((await catalog.io.list(root)).map((f) => f.location));
              const deleted = before.filter((f) => !after.has(f));
              for (const f of deleted) {
                const ownArea = isWithinLocation(f, own) && !nested.some((n) => isWithinLocation(f, n));
                const whose = othersReach.has(f) ? ', which another table reaches' : '';
                expect(ownArea, `${name} deleted ${f}${whose}: not in its own area`).toBe(true);
              }
              if (!tampered.has(name)) expect(errors, name).toEqual([]);
            }
            expect(await catalog.io.exists(join(outside, 'unrelated.txt'))).toBe(true);
            for (const t of untampered) expect(await liveIds(catalog, idOf(t)), t).toEqual(rows.get(t));
          } finally {
            await rm(root, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 10 },
    );
  }, 240_000);
});

function rank(t: Tamper): number {
  return t.kind === 'data' ? 0 : t.kind === 'location' ? 2 : 1;
}

/** Whether the table's location was already edited (a second edit could not load it). */
async function edited(catalog: EmbeddedCatalog, id: TableIdentifier): Promise<boolean> {
  return catalog.loadTable(id).then(
    () => false,
    () => true,
  );
}

/** Commits `file` into the table, then a snapshot that drops it again (so expiry reaches for it). */
async function borrowAndDrop(catalog: Catalog, id: TableIdentifier, file: DataFile): Promise<void> {
  await commitWithRetry(catalog, id, {
    prepare: (base) =>
      prepareSnapshot(base, { operation: 'append', addedDataFiles: [file], addedDeleteFiles: [] }),
  });
  const table = await catalog.loadTable(id);
  const manifests = await readSnapshotManifests(table.io, currentSnapshot(table.metadata)!);
  const loaded = new Map(manifests.map((m) => [m.manifest.manifest_path, m]));
  await commitWithRetry(catalog, id, {
    prepare: (base) =>
      prepareSnapshot(base, {
        operation: 'delete',
        addedDataFiles: [],
        addedDeleteFiles: [],
        rewriteExisting: (b, carried, snapshotId) =>
          markRemoved(b, carried, loaded, snapshotId, new Set([file.file_path])),
      }),
  });
}
