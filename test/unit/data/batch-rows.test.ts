/**
 * batchRows with a selection builds, for the selected positions only, the same rows as the whole batch
 * (every type, nested structs, lists, maps and lists of structs, nulls at every level): a filtered scan
 * materialises just its matches.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchRows, type DataBatch } from '../../../functions/core/data/parquet/read/data-batch.js';
import { openDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { allTypesRows, allTypesSchema } from './all-types-fixture.js';
import { createTempWarehouse, type TempWarehouse } from './parquet-test-helpers.js';

describe('batchRows: a selection of positions, spans of a file', () => {
  let wh: TempWarehouse;
  let batch: DataBatch;
  let location: string;

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
    location = file.file_path;
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

  it('reads any spans of the file as those rows of the full read (arrays sliced inside WASM)', async () => {
    const all = batchRows(allTypesSchema, batch);
    const opened = await openDataFile(wh.io, location);
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(fc.integer({ min: 0, max: all.length }), { minLength: 2, maxLength: 6 }),
          async (cuts) => {
            // Prepare
            const sorted = [...cuts].sort((a, b) => a - b);
            const spans = sorted
              .slice(1)
              .map((to, k) => ({ from: sorted[k], to }))
              .filter((_, k) => k % 2 === 0);

            // Act
            const read = await opened.read(allTypesSchema, spans);

            // Assess
            expect(read).toEqual(spans.flatMap((s) => all.slice(s.from, s.to)));
          },
        ),
        { numRuns: 40 },
      );
    } finally {
      opened.close();
    }
  });
});
