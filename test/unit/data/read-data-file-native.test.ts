/**
 * Which decoder a data file's read takes: every row of every column of a file floe wrote goes through
 * floe's own decoder (data/parquet/read/native/, as compaction reads), to the rows parquet-wasm gives for the same
 * file; a read of some rows or some columns, and any other writer's file, go through parquet-wasm.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as native from '../../../functions/core/data/parquet/read/native/read-floe-parquet.js';
import { batchRows } from '../../../functions/core/data/parquet/read/data-batch.js';
import { openDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import type { StructType } from '../../../functions/core/spec/types.js';
import { allTypesRows, allTypesSchema } from './all-types-fixture.js';
import {
  type DuckDB,
  type TempWarehouse,
  createTempWarehouse,
  openDuckDB,
  schemaOf,
  sqlString,
} from './parquet-test-helpers.js';

vi.mock('../../../functions/core/data/parquet/read/native/read-floe-parquet.js', async (original) => {
  const actual = await original<typeof native>();
  return { ...actual, tryDecodeFloeParquet: vi.fn(actual.tryDecodeFloeParquet) };
});

const decode = vi.mocked(native.tryDecodeFloeParquet);

describe('openDataFile: floe’s own decoder for whole reads of floe’s files', () => {
  let wh: TempWarehouse;
  let duck: DuckDB;
  let location: string;
  const rows = Array.from({ length: 3 }, () => allTypesRows).flat();

  beforeAll(async () => {
    wh = await createTempWarehouse();
    duck = await openDuckDB();
    const [file] = await writeDataFiles(rows, {
      io: wh.io,
      schema: allTypesSchema,
      specId: 0,
      partition: {},
      nextLocation: wh.locations('native'),
    });
    location = file.file_path;
  });
  afterAll(async () => {
    duck?.close();
    await wh?.cleanup();
  });
  beforeEach(() => {
    decode.mockClear();
  });

  async function readRows(at: string, schema: StructType, spans?: { from: number; to: number }[]) {
    const file = await openDataFile(wh.io, at);
    try {
      return (await file.readBatches(schema, spans)).flatMap((b) => batchRows(schema, b));
    } finally {
      file.close();
    }
  }

  it('decodes a whole read, and a span over the whole file, natively: the rows parquet-wasm gives', async () => {
    // Act
    const whole = await readRows(location, allTypesSchema);
    const wholeSpan = await readRows(location, allTypesSchema, [{ from: 0, to: rows.length }]);
    const nativeTables = decode.mock.results.map((r) => r.value);
    // Two spans: parquet-wasm decodes each.
    decode.mockClear();
    const byWasm = await readRows(location, allTypesSchema, [
      { from: 0, to: 5 },
      { from: 5, to: rows.length },
    ]);

    // Assess
    expect(nativeTables).toHaveLength(2);
    expect(nativeTables.every((t) => t !== undefined)).toBe(true);
    expect(decode).not.toHaveBeenCalled();
    expect(whole).toEqual(byWasm);
    expect(wholeSpan).toEqual(byWasm);
    expect(whole).toHaveLength(rows.length);
  });

  it('leaves a read of some of the columns to parquet-wasm', async () => {
    // Prepare
    const some = { type: 'struct' as const, fields: allTypesSchema.fields.slice(0, 2) };

    // Act
    const read = await readRows(location, some);

    // Assess
    expect(decode).not.toHaveBeenCalled();
    expect(read).toHaveLength(rows.length);
  });

  it('reads another writer’s file through parquet-wasm after floe’s decoder declines it', async () => {
    // Prepare
    const other = path.join(wh.dir, 'duckdb-native.parquet');
    await duck.run(
      `COPY (SELECT * FROM (VALUES (1, 'a'), (2, NULL)) t(a, b)) TO ${sqlString(other)} (FORMAT parquet, FIELD_IDS {a: 1, b: 2})`,
    );
    const schema = schemaOf([
      { id: 1, name: 'a', required: false, type: 'int' },
      { id: 2, name: 'b', required: false, type: 'string' },
    ]);

    // Act
    const read = await readRows(other, schema);

    // Assess
    expect(decode).toHaveBeenCalledTimes(1);
    expect(decode.mock.results[0]?.value).toBeUndefined();
    expect(read).toEqual([
      { a: 1, b: 'a' },
      { a: 2, b: null },
    ]);
  });
});
