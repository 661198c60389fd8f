/**
 * Compaction's delete mask (maintenance/delete-mask.ts) applies deletion vectors as the scan does: the
 * positions of the data file's vector, read by its blob range; a file with a vector ignores its
 * position delete files (planning attaches the vector alone).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readArrowFile } from '../../../functions/core/data/parquet/read/read-arrow-columns.js';
import { DeleteMasks } from '../../../functions/core/maintenance/delete-mask.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { added, type V3DvTable, v3DvTable, vectorOf } from '../scan/v3-dv-table.js';

describe('DeleteMasks with deletion vectors', () => {
  let t: V3DvTable;
  beforeAll(async () => {
    t = await v3DvTable();
  });
  afterAll(() => t.cleanup());

  it("masks the positions of each data file's vector, and a position delete file only where no vector is", async () => {
    // Prepare: one Puffin file with a's vector (a position past its rows too); b has a position delete
    const [vector] = await t.puffinOf([[t.a, vectorOf(1, 3, 2n ** 32n)]]);
    const older = await t.positionDeletes([
      [t.a, 0],
      [t.b, 2],
    ]);
    const table = await t.tableOf([
      [await t.manifest(0, [added(t.a), added(t.b)])],
      [await t.manifest(1, [added(older)])],
      [await t.manifest(1, [added(vector)])],
    ]);
    const plan = await planScan(table);
    const masks = new DeleteMasks(table);

    // Act
    const result = await Promise.all(
      plan.tasks.map(async (task) => [
        ...((await masks.maskOf(task, await readArrowFile(t.io, task.file.file_path))) ?? []),
      ]),
    );

    // Assess
    expect(result).toEqual([
      [0, 1, 0, 1, 0],
      [0, 0, 1, 0, 0],
    ]);
  });
});
