/**
 * floe's default page-row limit is 5,000 rows (Iceberg's is 20,000): a point read decodes one page per
 * column, so pages are cut smaller by default, and a limit the caller passes still wins.
 */
import { deserializeTCompactProtocol } from '../../support/hyparquet-internals.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readFileFooter,
  thriftInt,
  thriftStructs,
} from '../../../functions/core/data/parquet/read/file-footer.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import type { Schema } from '../../../functions/core/spec/types.js';
import { writeRows } from '../../../functions/core/table/write-rows.js';
import { tempWarehouse } from '../../support/tables.js';
import { createTempWarehouse, type TempWarehouse } from './parquet-test-helpers.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [{ id: 1, name: 'id', required: true, type: 'long' }],
};

describe('page-row limit', () => {
  let wh: TempWarehouse;
  beforeAll(async () => {
    wh = await createTempWarehouse();
  });
  afterAll(async () => {
    await wh?.cleanup();
  });

  const rows = Array.from({ length: 12_000 }, (_, i) => ({ id: BigInt(i) }));

  /** The first row of each page of the file's only column, from its OffsetIndex. */
  async function pageFirstRows(pageRowLimit: number | undefined): Promise<number[]> {
    const [file] = await writeDataFiles(rows, {
      io: wh.io,
      schema: SCHEMA,
      specId: 0,
      partition: {},
      nextLocation: wh.locations(`limit-${pageRowLimit}`),
      pageRowLimit,
    });
    return firstRowsOf(await wh.io.read(file.file_path));
  }

  function firstRowsOf(bytes: Uint8Array): number[] {
    const chunk = thriftStructs(thriftStructs(readFileFooter(bytes), 4)[0], 1)[0];
    const at = thriftInt(chunk, 4) ?? 0;
    const index = deserializeTCompactProtocol({
      view: new DataView(bytes.buffer, bytes.byteOffset + at, thriftInt(chunk, 5) ?? 0),
      offset: 0,
    });
    return thriftStructs(index, 1).map((p) => thriftInt(p, 3) ?? -1);
  }

  it('cuts pages of 5,000 rows by default', async () => {
    expect(await pageFirstRows(undefined)).toEqual([0, 5_000, 10_000]);
  });

  it('keeps a limit the caller passes (Iceberg default 20,000: one page)', async () => {
    expect(await pageFirstRows(20_000)).toEqual([0]);
    expect(await pageFirstRows(4_000)).toEqual([0, 4_000, 8_000]);
  });

  it("honours the table's write.parquet.page-row-limit when floe writes its rows", async () => {
    // Prepare
    const { catalog, cleanup } = await tempWarehouse();
    try {
      const table = await catalog.createTable(
        { namespace: ['lake'], name: 'pages' },
        { schema: SCHEMA, properties: { 'write.parquet.page-row-limit': '3000' } },
      );

      // Act
      const [file] = await writeRows(table, rows);

      // Assess
      expect(firstRowsOf(await table.io.read(file.file_path))).toEqual([0, 3_000, 6_000, 9_000]);
    } finally {
      await cleanup();
    }
  });
});
