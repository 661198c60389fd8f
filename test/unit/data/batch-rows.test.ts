/**
 * batchRows with a selection builds, for the selected positions only, the same rows as the whole batch
 * (every type, nested structs, lists, maps and lists of structs, nulls at every level): a filtered scan
 * materialises just its matches.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchRows, type DataBatch, openDataFile } from '../../../functions/core/data/read-data-file.js';
import { writeDataFiles } from '../../../functions/core/data/write-data-file.js';
import { allTypesRows, allTypesSchema } from './all-types-fixture.js';
import { createTempWarehouse, type TempWarehouse } from './parquet-test-helpers.js';

describe('batchRows: a selection of positions', () => {
  let wh: TempWarehouse;
  let batch: DataBatch;

  beforeAll(async () => {
    wh = await createTempWarehouse();
    // Every fixture row several times, so selections skip over runs of list elements and map entries.
    const rows = Array.from({ length: 5 }, () => allTypesRows).flat();
    const [file] = await writeDataFiles(rows, {
      io: wh.io,
      schema: allTypesSchema,
      specId: 0,
      partition: {},
      nextLocation: wh.locations('sel'),
    });
    const opened = await openDataFile(wh.io, file.file_path);
    const batches = await opened.readBatches(allTypesSchema).finally(() => opened.close());
    expect(batches).toHaveLength(1);
    batch = batches[0];
  });
  afterAll(async () => {
    await wh?.cleanup();
  });

  it('gives the rows at the selected positions, as the full read does', () => {
    const all = batchRows(allTypesSchema, batch);
    fc.assert(
      fc.property(fc.subarray(all.map((_, i) => i)), (positions) => {
        // Act
        const selected = batchRows(allTypesSchema, batch, Int32Array.from(positions));

        // Assess
        expect(selected).toEqual(positions.map((p) => all[p]));
      }),
      { numRuns: 100 },
    );
  });
});
