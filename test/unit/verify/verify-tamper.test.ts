/**
 * `floe verify` fails, naming the cause, on a table damaged in each of the ways the sink's users meet:
 * a manifest entry duplicated (a file registered twice), a file deleted, a row duplicated with its
 * `_kafka` lineage, a committed range widened in the summary, a summary total changed — and a row
 * deleted, and a row the committed ranges do not hold. Each starts from a table verify passes.
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { readManifestEntries } from '../../../functions/core/manifest/manifest-reader.js';
import { readManifestList, writeManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { writeManifest } from '../../../functions/core/manifest/manifest-writer.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSchema, currentSnapshot, specById } from '../../../functions/core/spec/metadata.js';
import { OFFSETS_KEY } from '../../../functions/core/table/source-offsets.js';
import { writeRows } from '../../../functions/core/table/write-rows.js';
import { verifyTable } from '../../../functions/core/verify/verify-table.js';
import { jsonEvent } from '../../support/json-event.js';
import { tempWarehouse } from '../../support/tables.js';
import { tamperMetadata } from '../../support/tampering.js';
import { commitFiles, commitPositionDeletes } from '../maintenance/maintenance-fixture.js';

const ID = { namespace: ['app'], name: 'clicks' };
const ROUTE: TableRoute = {
  table: ID,
  topics: ['clicks'],
  schema: {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'page', required: false, type: 'string' },
    ],
  },
  kafkaLineage: true,
  properties: {},
};

/** Writes the current snapshot's first data manifest again with its first live entry twice. */
async function duplicateManifestEntry(catalog: EmbeddedCatalog): Promise<string> {
  const table = await catalog.loadTable(ID);
  const snapshot = currentSnapshot(table.metadata)!;
  const manifests = await readManifestList(table.io, snapshot['manifest-list']);
  const target = manifests.findIndex((m) => m.content === 0);
  const entries = await readManifestEntries(table.io, manifests[target]);
  const twice = [...entries, { ...entries[0], status: 0 as const }];
  manifests[target] = await writeManifest({
    io: table.io,
    location: `${table.metadata.location}/metadata/tampered-m0.avro`,
    schema: currentSchema(table.metadata),
    spec: specById(table.metadata, manifests[target].partition_spec_id),
    content: 0,
    snapshotId: snapshot['snapshot-id'],
    entries: twice,
  });
  await writeManifestList({
    io: table.io,
    location: snapshot['manifest-list'],
    snapshotId: snapshot['snapshot-id'],
    parentSnapshotId: snapshot['parent-snapshot-id'] ?? null,
    sequenceNumber: BigInt(snapshot['sequence-number']),
    manifests,
  });
  return entries[0].data_file.file_path;
}

