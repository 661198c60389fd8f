/**
 * Which reader takes a file: floe's own for what floe's writer wrote; parquet-wasm, as before, for
 * other writers' files and for floe files whose bytes do not add up (truncated, a lying page size, a
 * dictionary index out of range, levels running past their page) — never rows the bytes do not hold.
 */
import { deserializeTCompactProtocol } from '../../../support/hyparquet-internals.js';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { parquetMetadata } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBatch } from '../../../../functions/core/data/parquet/write/encode-parquet.js';
import {
  decodeFloeParquet,
  mayBeFloeParquet,
  NotNativeError,
} from '../../../../functions/core/data/parquet/read/native/read-floe-parquet.js';
import { loadParquetWasm } from '../../../../functions/core/data/parquet/parquet-wasm.js';
import { encodeBatchAsParquet } from '../../../../functions/core/data/parquet/write/write-batch.js';
import {
  readArrowFile,
  readWithParquetWasm,
} from '../../../../functions/core/data/parquet/read/read-arrow-columns.js';
import { ValidationError } from '../../../../functions/core/errors.js';
import type { Row, Schema } from '../../../../functions/core/spec/types.js';
import { allTypesRows, allTypesSchema } from '../all-types-fixture.js';
import { batchOf } from '../parquet/read-back.js';
import {
  type DuckDB,
  type TempWarehouse,
  createTempWarehouse,
  openDuckDB,
  schemaOf,
  sqlString,
} from '../parquet-test-helpers.js';
import { tableShape } from './arrow-shape.js';

const kv = new Map([['iceberg.schema', '{}']]);

function floeFile(schema: Schema, rows: Row[], codec: 'zstd' | 'uncompressed' = 'uncompressed'): Uint8Array {
  return encodeBatchAsParquet(schema, batchOf(schema, rows), {
    codec,
    rowGroupRows: 1000,
    keyValueMetadata: kv,
  }).bytes;
}

/** File offset and header length of the first data page of column `c` (row group 0). */
function firstDataPage(bytes: Uint8Array, c: number): { at: number; body: number; size: number } {
  const meta = parquetMetadata(bytes.slice().buffer);
  const at = Number(meta.row_groups[0].columns[c].meta_data?.data_page_offset);
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: at };
  const header = deserializeTCompactProtocol(reader);
  return { at, body: reader.offset, size: header.field_3 as number };
}

function indexOf(bytes: Uint8Array, pattern: number[], from: number): number {
  for (let i = from; i + pattern.length <= bytes.length; i++) {
    if (pattern.every((b, k) => bytes[i + k] === b)) return i;
  }
  return -1;
}

