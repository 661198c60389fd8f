/**
 * Compaction's reader and a page index that puts pages where there are none: both of its decoders read
 * every page one after the other and never go by the index, floe's own (floe's files) and parquet-wasm's
 * synchronous whole-file read (any other file), so such a file compacts as ever. (The scan's row
 * selection goes by the index, and refuses such a file: test/unit/scan/range-read.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readArrowFile,
  readWithParquetWasm,
} from '../../../functions/core/data/parquet/read/read-arrow-columns.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import type { Schema } from '../../../functions/core/spec/types.js';
import { withOffsetIndex } from './lying-page-index.js';
import { type TempWarehouse, createTempWarehouse } from './parquet-test-helpers.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'note', required: false, type: 'string' },
  ],
};

describe('compaction reader and a lying page index', () => {
  let wh: TempWarehouse;
  let clean: Uint8Array;
  let lied: Uint8Array;
  const rows = Array.from({ length: 40 }, (_, i) => ({ id: BigInt(i), note: i % 3 === 0 ? null : `n${i}` }));

  beforeAll(async () => {
    wh = await createTempWarehouse();
    const [file] = await writeDataFiles(rows, {
      io: wh.io,
      schema: SCHEMA,
      specId: 0,
      partition: {},
      nextLocation: wh.locations('clean'),
      pageRowLimit: 5,
    });
    clean = await wh.io.read(file.file_path);
    // Every page after the first three bytes later than it is: each such location is inside a page.
    lied = withOffsetIndex(clean, 1, (p) => p.map(([a, s, f], i) => [i > 0 ? a + 3 : a, s, f]));
  });
  afterAll(async () => {
    await wh?.cleanup();
  });

  it('reads it whole through parquet-wasm, which then does not use the index', async () => {
    const table = await readWithParquetWasm(lied, 'lied.parquet');
    expect(table.numRows).toBe(rows.length);
    expect(table.getChild('note')?.toArray().slice(0, 4)).toEqual([null, 'n1', 'n2', null]);
    expect((await readWithParquetWasm(clean, 'clean.parquet')).numRows).toBe(rows.length);
  });

  it("reads a floe file with floe's own decoder, which does not use the index", async () => {
    const at = wh.locations('lied')(0);
    await wh.io.write(at, lied);
    const file = await readArrowFile(wh.io, at);
    expect(file.decoder).toBe('native');
    expect(file.rowCount).toBe(rows.length);
    expect(file.table.getChild('note')?.toArray().slice(0, 4)).toEqual([null, 'n1', 'n2', null]);
  });
});
