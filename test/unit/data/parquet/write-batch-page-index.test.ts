/**
 * The page index floe writes (ColumnIndex / OffsetIndex after the row groups), checked against what
 * hyparquet decodes from the pages themselves, and against DuckDB reading the same file.
 */
import { readColumnIndex, readOffsetIndex } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { encodeBatchAsParquet } from '../../../../functions/core/data/parquet/write/write-batch.js';
import type { Row, StructType } from '../../../../functions/core/spec/types.js';
import { sqlString } from '../parquet-test-helpers.js';
import { batchOf, duckAndDir, hyparquetRows, metadataOf } from './read-back.js';

const schema: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'country', required: false, type: 'string' },
    { id: 3, name: 'amount', required: false, type: 'double' },
    {
      id: 4,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 5, element: 'string', 'element-required': false },
    },
  ],
};

const COUNTRIES = ['DE', 'FR', 'NL', 'PL'];

function rowsOf(n: number): Row[] {
  return Array.from({ length: n }, (_, i) => ({
    id: BigInt(i * 3),
    country: i % 7 === 0 ? null : COUNTRIES[Math.floor(i / 500) % COUNTRIES.length],
    // A run of nulls longer than a page, so one page is all-null.
    amount: i >= 1000 && i < 1800 ? null : (i % 97) / 4,
    tags: i % 5 === 0 ? null : Array.from({ length: i % 3 }, (_, k) => `t${(i + k) % 11}`),
  }));
}

function plusZero(v: unknown): unknown {
  return typeof v === 'number' ? v + 0 : v;
}

function view(bytes: Uint8Array, offset: number, length: number) {
  return { view: new DataView(bytes.buffer, bytes.byteOffset + offset, length), offset: 0 };
}

describe('encodeBatchAsParquet: page index', () => {
  const env = duckAndDir();
  const rows = rowsOf(5000);
  const opts = {
    codec: 'zstd' as const,
    rowGroupRows: 2000,
    pageRows: 300,
    keyValueMetadata: new Map<string, string>(),
  };

  it('points every chunk at an OffsetIndex whose pages start rows as the data holds them', async () => {
    // Act
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), opts);

    // Assess
    const meta = metadataOf(bytes);
    expect(meta.row_groups.map((g) => Number(g.num_rows))).toEqual([2000, 2000, 1000]);
    for (const group of meta.row_groups) {
      for (const chunk of group.columns) {
        expect(chunk.offset_index_offset).toBeDefined();
        const offsets = readOffsetIndex(
          view(bytes, Number(chunk.offset_index_offset), chunk.offset_index_length ?? 0),
        );
        const starts = offsets.page_locations.map((p) => Number(p.first_row_index));
        // pageRows caps every page, whatever its bytes.
        const expected = Array.from({ length: Math.ceil(Number(group.num_rows) / 300) }, (_, k) => k * 300);
        expect(starts).toEqual(expected);
        const md = chunk.meta_data!;
        const firstData = Number(md.data_page_offset);
        expect(Number(offsets.page_locations[0].offset)).toBe(firstData);
        const end =
          Number(md.dictionary_page_offset ?? md.data_page_offset) + Number(md.total_compressed_size);
        const last = offsets.page_locations.at(-1)!;
        expect(Number(last.offset) + last.compressed_page_size).toBe(end);
      }
    }
  });

  it('writes per-page min/max/null counts equal to the values in each page', async () => {
    // Act
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), opts);

    // Assess
    const read = await hyparquetRows(bytes, schema);
    expect(read).toEqual(rows);
    const meta = metadataOf(bytes);
    let groupStart = 0;
    for (const group of meta.row_groups) {
      for (const [c, name] of [
        [0, 'id'],
        [1, 'country'],
        [2, 'amount'],
      ] as const) {
        const chunk = group.columns[c];
        const element = meta.schema.find((e) => e.name === name)!;
        const index = readColumnIndex(
          view(bytes, Number(chunk.column_index_offset), chunk.column_index_length ?? 0),
          element,
        );
        const pages = readOffsetIndex(
          view(bytes, Number(chunk.offset_index_offset), chunk.offset_index_length ?? 0),
        ).page_locations;
        pages.forEach((p, k) => {
          const from = groupStart + Number(p.first_row_index);
          const to =
            k + 1 < pages.length
              ? groupStart + Number(pages[k + 1].first_row_index)
              : groupStart + Number(group.num_rows);
          const values = read.slice(from, to).map((r) => r[name]);
          const present = values.filter((v) => v !== null);
          expect(Number(index.null_counts?.[k])).toBe(values.length - present.length);
          expect(index.null_pages[k]).toBe(present.length === 0);
          if (present.length === 0) return;
          const sorted = [...present].sort((a, b) => (a! < b! ? -1 : a! > b! ? 1 : 0));
          // A zero bound is written as -0 for min and +0 for max (parquet-mr's rule): compare as numbers.
          expect(plusZero(index.min_values[k])).toEqual(sorted[0]);
          expect(plusZero(index.max_values[k])).toEqual(sorted.at(-1));
        });
      }
      // The list leaf has an offset index but its pages also end where rows end.
      expect(group.columns[3].offset_index_offset).toBeDefined();
      groupStart += Number(group.num_rows);
    }
  });

  it('DuckDB reads the same rows, sees the row groups, and filters through the page index', async () => {
    // Prepare
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), opts);
    const file = await env.dir.file('indexed.parquet', bytes);

    // Act
    const groups = await env.duck.rows(
      `SELECT row_group_id, max(row_group_num_rows) AS n FROM parquet_metadata(${sqlString(file)}) GROUP BY 1 ORDER BY 1`,
    );
    const count = await env.duck.rows(`SELECT count(*) AS n FROM read_parquet(${sqlString(file)})`);
    const hit = await env.duck.rows(
      `SELECT id, country, amount FROM read_parquet(${sqlString(file)}) WHERE id = 4500 OR amount IS NULL ORDER BY id LIMIT 3`,
    );

    // Assess
    expect(groups.map((g) => Number(g.n))).toEqual([2000, 2000, 1000]);
    expect(Number(count[0].n)).toBe(5000);
    const expected = rows.filter((r) => r.id === 4500n || r.amount === null).slice(0, 3);
    expect(hit.map((r) => ({ id: BigInt(r.id as bigint), country: r.country, amount: r.amount }))).toEqual(
      expected.map((r) => ({ id: r.id, country: r.country, amount: r.amount })),
    );
  });
});
