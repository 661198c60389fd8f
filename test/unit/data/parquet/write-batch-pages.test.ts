import { describe, expect, it } from 'vitest';
import { readFooterMetrics } from '../../../../functions/core/data/parquet/write/footer-metrics.js';
import {
  type ArrowParquetOptions,
  encodeBatchAsParquet,
} from '../../../../functions/core/data/parquet/write/write-batch.js';
import type { Row, Value } from '../../../../functions/core/spec/types.js';
import { schemaOf, sqlString } from '../parquet-test-helpers.js';
import { batchOf, columnPages, fromDuck, hyparquetRows, metadataOf, duckAndDir } from './read-back.js';
import { seededRandom } from '../../../support/seeded-random.js';

const schema = schemaOf([
  { id: 1, name: 'id', required: true, type: 'long' },
  {
    id: 2,
    name: 'tags',
    required: false,
    type: { type: 'list', 'element-id': 3, element: 'string', 'element-required': false },
  },
  { id: 4, name: 'status', required: false, type: 'string' },
  {
    id: 5,
    name: 'meta',
    required: true,
    type: {
      type: 'struct',
      fields: [
        { id: 6, name: 'topic', required: true, type: 'string' },
        { id: 7, name: 'note', required: false, type: 'string' },
      ],
    },
  },
  {
    id: 8,
    name: 'counts',
    required: false,
    type: {
      type: 'map',
      'key-id': 9,
      key: 'string',
      'value-id': 10,
      value: 'int',
      'value-required': false,
    },
  },
]);

const STATUSES = ['NEW', 'PAID', 'SHIPPED'];

function makeRows(n: number, seed = 7): Row[] {
  const rand = seededRandom(seed);
  const word = () => Math.floor(rand() * 1e9).toString(36);
  return Array.from({ length: n }, (_, i) => {
    const r = rand();
    const tags: Value =
      r < 0.1 ? null : Array.from({ length: Math.floor(rand() * 6) }, () => (rand() < 0.1 ? null : word()));
    return {
      id: BigInt(i),
      tags,
      status: rand() < 0.05 ? null : STATUSES[i % 3],
      meta: { topic: 'orders', note: rand() < 0.5 ? null : word() },
      counts:
        rand() < 0.2
          ? null
          : new Map<Value, Value>(
              Array.from({ length: Math.floor(rand() * 3) }, (_, k) => [`k${k}`, rand() < 0.2 ? null : k]),
            ),
    };
  });
}

const kv = new Map<string, string>();
const leafIndex = { id: 0, tags: 1, status: 2, topic: 3, note: 4, key: 5, value: 6 };

