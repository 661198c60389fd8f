/**
 * Scans of a format-version 3 table with deletion vectors, built here as another engine would leave it:
 * data files written by pyarrow (test/fixtures/v3), v3 manifests through floe's manifest writer, and
 * Puffin files of `deletion-vector-v1` blobs (floe's writer, and one blob of Iceberg Java's golden
 * files). The spec's rules: a DV deletes its positions from the one data file it names, when that
 * file's data sequence number is ≤ the DV's; position delete files of a file with a DV are ignored (the
 * DV replaced them); two live DVs for one data file are corrupt metadata.
 */
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { writePuffin } from '../../../functions/core/data/puffin/puffin-writer.js';
import { CorruptDeletionVectorError } from '../../../functions/core/deletes/deletes-errors.js';
import { ValidationError } from '../../../functions/core/errors.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import type { DataFile } from '../../../functions/core/spec/types.js';
import { added, ID_ONLY, type V3DvTable, v3DvTable, vectorOf } from './v3-dv-table.js';

/** Java's blob of positions 1, 3, 5, 7, 9 (test/fixtures/deletes/README.md). */
const GOLDEN = readFileSync(
  new URL('../../fixtures/deletes/small-alternating-values-position-index.bin', import.meta.url),
);

describe('scanning a v3 table with deletion vectors', () => {
  let t: V3DvTable;
  let a: DataFile;
  let b: DataFile;
  let count = 0;
  const manifest: V3DvTable['manifest'] = (...args) => t.manifest(...args);
  const tableOf: V3DvTable['tableOf'] = (...args) => t.tableOf(...args);
  const puffinOf: V3DvTable['puffinOf'] = (...args) => t.puffinOf(...args);
  const positionDeletes: V3DvTable['positionDeletes'] = (...args) => t.positionDeletes(...args);

  const idsByFile = async (table: LoadedTable): Promise<bigint[]> => {
    const rows = await readScanRows(table, await planScan(table), { schema: ID_ONLY });
    return rows.map((r) => r.id as bigint);
  };

  beforeAll(async () => {
    t = await v3DvTable();
    ({ a, b } = t);
  });
  afterAll(() => t.cleanup());

  it('deletes the positions each vector of one Puffin file names, from its own data file only', async () => {
    // Prepare: one Puffin file, two blobs; a position past 2^31 (no such row) is harmless
    const dvs = await puffinOf([
      [a, vectorOf(0, 2, 2n ** 31n + 7n)],
      [b, vectorOf(4)],
    ]);
    const table = await tableOf([
      [await manifest(0, [added(a), added(b)])],
      [await manifest(1, dvs.map(added))],
    ]);

    // Act
    const plan = await planScan(table);
    const ids = await idsByFile(table);

    // Assess
    expect(plan.tasks.map((t) => t.deletes.map((d) => d.file.content_offset))).toEqual([
      [dvs[0].content_offset],
      [dvs[1].content_offset],
    ]);
    expect(ids).toEqual([2n, 4n, 5n, 1n, 2n, 3n, 4n]);
  });

  it("applies a blob of Iceberg Java's golden files (positions 1, 3, 5, 7, 9)", async () => {
    // Prepare
    const written = writePuffin([
      {
        type: 'deletion-vector-v1',
        fields: [2147483645],
        'snapshot-id': -1,
        'sequence-number': -1,
        data: GOLDEN,
      },
    ]);
    const location = `${t.root}/data/java-${count++}.puffin`;
    await writeFile(location, written.bytes);
    const [blob] = written.metadata.blobs;
    const dv: DataFile = {
      content: 1,
      file_path: location,
      file_format: 'PUFFIN',
      spec_id: 0,
      partition: {},
      record_count: 5n,
      file_size_in_bytes: BigInt(written.bytes.byteLength),
      referenced_data_file: a.file_path,
      content_offset: BigInt(blob.offset),
      content_size_in_bytes: BigInt(blob.length),
    };
    const table = await tableOf([[await manifest(0, [added(a)])], [await manifest(1, [added(dv)])]]);

    // Act
    const ids = await idsByFile(table);

    // Assess
    expect(ids).toEqual([1n, 3n, 5n]);
  });

  it('ignores the position delete files of a data file that has a deletion vector (the DV replaced them)', async () => {
    // Prepare: an older position delete file deletes pos 4 of a; the DV (deleting 0 and 1) does not hold it
    const older = await positionDeletes([
      [a, 4],
      [b, 0],
    ]);
    const [dv] = await puffinOf([[a, vectorOf(0, 1)]]);
    const table = await tableOf([
      [await manifest(0, [added(a), added(b)])],
      [await manifest(1, [added(older)])],
      [await manifest(1, [added(dv)])],
    ]);

    // Act
    const plan = await planScan(table);
    const ids = await idsByFile(table);

    // Assess: b has no DV, so the position delete file still applies to it
    expect(plan.tasks.map((t) => t.deletes.map((d) => d.file.file_format))).toEqual([
      ['PUFFIN'],
      ['PARQUET'],
    ]);
    expect(ids).toEqual([3n, 4n, 5n, 2n, 3n, 4n, 5n]);
  });

  it('does not apply a deletion vector to a data file with a newer data sequence number', async () => {
    // Prepare: the DV (sequence 1) names b's path, b is added at sequence 2
    const [dv] = await puffinOf([[b, vectorOf(0, 1, 2)]]);
    const table = await tableOf([[await manifest(1, [added(dv)])], [await manifest(0, [added(b)])]]);

    // Act
    const plan = await planScan(table);
    const ids = await idsByFile(table);

    // Assess
    expect(plan.tasks[0].deletes).toEqual([]);
    expect(ids).toEqual([1n, 2n, 3n, 4n, 5n]);
  });

  it('refuses two live deletion vectors for one data file', async () => {
    // Prepare
    const [first] = await puffinOf([[a, vectorOf(0)]]);
    const [second] = await puffinOf([[a, vectorOf(0, 1)]]);
    const table = await tableOf([
      [await manifest(0, [added(a)])],
      [await manifest(1, [added(first)])],
      [await manifest(1, [added(second)])],
    ]);

    // Act
    const plan = planScan(table);

    // Assess
    await expect(plan).rejects.toBeInstanceOf(ValidationError);
    await expect(plan).rejects.toThrow(
      `data file ${a.file_path} has two live deletion vectors, ${first.file_path} at offset 4 (${first.content_size_in_bytes} bytes) and ${second.file_path} at offset 4`,
    );
  });

  it('refuses a deletion vector whose blob is damaged, with the codec error naming the file', async () => {
    // Prepare: flip one byte of the vector (inside the CRC's reach)
    const [dv] = await puffinOf([[a, vectorOf(0, 3)]]);
    const bytes = await readFile(dv.file_path);
    bytes[Number(dv.content_offset) + 10] ^= 0xff;
    await writeFile(dv.file_path, bytes);
    const table = await tableOf([[await manifest(0, [added(a)])], [await manifest(1, [added(dv)])]]);

    // Act
    const rows = readScanRows(table, await planScan(table), { schema: ID_ONLY });

    // Assess
    await expect(rows).rejects.toBeInstanceOf(CorruptDeletionVectorError);
    await expect(rows).rejects.toThrow(
      new RegExp(
        `^${dv.file_path} at offset 4 \\(\\d+ bytes\\), the deletion vector of ${a.file_path}: deletion vector: CRC-32 is`,
      ),
    );
  });

  it("refuses a deletion vector whose cardinality is not its entry's record_count", async () => {
    // Prepare
    const [dv] = await puffinOf([[a, vectorOf(0, 3)]]);
    const table = await tableOf([
      [await manifest(0, [added(a)])],
      [await manifest(1, [added({ ...dv, record_count: 3n })])],
    ]);

    // Act
    const rows = readScanRows(table, await planScan(table), { schema: ID_ONLY });

    // Assess
    await expect(rows).rejects.toBeInstanceOf(CorruptDeletionVectorError);
    await expect(rows).rejects.toThrow('holds 2 positions, its metadata says 3');
  });
});
