/**
 * floe writes format-version 3 tables with row lineage, except those with a column type its writers
 * lack (timestamp_ns, …): every change to such a table is refused before anything is prepared, and
 * nothing lands. A table another engine upgraded from v2 is written on as v3.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { removeOrphanFiles } from '../../../functions/core/maintenance/remove-orphans.js';
import { UnsupportedFeatureError } from '../../../functions/core/spec/format-version.js';
import { serializeTableMetadata } from '../../../functions/core/spec/metadata.js';
import type { DataFile } from '../../../functions/core/spec/types.js';
import { type CommitAction, commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { fakeDataFile, ORDERS_ID, SIMPLE_SCHEMA, tempWarehouse } from '../../support/tables.js';

function appendAction(files: DataFile[]): CommitAction & { prepared: number } {
  const action = {
    prepared: 0,
    prepare: async (base: LoadedTable) => {
      action.prepared++;
      return prepareSnapshot(base, { operation: 'append', addedDataFiles: files, addedDeleteFiles: [] });
    },
  };
  return action;
}

const REFUSAL = /column 'ts' has type 'timestamp_ns', which floe reads but does not write yet/;

describe('a format-version 3 table', () => {
  let catalog: EmbeddedCatalog;
  let dir: string;
  let cleanup: () => Promise<void>;
  let v2: LoadedTable;
  let metadataDir: string;

  beforeEach(async () => {
    ({ catalog, dir, cleanup } = await tempWarehouse());
    v2 = await catalog.createTable(ORDERS_ID, { schema: SIMPLE_SCHEMA });
    metadataDir = join(dir, 'sales', 'orders', 'metadata');
  });
  afterEach(() => cleanup());

  /**
   * Another engine upgrades the table (row lineage from id 0); `withNanos` adds a timestamp_ns column
   * to the current schema.
   */
  const upgradeToV3 = async (withNanos = true) => {
    const schema = {
      ...SIMPLE_SCHEMA,
      fields: [
        ...SIMPLE_SCHEMA.fields,
        { id: 3, name: 'ts', required: false, type: 'timestamp_ns' as const },
      ],
    };
    const upgraded = {
      ...v2.metadata,
      'format-version': 3 as const,
      'next-row-id': 0,
      ...(withNanos ? { schemas: [schema], 'last-column-id': 3 } : {}),
    };
    await writeFile(join(metadataDir, 'v2.metadata.json'), serializeTableMetadata(upgraded));
  };

  it('is read by the catalog as it is', async () => {
    // Prepare
    await upgradeToV3();

    // Act
    const table = await catalog.loadTable(ORDERS_ID);

    // Assess
    expect(table.metadata['format-version']).toBe(3);
    expect(table.metadata['next-row-id']).toBe(0);
  });

  it('refuses a commit before preparing it, and nothing lands', async () => {
    // Prepare
    await upgradeToV3();
    const v3 = await catalog.loadTable(ORDERS_ID);
    const action = appendAction([fakeDataFile(v3, 'a')]);

    // Act
    const commit = commitWithRetry(catalog, ORDERS_ID, action, { base: v3 });

    // Assess
    await expect(commit).rejects.toBeInstanceOf(UnsupportedFeatureError);
    await expect(commit).rejects.toThrow(REFUSAL);
    await expect(commit).rejects.toMatchObject({ retryable: false });
    expect(action.prepared).toBe(0);
    expect((await readdir(metadataDir)).filter((f) => f.endsWith('.metadata.json')).sort()).toEqual([
      'v1.metadata.json',
      'v2.metadata.json',
    ]);
  });

  it('commits a change prepared for the v2 table on the v3 table it became, with row lineage', async () => {
    // Prepare: the caller still holds the v2 table; the catalog has moved to v3
    await upgradeToV3(false);
    const action = appendAction([fakeDataFile(v2, 'a', 7)]);

    // Act
    const result = await commitWithRetry(catalog, ORDERS_ID, action, { base: v2 });

    // Assess
    const snapshot = result.table.metadata.snapshots[0];
    expect([snapshot['first-row-id'], snapshot['added-rows']]).toEqual([0, 7]);
    expect(result.table.metadata['next-row-id']).toBe(7);
  });

  it('refuses orphan removal (a delete of its files)', async () => {
    // Prepare
    await upgradeToV3();
    const v3 = await catalog.loadTable(ORDERS_ID);
    await writeFile(join(metadataDir, 'stray.avro'), 'x');

    // Act
    const removal = removeOrphanFiles(v3, { olderThanMs: 0, nowMs: Date.now() + 86_400_000 });

    // Assess
    await expect(removal).rejects.toThrow(REFUSAL);
    expect(await readdir(metadataDir)).toContain('stray.avro');
  });

  it('still commits to a v2 table (the refusal is by version only)', async () => {
    // Act
    const result = await commitWithRetry(catalog, ORDERS_ID, appendAction([fakeDataFile(v2, 'a')]));

    // Assess
    expect(result.status).toBe('committed');
  });
});
