/**
 * Row lineage on commits to a format-version 3 table (spec, "Row Lineage"): the snapshot's first-row-id
 * is the base's next-row-id, data manifests without a first_row_id take the next ids in list order,
 * added-rows is how many were handed out, and next-row-id moves past them; a rebase on a newer base
 * assigns them again from there. Manifest lists and manifests are read back with avsc.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ValidationError } from '../../../functions/core/errors.js';
import { readManifestEntries } from '../../../functions/core/manifest/manifest-reader.js';
import { readManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { UnsupportedFeatureError } from '../../../functions/core/spec/format-version.js';
import { currentSnapshot, newTableMetadata } from '../../../functions/core/spec/metadata.js';
import type { DataFile } from '../../../functions/core/spec/types.js';
import { type CommitAction, commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { readAvroWithAvsc } from '../../support/avsc-read.js';
import {
  fakeDataFile,
  FaultyCatalog,
  ORDERS_ID,
  SIMPLE_SCHEMA,
  tempWarehouse,
} from '../../support/tables.js';

const append = (files: DataFile[]): CommitAction => ({
  prepare: (base: LoadedTable) =>
    prepareSnapshot(base, { operation: 'append', addedDataFiles: files, addedDeleteFiles: [] }),
});

const noSleep = { sleep: async () => {} };

describe('row lineage on a format-version 3 table', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  let table: LoadedTable;

  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
    table = await catalog.createTable(ORDERS_ID, {
      schema: SIMPLE_SCHEMA,
      properties: { 'format-version': '3', 'commit.manifest.min-count-to-merge': '3' },
    });
  });
  afterEach(() => cleanup());

  it('is created as v3 with next-row-id 0, format-version not kept as a property', () => {
    // Assess
    expect(table.metadata['format-version']).toBe(3);
    expect(table.metadata['next-row-id']).toBe(0);
    expect(table.metadata.properties['format-version']).toBeUndefined();
  });

  it('refuses to create a format version floe does not write', () => {
    // Act
    const create = () =>
      newTableMetadata({ location: '/t', schema: SIMPLE_SCHEMA, properties: { 'format-version': '4' } });

    // Assess
    expect(create).toThrow(ValidationError);
    expect(create).toThrow(/format-version '4': floe creates format-version 2 or 3 tables/);
  });

  it('assigns first-row-id, added-rows and next-row-id commit by commit, and writes v3 files', async () => {
    // Act
    const first = await commitWithRetry(catalog, ORDERS_ID, append([fakeDataFile(table, 'a', 10)]));
    const second = await commitWithRetry(
      catalog,
      ORDERS_ID,
      append([fakeDataFile(table, 'b', 5), fakeDataFile(table, 'c', 7)]),
    );

    // Assess: snapshots and the table
    const md = second.table.metadata;
    const [s1, s2] = md.snapshots;
    expect([s1['first-row-id'], s1['added-rows']]).toEqual([0, 10]);
    expect([s2['first-row-id'], s2['added-rows']]).toEqual([10, 12]);
    expect(md['next-row-id']).toBe(22);
    expect(first.table.metadata['next-row-id']).toBe(10);
    // Assess: the manifest list, by avsc: v3 header, first_row_id per data manifest (new one first)
    const list = await readAvroWithAvsc(currentSnapshot(md)!['manifest-list']);
    expect(list.metadata['format-version']).toBe('3');
    expect(list.records.map((r) => [r.first_row_id, r.added_rows_count, r.existing_rows_count])).toEqual([
      [10n, 12n, 0n],
      [0n, 10n, 0n],
    ]);
    // Assess: the manifests are v3, and their files inherit ids as the spec says
    const manifest = await readAvroWithAvsc(String(list.records[0].manifest_path));
    expect(manifest.metadata['format-version']).toBe('3');
    const entries = (
      await Promise.all(
        (
          await readManifestList(second.table.io, s2['manifest-list'])
        ).map((m) => readManifestEntries(second.table.io, m)),
      )
    ).flat();
    expect(entries.map((e) => [e.data_file.file_path.split('/').pop(), e.data_file.first_row_id])).toEqual([
      ['b.parquet', 10n],
      ['c.parquet', 15n],
      ['a.parquet', 0n],
    ]);
  });

  it('recomputes the ids on the new base when another commit landed first', async () => {
    // Prepare: this writer holds the empty table; another appends 10 rows before its swap
    const faulty = new FaultyCatalog(catalog);
    faulty.beforeCommit = async () => {
      await commitWithRetry(catalog, ORDERS_ID, append([fakeDataFile(table, 'other', 10)]));
    };

    // Act
    const result = await commitWithRetry(faulty, ORDERS_ID, append([fakeDataFile(table, 'mine', 4)]), {
      base: table,
      ...noSleep,
    });

    // Assess
    expect(result.conflicts).toBe(1);
    const mine = currentSnapshot(result.table.metadata)!;
    expect([mine['first-row-id'], mine['added-rows']]).toEqual([10, 4]);
    expect(result.table.metadata['next-row-id']).toBe(14);
  });

  it('keeps the ids of files whose manifests are merged, handing new ids only to the merged manifest', async () => {
    // Prepare: the third append merges (min-count-to-merge 3)
    await commitWithRetry(catalog, ORDERS_ID, append([fakeDataFile(table, 'a', 10)]));
    await commitWithRetry(catalog, ORDERS_ID, append([fakeDataFile(table, 'b', 5)]));

    // Act
    const third = await commitWithRetry(catalog, ORDERS_ID, append([fakeDataFile(table, 'c', 1)]));

    // Assess: a, b keep 0 and 10; the merged manifest (15 existing rows) took ids 16..30, as Java's writer
    const md = third.table.metadata;
    const manifests = await readManifestList(third.table.io, currentSnapshot(md)!['manifest-list']);
    expect(manifests.map((m) => [m.added_rows_count, m.existing_rows_count, m.first_row_id])).toEqual([
      [1n, 0n, 15n],
      [0n, 15n, 16n],
    ]);
    const merged = await readManifestEntries(third.table.io, manifests[1]);
    expect(merged.map((e) => [e.status, e.data_file.first_row_id])).toEqual([
      [0, 10n],
      [0, 0n],
    ]);
    expect([currentSnapshot(md)!['added-rows'], md['next-row-id']]).toEqual([16, 31]);
  });

  it('refuses a Parquet position delete file: v3 deletes by position with deletion vectors', async () => {
    // Prepare
    const deletes: DataFile = { ...fakeDataFile(table, 'pos-deletes', 1), content: 1 };

    // Act
    const commit = commitWithRetry(catalog, ORDERS_ID, {
      prepare: (base) =>
        prepareSnapshot(base, { operation: 'overwrite', addedDataFiles: [], addedDeleteFiles: [deletes] }),
    });

    // Assess
    await expect(commit).rejects.toBeInstanceOf(UnsupportedFeatureError);
    await expect(commit).rejects.toThrow(/takes position deletes as deletion vectors, not PARQUET/);
    expect((await catalog.loadTable(ORDERS_ID)).metadata.snapshots).toEqual([]);
  });
});