describe('readArrowFile: floe files natively, the rest through parquet-wasm', () => {
  let wh: TempWarehouse;
  let duck: DuckDB;
  let n = 0;
  const put = async (bytes: Uint8Array) => {
    const location = path.join(wh.dir, `f${n++}.parquet`);
    await fs.writeFile(location, bytes);
    return location;
  };
  /** Declined natively; parquet-wasm then either refuses it or reads it — it decides, as before. */
  const expectDeclined = async (bytes: Uint8Array) => {
    expect(() => decodeFloeParquet(bytes, 65_536)).toThrow(NotNativeError);
    const read = await readArrowFile(wh.io, await put(bytes)).catch((error: unknown) => error);
    if (read instanceof Error) expect(read).toBeInstanceOf(ValidationError);
    else expect(read).toMatchObject({ decoder: 'parquet-wasm' });
  };

  beforeAll(async () => {
    wh = await createTempWarehouse();
    duck = await openDuckDB();
    await loadParquetWasm();
  });

  afterAll(async () => {
    duck?.close();
    await wh?.cleanup();
  });

  it('reads a floe file natively, as parquet-wasm reads it', async () => {
    // Prepare
    const bytes = floeFile(allTypesSchema, allTypesRows, 'zstd');

    // Act
    const file = await readArrowFile(wh.io, await put(bytes));

    // Assess
    expect(mayBeFloeParquet(bytes)).toBe(true);
    expect(file.decoder).toBe('native');
    expect(tableShape(file.table)).toEqual(tableShape(await readWithParquetWasm(bytes, 'x')));
  });

  it('leaves a DuckDB file and a parquet-wasm file to parquet-wasm, which reads them as before', async () => {
    // Prepare
    const duckFile = path.join(wh.dir, 'duck.parquet');
    await duck.run(
      `COPY (SELECT i::BIGINT AS id, 'v' || i AS s, [i, NULL]::INT[] AS l FROM range(300) t(i))
       TO ${sqlString(duckFile)} (FORMAT parquet, FIELD_IDS {id: 1, s: 2, l: {__duckdb_field_id: 3, element: 4}})`,
    );
    const schema = schemaOf([
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 's', required: false, type: 'string' },
    ]);
    const rows: Row[] = Array.from({ length: 50 }, (_, i) => ({ id: BigInt(i), s: i % 3 ? `s${i}` : null }));
    const wasmBytes = encodeBatch(schema, batchOf(schema, rows), {
      codec: 'zstd',
      rowGroupRows: 20,
      keyValueMetadata: kv,
      writer: 'parquet-wasm',
    }).bytes;

    for (const bytes of [new Uint8Array(await fs.readFile(duckFile)), wasmBytes]) {
      // Act
      const file = await readArrowFile(wh.io, await put(bytes));

      // Assess
      expect(mayBeFloeParquet(bytes)).toBe(false); // told apart before anything is parsed
      expect(() => decodeFloeParquet(bytes, 65_536)).toThrow(NotNativeError);
      expect(file.decoder).toBe('parquet-wasm');
      expect(tableShape(file.table)).toEqual(tableShape(await readWithParquetWasm(bytes, 'x')));
    }
  });

  it('declines truncated files, and parquet-wasm refuses them with a ValidationError', async () => {
    // Prepare
    const bytes = floeFile(allTypesSchema, allTypesRows, 'zstd');
    const cut = [bytes.length - 1, bytes.length - 8, bytes.length >> 1, 40, 11];
    // A chunk's bytes cut out of the middle: the footer is whole, its offsets now lie.
    const page = firstDataPage(bytes, 2);
    const holed = new Uint8Array([...bytes.subarray(0, page.body + 2), ...bytes.subarray(page.body + 7)]);

    // Act + Assess
    for (const length of cut) {
      const truncated = bytes.slice(0, length);
      expect(() => decodeFloeParquet(truncated, 65_536)).toThrow(NotNativeError);
      await expect(readArrowFile(wh.io, await put(truncated))).rejects.toThrow(ValidationError);
    }
    await expectDeclined(holed);
  });

  it('declines a page header whose sizes lie', async () => {
    // Prepare
    const schema = schemaOf([{ id: 1, name: 'n', required: true, type: 'long' }]);
    const rows: Row[] = Array.from({ length: 30 }, (_, i) => ({ n: BigInt(i) }));
    const lied: Uint8Array[] = [];
    for (const codec of ['uncompressed', 'zstd'] as const) {
      const bytes = floeFile(schema, rows, codec);
      const page = firstDataPage(bytes, 0);
      // PageHeader: 0x15 type, 0x15 uncompressed size, 0x15 compressed size (zigzag varints).
      let at = page.at + 2;
      while (bytes[at - 1] & 0x80) at++;
      at += 1;
      while (bytes[at] & 0x80) at++;
      at += 2; // the compressed size's first byte
      expect(bytes[page.at]).toBe(0x15);
      const copy = bytes.slice();
      copy[at] -= 2; // one byte less
      lied.push(copy);
    }

    // Act + Assess
    for (const bytes of lied) await expectDeclined(bytes);
  });

  it('declines a dictionary index past the dictionary', async () => {
    // Prepare
    const schema = schemaOf([{ id: 1, name: 's', required: true, type: 'string' }]);
    const rows: Row[] = Array.from({ length: 40 }, (_, i) => ({ s: i < 20 ? 'a' : 'b' }));
    const bytes = floeFile(schema, rows);
    const page = firstDataPage(bytes, 0);
    // Index width 1, an RLE run of 20 zeros and one of 20 ones.
    const runs = indexOf(bytes, [1, 40, 0, 40, 1], page.body);
    expect(runs).toBe(page.body);
    const copy = bytes.slice();
    copy[runs + 4] = 1 | 4; // index 5 of a 2-entry dictionary (still 1 byte: a valid run)
    expect(decodeFloeParquet(bytes, 65_536).numRows).toBe(40);

    // Act + Assess
    await expectDeclined(copy);
  });

  it('declines definition levels running past their page', async () => {
    // Prepare
    const schema = schemaOf([{ id: 1, name: 'n', required: false, type: 'int' }]);
    const rows: Row[] = Array.from({ length: 30 }, (_, i) => ({ n: i % 4 ? i : null }));
    const bytes = floeFile(schema, rows);
    const page = firstDataPage(bytes, 0);
    const copy = bytes.slice();
    const view = new DataView(copy.buffer);
    view.setUint32(page.body, view.getUint32(page.body, true) + page.size, true);

    // Act + Assess
    await expectDeclined(copy);
  });
});