describe('encodeBatchAsParquet: pages, row groups and dictionaries', () => {
  const env = duckAndDir();

  async function duckRows(bytes: Uint8Array, name: string): Promise<Row[]> {
    const file = await env.dir.file(name, bytes);
    const read = await env.duck.rows(`SELECT * FROM read_parquet(${sqlString(file)})`);
    return read.map((r) =>
      Object.fromEntries(schema.fields.map((f) => [f.name, fromDuck(f.type, r[f.name])])),
    );
  }

  it('splits chunks into pages of about pageBytes, each starting a row, that both readers read', async () => {
    // Prepare
    const rows = makeRows(3000);
    const opts: ArrowParquetOptions = {
      codec: 'zstd',
      rowGroupRows: 10_000,
      keyValueMetadata: kv,
      pageBytes: 2048,
    };

    // Act
    const { bytes, footer } = encodeBatchAsParquet(schema, batchOf(schema, rows), opts);

    // Assess
    const idPages = columnPages(bytes, 0, leafIndex.id, 0);
    expect(idPages).toHaveLength(Math.ceil((3000 * 8) / 2048));
    expect(idPages.every((p) => p.uncompressedSize <= 2048 + 16)).toBe(true);
    const tagPages = columnPages(bytes, 0, leafIndex.tags, 1);
    expect(tagPages.length).toBeGreaterThan(5);
    expect(tagPages.map((p) => p.firstRep)).toEqual(tagPages.map(() => 0));
    expect(tagPages.reduce((s, p) => s + p.numValues, 0)).toBe(Number(footer.valueCounts.get(3)));
    expect(await hyparquetRows(bytes, schema)).toEqual(rows);
    expect(await duckRows(bytes, 'pages.parquet')).toEqual(rows);
    expect(footer).toEqual(readFooterMetrics(bytes));
  });

  it('starts every row group at a row: lists and maps split across groups read back whole', async () => {
    // Prepare
    const rows = makeRows(500, 11);

    // Act
    const { bytes, footer } = encodeBatchAsParquet(schema, batchOf(schema, rows), {
      codec: 'gzip',
      rowGroupRows: 120,
      keyValueMetadata: kv,
    });

    // Assess
    const md = metadataOf(bytes);
    expect(md.row_groups.map((g) => Number(g.num_rows))).toEqual([120, 120, 120, 120, 20]);
    expect(footer.splitOffsets).toEqual(md.row_groups.map((g) => g.file_offset));
    for (let g = 0; g < 5; g++) {
      expect(columnPages(bytes, g, leafIndex.tags, 1)[0].firstRep).toBe(0);
      expect(columnPages(bytes, g, leafIndex.key, 1).at(-1)?.firstRep).toBe(0);
    }
    expect(await hyparquetRows(bytes, schema)).toEqual(rows);
    expect(await duckRows(bytes, 'groups.parquet')).toEqual(rows);
    expect(footer).toEqual(readFooterMetrics(bytes));
  });

  it('dictionary-encodes low-cardinality strings (top level, in a struct, in a map) and not others', async () => {
    // Prepare
    const rows = makeRows(2000, 3);

    // Act
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), {
      codec: 'zstd',
      rowGroupRows: 10_000,
      keyValueMetadata: kv,
      pageBytes: 256,
    });

    // Assess
    const chunks = metadataOf(bytes).row_groups[0].columns.map((c) => c.meta_data);
    const dictionary = (i: number) => chunks[i]?.encodings.includes('RLE_DICTIONARY');
    expect([leafIndex.status, leafIndex.topic, leafIndex.key].map(dictionary)).toEqual([true, true, true]);
    expect([leafIndex.tags, leafIndex.note].map(dictionary)).toEqual([false, false]);
    const status = columnPages(bytes, 0, leafIndex.status, 0);
    expect(status[0]).toMatchObject({ type: 2, numValues: 3, encoding: 0 });
    expect(status.length).toBeGreaterThan(2); // several RLE_DICTIONARY data pages after the dictionary
    expect(status.slice(1).every((p) => p.type === 0 && p.encoding === 8)).toBe(true);
    expect(chunks[leafIndex.status]?.dictionary_page_offset).toBe(BigInt(status[0].offset));
    expect(chunks[leafIndex.status]?.data_page_offset).toBe(BigInt(status[1].offset));
    const keys = columnPages(bytes, 0, leafIndex.key, 1);
    expect(keys.filter((p) => p.type === 0).map((p) => p.firstRep)).toEqual(
      keys.filter((p) => p.type === 0).map(() => 0),
    );
    expect(await hyparquetRows(bytes, schema)).toEqual(rows);
    expect(await duckRows(bytes, 'dictionary.parquet')).toEqual(rows);
  });

  it('tells dictionary values apart that share their first four bytes, length and last byte, or differ by NULs', async () => {
    // Prepare: more such values than the dictionary's signature cache has entries, so they collide
    // there; and short values that differ only by leading NUL bytes (their first four bytes,
    // zero-padded, are the same number).
    const codes = schemaOf([{ id: 1, name: 'code', required: true, type: 'string' }]);
    const pairs = Array.from({ length: 150 }, (_, i) =>
      String.fromCharCode(97 + (i % 26), 65 + (i % 7) + Math.floor(i / 26)),
    );
    const distinct = [
      ...Array.from({ length: 300 }, (_, i) => `code-${String(i).padStart(3, '0')}-x`),
      ...pairs.flatMap((p) => [p, `\u0000${p}`, `\u0000\u0000${p}`]),
    ];
    const rand = seededRandom(5);
    const rows: Row[] = Array.from({ length: 6000 }, () => ({
      code: distinct[Math.floor(rand() * distinct.length)],
    }));

    // Act
    const { bytes } = encodeBatchAsParquet(codes, batchOf(codes, rows), {
      codec: 'zstd',
      rowGroupRows: 10_000,
      keyValueMetadata: kv,
    });

    // Assess
    expect(metadataOf(bytes).row_groups[0].columns[0].meta_data?.encodings).toContain('RLE_DICTIONARY');
    expect(await hyparquetRows(bytes, codes)).toEqual(rows);
  });

  it('starts each row group at its first dictionary page (the split offset readers use)', () => {
    // Prepare
    const statuses = schemaOf([{ id: 1, name: 'status', required: true, type: 'string' }]);
    const rows: Row[] = Array.from({ length: 120 }, (_, i) => ({ status: STATUSES[i % 3] }));

    // Act
    const { bytes, footer } = encodeBatchAsParquet(statuses, batchOf(statuses, rows), {
      codec: 'zstd',
      rowGroupRows: 30,
      keyValueMetadata: kv,
    });

    // Assess
    const groups = metadataOf(bytes).row_groups;
    expect(footer.splitOffsets).toEqual(groups.map((g) => g.columns[0].meta_data?.dictionary_page_offset));
    expect(footer.splitOffsets).toEqual(groups.map((g) => g.file_offset));
    expect(footer).toEqual(readFooterMetrics(bytes));
  });

  it('writes no dictionary when told not to, and the same values', async () => {
    // Prepare
    const rows = makeRows(1000, 5);
    const opts: ArrowParquetOptions = { codec: 'zstd', rowGroupRows: 10_000, keyValueMetadata: kv };

    // Act
    const plain = encodeBatchAsParquet(schema, batchOf(schema, rows), { ...opts, dictionary: false }).bytes;

    // Assess
    const chunks = metadataOf(plain).row_groups[0].columns.map((c) => c.meta_data);
    expect(chunks.some((c) => c?.encodings.includes('RLE_DICTIONARY'))).toBe(false);
    expect(chunks.some((c) => c?.dictionary_page_offset !== undefined)).toBe(false);
    expect(await hyparquetRows(plain, schema)).toEqual(rows);
  });

  it('copies list elements in one piece when no list is null or empty, across pages and row groups', async () => {
    // Prepare
    const lines = schemaOf([
      {
        id: 1,
        name: 'lines',
        required: false,
        type: {
          type: 'list',
          'element-id': 2,
          'element-required': true,
          element: {
            type: 'struct',
            fields: [
              { id: 3, name: 'sku', required: true, type: 'string' },
              { id: 4, name: 'qty', required: true, type: 'int' },
              { id: 5, name: 'price', required: true, type: 'decimal(10, 2)' },
            ],
          },
        },
      },
    ]);
    const rand = seededRandom(9);
    const rows: Row[] = Array.from({ length: 700 }, (_, i) => ({
      lines: Array.from({ length: 1 + (i % 3) }, () => ({
        sku: `SKU-${Math.floor(rand() * 9000)}`,
        qty: Math.floor(rand() * 5),
        price: BigInt(Math.floor(rand() * 1e6)),
      })),
    }));

    // Act
    const { bytes } = encodeBatchAsParquet(lines, batchOf(lines, rows), {
      codec: 'uncompressed',
      rowGroupRows: 250,
      keyValueMetadata: kv,
      pageBytes: 1000,
    });

    // Assess
    const pages = columnPages(bytes, 1, 2, 1);
    expect(pages.length).toBeGreaterThan(2);
    expect(pages.every((p) => p.firstRep === 0)).toBe(true);
    expect(await hyparquetRows(bytes, lines)).toEqual(rows);
    const file = await env.dir.file('lines.parquet', bytes);
    const read = await env.duck.rows(`SELECT * FROM read_parquet(${sqlString(file)})`);
    expect(read.map((r) => ({ lines: fromDuck(lines.fields[0].type, r.lines) }))).toEqual(rows);
  });

  it('writes a valid file for an empty batch', async () => {
    // Act
    const { bytes, footer } = encodeBatchAsParquet(schema, batchOf(schema, []), {
      codec: 'zstd',
      rowGroupRows: 100,
      keyValueMetadata: kv,
    });

    // Assess
    expect(footer).toEqual(readFooterMetrics(bytes));
    expect(footer.rowCount).toBe(0n);
    expect(await duckRows(bytes, 'empty.parquet')).toEqual([]);
  });
});
