import * as fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { readManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { parseExpression } from '../../../functions/core/scan/parse-expression.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScan, readScanRows } from '../../../functions/core/scan/read-scan.js';
import type { FileScanTask, ScanPlan } from '../../../functions/core/scan/scan-plan.js';
import type { ManifestFile, Row } from '../../../functions/core/spec/types.js';
import { type ScanTable, buildScanTable } from './scan-table-fixture.js';

let fixture: ScanTable;

beforeAll(async () => {
  fixture = await buildScanTable();
});

afterAll(async () => {
  await fixture?.cleanup();
});

const ids = (rows: Row[]) => rows.map((r) => Number(r.id)).sort((x, y) => x - y);

/** Letter names (A, P1, ...) of a task's file and deletes. */
function describeTask(task: FileScanTask): [string, string[]] {
  const nameOf = (path: string) =>
    Object.entries(fixture.files).find(([, f]) => f.file_path === path)?.[0] ?? path;
  return [nameOf(task.file.file_path), task.deletes.map((d) => nameOf(d.file.file_path)).sort()];
}

async function scan(where?: string, snapshotId?: bigint): Promise<{ plan: ScanPlan; rows: Row[] }> {
  const filter = where === undefined ? undefined : parseExpression(where);
  const plan = await planScan(fixture.table, { filter, snapshotId });
  const rows = await readScanRows(fixture.table, plan, { filter });
  return { plan, rows };
}

describe('planScan + readScan on a table with position and equality deletes', () => {
  it('returns exactly the live rows of the current snapshot', async () => {
    // Act
    const { plan, rows } = await scan();

    // Assess
    expect(plan.snapshotId).toBe(3n);
    expect(ids(rows)).toEqual([1, 4, 5, 6, 7, 8, 10, 23, 30, 31, 40]);
    expect(rows.find((r) => r.id === 23n)).toEqual({ id: 23n, country: 'IT', qty: 23 });
  });

  it('attaches delete files by sequence number, partition and file_path bounds', async () => {
    const { plan } = await scan();

    const tasks = Object.fromEntries(plan.tasks.map(describeTask));
    expect(tasks).toEqual({
      A: ['E1', 'G', 'P1'], // not E2 (other partition), not PX (its path bounds exclude A)
      B: ['E2', 'G'],
      U: ['G', 'PU'],
      C: ['G', 'P1'], // P1 has C's sequence number (≤ applies), E1 too (< does not)
      D: [], // G has D's sequence number: equality deletes need strictly less
      U2: ['PU'], // same spec and sequence number; PU names no row of U2
    });
    expect(plan.tasks.find((t) => describeTask(t)[0] === 'C')?.dataSequenceNumber).toBe(2n);
  });

  it('counts every stage of the funnel without a filter', async () => {
    const { plan } = await scan();

    expect(plan.funnel).toEqual({
      manifestsTotal: 8,
      manifestsAfterPartitionSummaries: 8,
      filesInTable: 6,
      filesAfterPartitionPruning: 6,
      filesAfterManifestSummaries: 6,
      filesAfterStats: 6,
    });
    expect(plan.manifestsRead).toBe(8);
  });

  it('prunes by manifest summaries, partition tuples and file stats, and filters the rest', async () => {
    // Act
    const { plan, rows } = await scan("country = 'DE'");

    // Assess
    expect(ids(rows)).toEqual([1, 4, 5, 10]);
    expect(plan.funnel).toEqual({
      manifestsTotal: 8,
      manifestsAfterPartitionSummaries: 7, // the snapshot-3 FR data manifest (D) is skipped
      filesInTable: 6,
      filesAfterPartitionPruning: 5, // B's tuple is FR
      filesAfterManifestSummaries: 4, // D, in the skipped manifest
      filesAfterStats: 2, // U's country bounds are IT..NL, U2's country is all null
    });
    expect(plan.tasks.map((t) => describeTask(t)[0]).sort()).toEqual(['A', 'C']);
    expect(plan.manifestsRead).toBe(7);
  });

  it('reports the metadata bytes it read: the manifest list and each opened manifest', async () => {
    // Prepare: the manifests of snapshot 3, less the one data manifest holding only FR partitions
    const listSize = (await fs.stat(fixture.manifestLists[3])).size;
    const manifests = await readManifestList(fixture.table.io, fixture.manifestLists[3]);
    const lowerCountry = (m: ManifestFile) =>
      new TextDecoder().decode(m.partitions?.[0]?.lower_bound ?? new Uint8Array());
    const opened = manifests.filter(
      (m) => !(m.content === 0 && m.partition_spec_id === 1 && lowerCountry(m) === 'FR'),
    );
    expect(opened).toHaveLength(7);

    // Act
    const { plan } = await scan("country = 'DE'");

    // Assess
    expect(plan.bytesRead).toBe(listSize + opened.reduce((sum, m) => sum + Number(m.manifest_length), 0));
  });

  it('applies the residual filter with SQL null semantics', async () => {
    const { rows: notDe } = await scan("country != 'DE'");
    expect(ids(notDe)).toEqual([6, 7, 8, 23, 30, 31]); // 40 has a null country
    const { rows: nullCountry } = await scan('country is null or qty between 4 and 5');
    expect(ids(nullCountry)).toEqual([4, 5, 40]);
  });

  it('reads older snapshots with the deletes they had', async () => {
    const { plan: first, rows: atOne } = await scan(undefined, 1n);
    expect(first.snapshotId).toBe(1n);
    expect(ids(atOne)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 20, 21, 22, 23]);
    const { rows: atTwo } = await scan(undefined, 2n);
    expect(ids(atTwo)).toEqual([1, 4, 5, 6, 7, 8, 10, 20, 21, 22, 23]);
  });

  it('projects columns while still reading the ones filters and deletes need', async () => {
    // Prepare: only `id`, with a filter on qty; G still needs country to delete the null-country rows.
    const filter = parseExpression('qty > 4');
    const plan = await planScan(fixture.table, { filter });
    const idOnly = { type: 'struct' as const, fields: [fixture.table.metadata.schemas[0].fields[0]] };

    // Act
    const rows: Row[] = [];
    for await (const r of readScan(fixture.table, plan, { filter, schema: idOnly })) rows.push(r);

    // Assess
    expect(rows.every((r) => Object.keys(r).join() === 'id')).toBe(true);
    expect(ids(rows)).toEqual([5, 6, 7, 8, 10, 23, 30, 31, 40]);
  });

  it('rejects an unknown snapshot and a filter on an unknown column', async () => {
    await expect(planScan(fixture.table, { snapshotId: 99n })).rejects.toThrow(ValidationError);
    await expect(planScan(fixture.table, { filter: parseExpression('nope = 1') })).rejects.toThrow(
      "unknown column 'nope'; available columns: id, country, qty",
    );
  });

  it('plans nothing for a table without snapshots', async () => {
    const empty = {
      ...fixture.table,
      metadata: { ...fixture.table.metadata, snapshots: [], refs: {}, 'current-snapshot-id': -1n },
    };
    const plan = await planScan(empty, { filter: parseExpression("country = 'DE'") });
    expect(plan).toEqual({
      snapshotId: null,
      tasks: [],
      funnel: {
        manifestsTotal: 0,
        manifestsAfterPartitionSummaries: 0,
        filesInTable: 0,
        filesAfterPartitionPruning: 0,
        filesAfterManifestSummaries: 0,
        filesAfterStats: 0,
      },
      manifestsRead: 0,
      bytesRead: 0,
    });
    expect(await readScanRows(empty, plan)).toEqual([]);
  });
});
