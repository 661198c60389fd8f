/**
 * `floe verify` on a format-version 3 table with deletion vectors: one Puffin file holds the vectors
 * of several data files, each its own live entry, which is not a file registered twice; the summary
 * totals count each vector as a delete file of its cardinality and its blob's length (as Iceberg
 * Java's summaries do); two live vectors for one data file are a finding.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import type { DataFile } from '../../../functions/core/spec/types.js';
import { verifyTable } from '../../../functions/core/verify/verify-table.js';
import { added, type V3DvTable, v3DvTable, vectorOf } from '../scan/v3-dv-table.js';

/** The summary totals Iceberg Java would write for the current snapshot's live files. */
function withTotals(table: LoadedTable, data: DataFile[], vectors: DataFile[]): void {
  const snapshot = table.metadata.snapshots[table.metadata.snapshots.length - 1];
  const sum = (values: bigint[]) => String(values.reduce((s, v) => s + v, 0n));
  snapshot.summary = {
    ...snapshot.summary,
    'total-records': sum(data.map((f) => f.record_count)),
    'total-data-files': String(data.length),
    'total-delete-files': String(vectors.length),
    'total-position-deletes': sum(vectors.map((v) => v.record_count)),
    'total-equality-deletes': '0',
    'total-files-size': sum([
      ...data.map((f) => f.file_size_in_bytes),
      ...vectors.map((v) => v.content_size_in_bytes ?? 0n),
    ]),
  };
}

describe('floe verify on a table with deletion vectors', () => {
  let t: V3DvTable;
  beforeAll(async () => {
    t = await v3DvTable();
  });
  afterAll(() => t.cleanup());

  it("passes a Puffin file holding the vectors of two data files (stat'ed once)", async () => {
    // Prepare
    const vectors = await t.puffinOf([
      [t.a, vectorOf(0, 2)],
      [t.b, vectorOf(4)],
    ]);
    const table = await t.tableOf([
      [await t.manifest(0, [added(t.a), added(t.b)])],
      [await t.manifest(1, vectors.map(added))],
    ]);
    withTotals(table, [t.a, t.b], vectors);

    // Act
    const report = await verifyTable(table);

    // Assess
    expect(report.findings).toEqual([]);
    expect(report.counts).toMatchObject({ 'live-files': 4n, 'files-checked': 6n });
  });

  it('finds two live deletion vectors for one data file', async () => {
    // Prepare
    const [first] = await t.puffinOf([[t.a, vectorOf(0)]]);
    const [second] = await t.puffinOf([[t.a, vectorOf(0, 1)]]);
    const table = await t.tableOf([
      [await t.manifest(0, [added(t.a)])],
      [await t.manifest(1, [added(first)])],
      [await t.manifest(1, [added(second)])],
    ]);
    withTotals(table, [t.a], [first, second]);

    // Act
    const report = await verifyTable(table);

    // Assess
    expect(report.findings).toEqual([
      {
        check: 'duplicate-file',
        what: expect.stringMatching(
          /^data file has two live deletion vectors \(first at .* entry 0, again at .* entry 0\)/,
        ),
        where: t.a.file_path,
        count: 1n,
      },
    ]);
  });

  it('finds one deletion vector registered in two live entries', async () => {
    // Prepare
    const [vector] = await t.puffinOf([[t.a, vectorOf(3)]]);
    const table = await t.tableOf([
      [await t.manifest(0, [added(t.a)])],
      [await t.manifest(1, [added(vector), added(vector)])],
    ]);
    withTotals(table, [t.a], [vector]);

    // Act
    const report = await verifyTable(table);

    // Assess
    expect(report.findings.map((f) => [f.check, f.where, f.what.split(' (')[0]])).toEqual([
      [
        'duplicate-file',
        `${vector.file_path} at offset 4`,
        'deletion vector registered twice among the live entries',
      ],
    ]);
  });
});