describe('floe verify on tampered tables', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  let out: string;
  let err: string;
  beforeEach(async () => {
    wh = await tempWarehouse();
    // Two batches on partition 0 (offsets 0-2, 3-5) and one on partition 1 (offsets 0-1).
    const options = { catalog: wh.catalog, routes: [ROUTE] };
    await ingestEvent(
      options,
      jsonEvent(
        'clicks',
        [1, 2, 3].map((id) => ({ id, page: 'a' })),
      ),
    );
    await ingestEvent(
      options,
      jsonEvent(
        'clicks',
        [4, 5, 6].map((id) => ({ id })),
        { firstOffset: 3 },
      ),
    );
    await ingestEvent(
      options,
      jsonEvent(
        'clicks',
        [7, 8].map((id) => ({ id })),
        { partition: 1 },
      ),
    );
    out = '';
    err = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out += String(chunk);
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err += String(chunk);
      return true;
    });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await wh.cleanup();
  });

  const verify = (...flags: string[]) =>
    main(['verify', '--warehouse', wh.dir, '--table', 'app.clicks', ...flags]);

  it('passes on the table as floe wrote it', async () => {
    expect(await verify('--deep'), out + err).toBe(0);
    expect(out).toMatch(/rows-read 8\b/);
  });

  it('checks an older snapshot against the offsets committed as of it', async () => {
    // Prepare: the first snapshot held clicks/0 offsets 0-2 only; the current one's total is tampered
    const md = (await wh.catalog.loadTable(ID)).metadata;
    const first = md.snapshots[0]['snapshot-id'];
    await tamperMetadata(wh.catalog, ID, (m) => {
      currentSnapshot(m)!.summary['total-records'] = '7';
    });
    // Act
    const older = await verify('--deep', '--snapshot', String(first));
    const olderOut = out;
    out = '';
    const current = await verify();
    // Assess
    expect(older, olderOut).toBe(0);
    expect(olderOut).toMatch(new RegExp(`at snapshot ${first} \\(deep\\): .*rows-read 3\\b`));
    expect(current).toBe(1);
    expect(await verify('--snapshot', '123')).toBe(1);
    expect(err).toContain('app.clicks has no snapshot 123');
  });

  it('names a data file registered twice among the live entries', async () => {
    // Prepare
    const path = await duplicateManifestEntry(wh.catalog);
    // Act
    const code = await verify();
    // Assess
    expect(code).toBe(1);
    expect(out).toMatch(/FINDING duplicate-file: data file registered twice among the live entries/);
    expect(out).toContain(`where: ${path}`);
  });

  it('names a data file that is gone', async () => {
    // Prepare
    const table = await wh.catalog.loadTable(ID);
    const [task] = (await planScan(table)).tasks;
    const path = task.file.file_path;
    await rm(path.startsWith('file:') ? fileURLToPath(path) : path);
    // Act
    const code = await verify('--deep');
    // Assess
    expect(code).toBe(1);
    expect(out).toMatch(/FINDING missing-file: data file does not exist\n {2}where: .*\n {2}count: 1/);
    expect(out).toContain(task.file.file_path);
    expect(out).toContain('deep checks (offsets, keys) were skipped');
  });

  it('names the offset of a row written again with its _kafka lineage', async () => {
    // Prepare: another writer appends a copy of the row at clicks/0 offset 4
    const table = await wh.catalog.loadTable(ID);
    const rows = await readScanRows(table, await planScan(table));
    const copy = rows.find((r) => (r._kafka as { offset: bigint; partition: number }).offset === 4n)!;
    await commitFiles(wh.catalog, 'append', await writeRows(table, [copy]), [], ID);
    // Act
    const shallow = await verify();
    const shallowOut = out;
    out = '';
    const deep = await verify('--deep');
    // Assess: the metadata is sound; the rows are not
    expect(shallow, shallowOut).toBe(0);
    expect(deep).toBe(1);
    expect(out).toMatch(
      /FINDING duplicate-offset: 1 offset\(s\) held by more than one live row of app\.clicks/,
    );
    expect(out).toContain('where: clicks/0 offsets 4\n  count: 1');
  });

  it('names committed offsets no batch delivered when a range is widened in the summary', async () => {
    // Prepare: clicks/0 committed 0-5; the summary now claims 0-9
    await tamperMetadata(wh.catalog, ID, (md) => {
      const snapshot = currentSnapshot(md)!;
      snapshot.summary[OFFSETS_KEY] = JSON.stringify({ clicks: { '0': '0-9', '1': '0-1' } });
    });
    // Act
    const code = await verify('--deep', '--allow-holes');
    // Assess: a range past its last marked record is a finding even where holes are allowed
    expect(code).toBe(1);
    expect(out).toMatch(/FINDING uncovered-range: committed offsets past the last record their batch marked/);
    expect(out).toContain('where: clicks/0 offsets 6-9\n  count: 4');
  });

  it('names a changed summary total', async () => {
    // Prepare
    await tamperMetadata(wh.catalog, ID, (md) => {
      currentSnapshot(md)!.summary['total-records'] = '9';
    });
    // Act
    const code = await verify('--json');
    // Assess
    expect(code).toBe(1);
    const report = JSON.parse(out);
    expect(report.findings).toEqual([
      {
        check: 'summary-total',
        what: 'the summary says total-records = 9, the live manifest entries give 8',
        where: `snapshot ${currentSnapshot((await wh.catalog.loadTable(ID)).metadata)!['snapshot-id']} summary total-records`,
        count: 1,
      },
    ]);
  });

  it('names the offset of a row deleted after it was committed, unless holes are allowed', async () => {
    // Prepare: a position delete removes the middle row of a file of clicks/0 (offset 1 or 4)
    const table = await wh.catalog.loadTable(ID);
    const file = (await planScan(table)).tasks.find((t) => t.file.record_count === 3n)!.file;
    await commitPositionDeletes(wh.catalog, file, [1], ID);
    // Act
    const strict = await verify('--deep');
    const strictOut = out;
    out = '';
    const lenient = await verify('--deep', '--allow-holes');
    // Assess
    expect(strict).toBe(1);
    expect(strictOut).toMatch(
      /FINDING missing-offsets: committed offsets with no live row and no dead letter/,
    );
    expect(strictOut).toMatch(/where: clicks\/0 offsets [14]\n {2}count: 1/);
    expect(lenient, out).toBe(0);
    expect(out).toMatch(/note: 1 committed offset\(s\) in 1 gap\(s\) hold no live row/);
  });

  it('names committed offsets that are not text floe wrote', async () => {
    // Prepare
    await tamperMetadata(wh.catalog, ID, (md) => {
      currentSnapshot(md)!.summary[OFFSETS_KEY] = JSON.stringify({ clicks: { '0': '5-1' } });
    });
    // Act
    const code = await verify('--deep');
    // Assess
    expect(code).toBe(1);
    expect(out).toMatch(
      /FINDING summary-offsets: the committed offsets cannot be read: .*bad offset range '5-1'/,
    );
  });

  it('names live rows the committed ranges do not hold', async () => {
    // Prepare: clicks/1's committed range narrowed to offset 0
    await tamperMetadata(wh.catalog, ID, (md) => {
      currentSnapshot(md)!.summary[OFFSETS_KEY] = JSON.stringify({ clicks: { '0': '0-5', '1': '0-0' } });
    });
    // Act
    const code = await verify('--deep');
    // Assess
    expect(code).toBe(1);
    expect(out).toMatch(
      /FINDING uncommitted-row: live rows at offsets the table's committed ranges do not hold/,
    );
    expect(out).toContain('where: clicks/1 offsets 1\n  count: 1');
  });

  it('names a key held by two live rows of an upsert table', async () => {
    // Prepare: user 1 written at offset 0 and replaced at offset 2; a writer brings the old version back
    const id = { namespace: ['app'], name: 'profiles' };
    const route: TableRoute = {
      ...ROUTE,
      table: id,
      topics: ['profiles'],
      mode: 'upsert',
      identifierColumns: ['id'],
    };
    const key = (v: unknown) => String((v as { id: number }).id);
    const options = { catalog: wh.catalog, routes: [route] };
    await ingestEvent(
      options,
      jsonEvent(
        'profiles',
        [
          { id: 1, page: 'a' },
          { id: 2, page: 'b' },
        ],
        { key },
      ),
    );
    await ingestEvent(options, jsonEvent('profiles', [{ id: 1, page: 'c' }], { key, firstOffset: 2 }));
    const table = await wh.catalog.loadTable(id);
    const [live] = (await readScanRows(table, await planScan(table))).filter((r) => r.id === 1n);
    const old = { ...live, page: 'a', _kafka: { ...(live._kafka as object), offset: 0n } };
    await commitFiles(wh.catalog, 'append', await writeRows(table, [old]), [], id);
    // Act: the CLI, and the core holding one key per pass (every key read in its own pass)
    const code = await main(['verify', '--warehouse', wh.dir, '--table', 'app.profiles', '--deep']);
    const bounded = await verifyTable(await wh.catalog.loadTable(id), { deep: true, keysPerPass: 1 });
    // Assess: offset 0 is a replaced version's, inside the committed range: only the key tells
    expect(code).toBe(1);
    expect(out).toMatch(/FINDING duplicate-key: 2 live rows hold the same key \(id\)/);
    expect(out).toContain('where: key 1\n  count: 1');
    expect(out).not.toMatch(/FINDING (duplicate-offset|uncommitted-row)/);
    expect(bounded.counts['key-passes']).toBeGreaterThan(2n);
    expect(bounded.findings.map((f) => [f.check, f.where, f.count])).toEqual([
      ['duplicate-key', 'key 1', 1n],
    ]);
  });

  it('names a manifest whose counts in the manifest list are not its entries', async () => {
    // Prepare: the manifest list claims one more added file for the first manifest
    const table = await wh.catalog.loadTable(ID);
    const snapshot = currentSnapshot(table.metadata)!;
    const manifests = await readManifestList(table.io, snapshot['manifest-list']);
    manifests[0] = { ...manifests[0], added_files_count: manifests[0].added_files_count + 1 };
    await writeManifestList({
      io: table.io,
      location: snapshot['manifest-list'],
      snapshotId: snapshot['snapshot-id'],
      parentSnapshotId: snapshot['parent-snapshot-id'] ?? null,
      sequenceNumber: BigInt(snapshot['sequence-number']),
      manifests,
    });
    // Act
    const code = await verify();
    // Assess
    expect(code).toBe(1);
    expect(out).toMatch(
      /FINDING manifest-counts: the manifest list says added_files_count = 2, the manifest's entries give 1/,
    );
    expect(out).toContain(`where: ${manifests[0].manifest_path}`);
  });

  it('passes on a table with no snapshot yet, saying so', async () => {
    await wh.catalog.createTable({ namespace: ['app'], name: 'empty' }, { schema: ROUTE.schema! });
    expect(await main(['verify', '--warehouse', wh.dir, '--table', 'app.empty', '--deep'])).toBe(0);
    expect(out).toContain('note: the table has no snapshot: nothing to check');
  });

  it('exits 2 on bad usage', async () => {
    expect(await main(['verify', '--warehouse', wh.dir])).toBe(2);
    expect(await verify('--snapshot', 'latest')).toBe(2);
    expect(err).toContain('verify needs --table NS.NAME');
    expect(err).toContain("--snapshot takes a snapshot id (an integer), got 'latest'");
  });
});
