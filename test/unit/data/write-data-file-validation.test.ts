import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { TransientIOError, ValidationError } from '../../../functions/core/errors.js';
import type { FileIO } from '../../../functions/core/io/file-io.js';
import type { Row } from '../../../functions/core/spec/types.js';
import {
  type TempWarehouse,
  createTempWarehouse,
  openDuckDB,
  schemaOf,
  sqlString,
} from './parquet-test-helpers.js';

const schema = schemaOf([
  { id: 1, name: 'id', required: true, type: 'long' },
  { id: 2, name: 'name', required: false, type: 'string' },
  {
    id: 3,
    name: 'st',
    required: false,
    type: {
      type: 'struct',
      fields: [
        { id: 4, name: 'a', required: true, type: 'int' },
        { id: 5, name: 'b', required: false, type: 'int' },
      ],
    },
  },
  {
    id: 6,
    name: 'tags',
    required: false,
    type: { type: 'list', 'element-id': 7, element: 'string', 'element-required': true },
  },
]);

describe('writeDataFiles: validation, empty input, delete files', () => {
  let wh: TempWarehouse;

  beforeEach(async () => {
    wh = await createTempWarehouse();
  });

  afterEach(async () => {
    await wh.cleanup();
  });

  const write = (rows: Row[], extra = {}) =>
    writeDataFiles(rows, {
      io: wh.io,
      schema,
      specId: 0,
      partition: {},
      nextLocation: wh.locations('v'),
      ...extra,
    });

  async function listDataFiles(): Promise<string[]> {
    return fs.readdir(path.join(wh.dir, 'data')).catch(() => []);
  }

  it('writes no file for no rows', async () => {
    // Prepare
    let calls = 0;

    // Act
    const files = await writeDataFiles([], {
      io: wh.io,
      schema,
      specId: 0,
      partition: {},
      nextLocation: (k) => {
        calls++;
        return wh.locations('none')(k);
      },
    });

    // Assess
    expect(files).toEqual([]);
    expect(calls).toBe(0);
    expect(await listDataFiles()).toEqual([]);
  });

  it.each([
    ['a required top-level field', { id: null }, "'id'"],
    ['a missing required field', { name: 'x' }, "'id'"],
    ['a required struct field in a present struct', { id: 1n, st: { b: 2 } }, "'st.a'"],
    ['a required list element', { id: 1n, tags: ['x', null] }, "'tags.element'"],
  ])('rejects a null in %s with a ValidationError naming it, writing nothing', async (_, row, field) => {
    // Act
    const attempt = write([{ id: 0n }, row as Row]);

    // Assess
    await expect(attempt).rejects.toThrow(ValidationError);
    await expect(attempt).rejects.toThrow(field);
    expect(await listDataFiles()).toEqual([]);
  });

  it('accepts a required struct field whose struct is null', async () => {
    // Act
    const files = await write([
      { id: 1n, st: null },
      { id: 2n, st: { a: 5, b: null } },
    ]);

    // Assess
    expect(files[0].record_count).toBe(2n);
    expect(files[0].null_value_counts!.get(4)).toBe(1n);
  });

  it.each([
    ['a string in a long column', { id: 'x' }, "'id'"],
    ['a fraction in an int column', { id: 1n, st: { a: 1.5 } }, "'st.a'"],
    ['an int outside int32', { id: 1n, st: { a: 2 ** 31 } }, "'st.a'"],
    ['a long outside int64', { id: 2n ** 63n }, "'id'"],
    ['a number in a string column', { id: 1n, name: 5 }, "'name'"],
    ['a non-list in a list column', { id: 1n, tags: 'a,b' }, "'tags'"],
  ])('rejects %s with a ValidationError naming the field', async (_, row, field) => {
    // Act
    const attempt = write([row as unknown as Row]);

    // Assess
    await expect(attempt).rejects.toThrow(ValidationError);
    await expect(attempt).rejects.toThrow(field);
  });

  it('deletes the files it already wrote when a later write fails, and rethrows that failure', async () => {
    // Prepare: the second file's upload fails.
    const failing: FileIO = Object.assign(Object.create(wh.io), {
      write: async (location: string, data: Uint8Array) => {
        if (location.endsWith('-1.parquet')) throw new TransientIOError('storage hiccup');
        return wh.io.write(location, data);
      },
    });
    const rows = Array.from({ length: 5000 }, (_, k) => ({ id: BigInt(k), name: `name-${k * 7919}` }));

    // Act
    const attempt = writeDataFiles(rows, {
      io: failing,
      schema,
      specId: 0,
      partition: {},
      targetFileSizeBytes: 16 * 1024,
      nextLocation: wh.locations('fail'),
    });

    // Assess
    await expect(attempt).rejects.toThrow(TransientIOError);
    expect(await listDataFiles()).toEqual([]);
  });

  it('writes an equality delete file with its equality ids and sort order', async () => {
    // Prepare
    const duck = await openDuckDB();

    try {
      // Act
      const [file] = await write([{ id: 10n }, { id: 11n }], {
        content: 2,
        equalityIds: [1],
        sortOrderId: 0,
      });
      const rows = await duck.rowsJS(`SELECT id FROM read_parquet(${sqlString(file.file_path)}) ORDER BY id`);

      // Assess
      expect(file).toMatchObject({ content: 2, equality_ids: [1], sort_order_id: 0, record_count: 2n });
      expect(rows).toEqual([{ id: 10n }, { id: 11n }]);
    } finally {
      duck.close();
    }
  });

  it.each([
    ['no equality ids', { content: 2 }],
    ['an unknown id', { content: 2, equalityIds: [99] }],
    ['a struct id', { content: 2, equalityIds: [3] }],
    ['a list element id', { content: 2, equalityIds: [7] }],
    ['equality ids on a data file', { content: 0, equalityIds: [1] }],
    ['a zero target size', { targetFileSizeBytes: 0 }],
    ['an unknown codec', { codec: 'lzo' }],
  ])('rejects options with %s', async (_, extra) => {
    await expect(write([{ id: 1n }], extra)).rejects.toThrow(ValidationError);
  });
});
