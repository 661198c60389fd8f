/**
 * slicePages cuts a file down to the pages holding some rows: the slice is a Parquet file of its own
 * (parquet-wasm reads it) holding exactly the rows it says, every type and nesting included; a read of
 * spans through it gives the rows of the full read; and a page index that lies about its pages makes it
 * give up (undefined), never shift rows.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readFileFooter,
  type Thrift,
  thriftStructs,
} from '../../../functions/core/data/parquet/read/file-footer.js';
import { slicePages } from '../../../functions/core/data/parquet/read/page-slice.js';
import { openDataFile, readDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import type { Row } from '../../../functions/core/spec/types.js';
import { allTypesRows, allTypesSchema } from './all-types-fixture.js';
import { type PageLocationTuple, withOffsetIndex } from './lying-page-index.js';
import { createTempWarehouse, type TempWarehouse } from './parquet-test-helpers.js';

describe('slicePages: the pages holding some rows, as a file of their own', () => {
  let wh: TempWarehouse;
  let location: string;
  let bytes: Uint8Array;
  let footer: Thrift;
  let all: Row[];

  beforeAll(async () => {
    wh = await createTempWarehouse();
    // Pages of 3 rows: every column, lists and maps included, has many pages to cut between.
    const rows = Array.from({ length: 6 }, () => allTypesRows).flat();
    const [file] = await writeDataFiles(rows, {
      io: wh.io,
      schema: allTypesSchema,
      specId: 0,
      partition: {},
      nextLocation: wh.locations('slice'),
      pageRowLimit: 3,
    });
    location = file.file_path;
    bytes = await wh.io.read(location);
    footer = readFileFooter(bytes);
    all = await readDataFile(wh.io, location, allTypesSchema);
    expect(thriftStructs(footer, 4)).toHaveLength(1);
  });
  afterAll(async () => {
    await wh?.cleanup();
  });

  /** The rows of a slice, read as a file by parquet-wasm. */
  async function sliceRows(slice: Uint8Array, name: string): Promise<Row[]> {
    const at = wh.locations(name)(0);
    await wh.io.write(at, slice);
    return readDataFile(wh.io, at, allTypesSchema);
  }

  it('holds whole pages around the span, and exactly the rows of the file there', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: all.length - 1 }),
        fc.integer({ min: 1, max: 8 }),
        async (from, length) => {
          // Prepare
          const to = Math.min(all.length, from + length);

          // Act
          const slice = slicePages(bytes, footer, 0, 0, from, to);

          // Assess: no slice when it would start at row 0 (the file as it is reads the same pages)
          expect(slice === undefined).toBe(from < 3);
          if (!slice) return;
          expect(slice.from).toBeLessThanOrEqual(from);
          expect(slice.to).toBeGreaterThanOrEqual(to);
          expect(slice.from % 3).toBe(0);
          expect(slice.to - slice.from).toBeLessThanOrEqual(to - from + 6);
          expect(slice.bytes.byteLength).toBeLessThan(bytes.byteLength);
          expect(await sliceRows(slice.bytes, `s${n++}`)).toEqual(all.slice(slice.from, slice.to));
        },
      ),
      { numRuns: 30 },
    );
  });

  it('reads spans past the first page as those rows of the full read', async () => {
    const opened = await openDataFile(wh.io, location);
    try {
      for (const span of [
        { from: 4, to: 5 },
        { from: all.length - 1, to: all.length },
        { from: 7, to: 20 },
      ]) {
        // Act
        const read = await opened.read(allTypesSchema, [span]);
        const some = await opened.read(
          { type: 'struct', fields: allTypesSchema.fields.filter((f) => f.id === 3 || f.id > 16) },
          [span],
        );

        // Assess
        expect(read).toEqual(all.slice(span.from, span.to));
        expect(some.map((r) => r.l)).toEqual(all.slice(span.from, span.to).map((r) => r.l));
      }
    } finally {
      opened.close();
    }
  });

  it('reads a slice by field id onto an evolved schema: renamed, promoted, added columns', async () => {
    // Prepare: `l` renamed, `i` (int) read as long, `f` (float) as double, a column the file lacks.
    const evolved = {
      type: 'struct' as const,
      fields: [
        ...allTypesSchema.fields.map((f) =>
          f.id === 3
            ? { ...f, name: 'l_renamed' }
            : f.id === 2
              ? { ...f, type: 'long' as const }
              : f.id === 4
                ? { ...f, type: 'double' as const }
                : f,
        ),
        { id: 999, name: 'added', required: false, type: 'string' as const },
      ],
    };
    const opened = await openDataFile(wh.io, location);
    try {
      // Act
      const whole = await opened.read(evolved);
      const span = await opened.read(evolved, [{ from: 10, to: 12 }]);

      // Assess
      expect(slicePages(bytes, footer, 0, 0, 10, 12)).toBeDefined();
      expect(span).toEqual(whole.slice(10, 12));
      expect(span[0].l_renamed).toEqual(all[10].l);
      expect(span[0].added).toBeNull();
    } finally {
      opened.close();
    }
  });

  it('slices a file parquet-wasm (arrow-rs) wrote, by its own page index', async () => {
    // Prepare: snappy is written by parquet-wasm, which cuts pages of 20,480 rows (a list column's
    // pages start elsewhere: with one, the common range would reach back to row 0 and no slice pays).
    const schema = {
      type: 'struct' as const,
      'schema-id': 0,
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' as const },
        { id: 2, name: 's', required: false, type: 'string' as const },
      ],
    };
    const rows = Array.from({ length: 45_000 }, (_, i) => ({
      id: BigInt(i),
      s: i % 5 === 0 ? null : `s${i % 7}`,
    }));
    const [file] = await writeDataFiles(rows, {
      io: wh.io,
      schema,
      specId: 0,
      partition: {},
      nextLocation: wh.locations('arrow-rs'),
      codec: 'snappy',
    });
    const foreign = await wh.io.read(file.file_path);

    // Act
    const slice = slicePages(foreign, readFileFooter(foreign), 0, 0, 30_000, 30_002);
    const opened = await openDataFile(wh.io, file.file_path);
    const read = await opened.read(schema, [{ from: 30_000, to: 30_002 }]).finally(() => opened.close());

    // Assess
    expect([slice?.from, slice?.to]).toEqual([20_480, 40_960]);
    expect(read).toEqual(rows.slice(30_000, 30_002));
  });

  describe('a page index that lies', () => {
    const lies: [string, (pages: PageLocationTuple[]) => PageLocationTuple[]][] = [
      ['every page after the first one row later', (p) => p.map(([a, s, f], i) => [a, s, i > 0 ? f + 1 : f])],
      ['every page one row earlier', (p) => p.map(([a, s, f], i) => [a, s, i > 0 ? f - 1 : f])],
      ['the first page not at row 0', (p) => p.map(([a, s, f], i) => [a, s, i === 0 ? 1 : f])],
      ['two pages swapped', (p) => [p[1], p[0], ...p.slice(2)]],
      ['a page that overlaps the next', (p) => p.map(([a, s, f], i) => [a, i === 2 ? s + 1 : s, f])],
      [
        'a page away from where the one before ends',
        (p) => p.map(([a, s, f], i) => [i === 3 ? a + 64 : a, s, f]),
      ],
    ];

    it.each(lies)('gives up (%s), and the read stays exact', async (_, lie) => {
      // Prepare: column `l` (required long, outside lists) is chunk 2.
      const lied = withOffsetIndex(bytes, 2, lie);
      const at = wh.locations('lied')(0);
      await wh.io.write(at, lied);

      // Act
      const slice = slicePages(lied, readFileFooter(lied), 0, 0, 13, 14);
      const opened = await openDataFile(wh.io, at);
      const read = await opened.read(allTypesSchema, [{ from: 13, to: 14 }]).finally(() => opened.close());

      // Assess
      expect(slice).toBeUndefined();
      expect(read).toEqual(all.slice(13, 14));
    });
  });
});
