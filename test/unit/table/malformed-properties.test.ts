/**
 * A table property floe cannot honour refuses the write or the commit, naming itself; it is never read
 * as its default (a snappy Avro codec was once written as deflate, `abc` retries as four).
 */
import { readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ValidationError } from '../../../functions/core/errors.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { DataFile } from '../../../functions/core/spec/types.js';
import {
  type CommitAction,
  commitWithRetry,
  retryPolicyFrom,
} from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { writeRows } from '../../../functions/core/table/write-rows.js';
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

describe('a malformed table property', () => {
  let catalog: EmbeddedCatalog;
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ catalog, dir, cleanup } = await tempWarehouse());
  });
  afterEach(() => cleanup());

  const create = (properties: Record<string, string>) =>
    catalog.createTable(ORDERS_ID, { schema: SIMPLE_SCHEMA, properties });

  it('write.avro.compression-codec=snappy: the commit is refused, naming it, and nothing lands', async () => {
    // Prepare
    const table = await create({ 'write.avro.compression-codec': 'snappy' });
    const action = appendAction([fakeDataFile(table, 'a')]);

    // Act
    const commit = commitWithRetry(catalog, ORDERS_ID, action);

    // Assess: refused as a whole, not written as deflate
    await expect(commit).rejects.toBeInstanceOf(ValidationError);
    await expect(commit).rejects.toThrow(
      'table property write.avro.compression-codec: must be one of gzip, uncompressed (the Avro codecs floe writes; deflate and null name them too), got "snappy"',
    );
    const after = await catalog.loadTable(ORDERS_ID);
    expect(currentSnapshot(after.metadata)).toBeUndefined();
    expect(after.metadataLocation).toBe(table.metadataLocation);
  });

  it('write.avro.compression-codec=gzip (Iceberg’s name) commits', async () => {
    const table = await create({ 'write.avro.compression-codec': 'gzip' });
    const result = await commitWithRetry(catalog, ORDERS_ID, appendAction([fakeDataFile(table, 'a')]));
    expect(result.status).toBe('committed');
  });

  it('commit.retry.num-retries=abc: a ValidationError before any attempt, not four retries', async () => {
    // Prepare
    await create({ 'commit.retry.num-retries': 'abc' });
    const table = await catalog.loadTable(ORDERS_ID);
    const action = appendAction([fakeDataFile(table, 'a')]);

    // Act / Assess
    expect(() => retryPolicyFrom(table.metadata.properties)).toThrow(ValidationError);
    expect(() => retryPolicyFrom(table.metadata.properties)).toThrow(
      'table property commit.retry.num-retries: must be an integer ≥ 0, got "abc"',
    );
    await expect(commitWithRetry(catalog, ORDERS_ID, action)).rejects.toThrow(
      'commit.retry.num-retries: must be an integer ≥ 0, got "abc"',
    );
    expect(action.prepared).toBe(0);
    expect(currentSnapshot((await catalog.loadTable(ORDERS_ID)).metadata)).toBeUndefined();
  });

  it("retryPolicyFrom: Iceberg's defaults when unset, the table's values when set, the caller's over both", () => {
    expect(retryPolicyFrom({})).toEqual({
      numRetries: 4,
      minWaitMs: 100,
      maxWaitMs: 60_000,
      totalTimeoutMs: 1_800_000,
    });
    expect(
      retryPolicyFrom({ 'commit.retry.num-retries': '0', 'commit.retry.max-wait-ms': '5' }),
    ).toMatchObject({
      numRetries: 0,
      maxWaitMs: 5,
    });
    expect(retryPolicyFrom({ 'commit.retry.num-retries': '0' }, { numRetries: 9 }).numRetries).toBe(9);
  });

  it('commit.manifest.min-count-to-merge=lots: the commit is refused, naming it', async () => {
    const table = await create({ 'commit.manifest.min-count-to-merge': 'lots' });
    await expect(
      commitWithRetry(catalog, ORDERS_ID, appendAction([fakeDataFile(table, 'a')])),
    ).rejects.toThrow(
      'table property commit.manifest.min-count-to-merge: must be an integer ≥ 0, got "lots"',
    );
  });

  it('write.metadata.previous-versions-max cannot be set to a malformed value, and names itself', async () => {
    // Prepare
    await create({});

    // Act
    const setting = catalog.commitTable(
      ORDERS_ID,
      [],
      [{ action: 'set-properties', updates: { 'write.metadata.previous-versions-max': 'ten' } }],
    );

    // Assess
    await expect(setting).rejects.toThrow(
      'table property write.metadata.previous-versions-max: must be an integer ≥ 0, got "ten"',
    );
    expect((await catalog.loadTable(ORDERS_ID)).metadata.properties).not.toHaveProperty(
      'write.metadata.previous-versions-max',
    );
  });

  it('write.parquet.compression-codec=lz4: rows are refused before any file is written', async () => {
    // Prepare
    const table = await create({ 'write.parquet.compression-codec': 'lz4' });

    // Act
    const writing = writeRows(table, [{ id: 1n, name: 'a' }]);

    // Assess
    await expect(writing).rejects.toThrow(
      'table property write.parquet.compression-codec: must be one of zstd, snappy, gzip, uncompressed (the Parquet codecs floe writes), got "lz4"',
    );
    const tableDir = `${dir}/sales/orders`;
    expect(await readdir(tableDir)).not.toContain('data');
  });

  it('write.target-file-size-bytes=1.5e9: rows are refused (an integer is expected)', async () => {
    const table = await create({ 'write.target-file-size-bytes': '1.5e9' });
    await expect(writeRows(table, [{ id: 1n, name: 'a' }])).rejects.toThrow(
      'table property write.target-file-size-bytes: must be an integer ≥ 1, got "1.5e9"',
    );
  });
});
