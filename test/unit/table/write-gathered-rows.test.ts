/**
 * Gathered rows are split by partition and sorted exactly as row objects are: the same values read at
 * every struct path, the same rows taken by index, and writeRows gives the same DataFiles (partition
 * values, counts, bounds) holding the same rows, whichever form the rows come in.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { readDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { GatheredRows } from '../../../functions/core/data/arrow/gathered-rows.js';
import { compileFittingColumns } from '../../../functions/core/mapping/fast/fitting-columns.js';
import { compileFittingRow, NOT_FITTING } from '../../../functions/core/mapping/fast/fitting-row.js';
import { parsePartitionExpression, parseSortOrder } from '../../../functions/core/spec/partition-spec.js';
import type { DataFile, Row, Schema, StructType } from '../../../functions/core/spec/types.js';
import { readPath } from '../../../functions/core/table/sort-rows.js';
import { writeRows } from '../../../functions/core/table/write-rows.js';
import { plain, schemaAndValues } from '../evolution/fitting-arbitraries.js';
import { tempWarehouse } from '../../support/tables.js';

function gatherBoth(schema: StructType, values: unknown[]): { rows: Row[]; gathered: GatheredRows } {
  const gatherer = compileFittingColumns(schema, new Set());
  const toRow = compileFittingRow(schema);
  const rows: Row[] = [];
  for (const value of values) {
    const row = toRow(value);
    expect(gatherer.append(value)).toBe(row !== NOT_FITTING);
    if (row !== NOT_FITTING) rows.push(row);
  }
  return { rows, gathered: new GatheredRows(gatherer.columns) };
}

/** Every dotted path through structs to any field. */
function structPaths(type: StructType, prefix: string[] = []): string[][] {
  return type.fields.flatMap((f) => {
    const path = [...prefix, f.name];
    return typeof f.type !== 'string' && f.type.type === 'struct'
      ? [path, ...structPaths(f.type, path)]
      : [path];
  });
}

describe('gathered rows, by index', () => {
  it('read the same values at every struct path and take the same rows', () => {
    fc.assert(
      fc.property(schemaAndValues, fc.array(fc.nat(), { maxLength: 8 }), ([schema, values], picks) => {
        const { rows, gathered } = gatherBoth(schema, values);
        for (const path of structPaths(schema)) {
          rows.forEach((row, i) => {
            expect(plain(gathered.valueAt(i, path))).toEqual(plain(readPath(row, path)));
          });
        }
        if (rows.length === 0) return;
        const indices = picks.map((p) => p % rows.length);
        expect(plain(gathered.take(indices).toRows())).toEqual(plain(indices.map((i) => rows[i])));
      }),
      { numRuns: 500 },
    );
  });
});

describe('writeRows with gathered rows', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
  });
  afterAll(() => cleanup());

  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'ts', required: false, type: 'timestamptz' },
      { id: 3, name: 'country', required: false, type: 'string' },
      {
        id: 4,
        name: 'customer',
        required: false,
        type: { type: 'struct', fields: [{ id: 5, name: 'tier', required: false, type: 'int' }] },
      },
      {
        id: 6,
        name: 'tags',
        required: false,
        type: { type: 'list', 'element-id': 7, 'element-required': false, element: 'string' },
      },
    ],
  };
  const values = Array.from({ length: 300 }, (_, i) => ({
    id: i,
    ts: i % 7 === 0 ? null : `2026-11-${String(20 + (i % 5)).padStart(2, '0')}T0${i % 10}:00:00Z`,
    country: ['DE', 'FR', null, 'US'][i % 4],
    customer: i % 6 === 0 ? null : { tier: i % 3 },
    tags: i % 5 === 0 ? null : Array.from({ length: i % 3 }, (_, k) => `t${(i + k) % 4}`),
  }));

  const comparable = (files: DataFile[]) =>
    plain(
      files
        .map(({ file_path: _path, ...rest }) => rest)
        .sort((a, b) => JSON.stringify(plain(a.partition)).localeCompare(JSON.stringify(plain(b.partition)))),
    );

  it.each([
    ['unpartitioned, unsorted', '', ''],
    [
      'partitioned by day and a nested field, sorted',
      'day(ts), customer.tier',
      'country desc nulls last, id',
    ],
    ['bucketed, sorted by a nested field', 'bucket(3, id)', 'customer.tier nulls first'],
  ])('%s: the same files with the same rows', async (name, partitionBy, sortBy) => {
    const id = { namespace: ['gathered'], name: name.replace(/[^a-z]+/g, '_') };
    const table = await catalog.createTable(id, {
      schema,
      partitionSpec: parsePartitionExpression(partitionBy, schema),
      sortOrder: sortBy ? parseSortOrder(sortBy, schema) : undefined,
    });
    const { rows, gathered } = gatherBoth(schema, values);
    expect(gathered.length).toBe(values.length);
    const fromRows = await writeRows(table, rows, { filePrefix: 'rows' });
    const fromColumns = await writeRows(table, gathered, { filePrefix: 'cols' });
    expect(fromRows.length).toBe(partitionBy ? fromRows.length : 1);
    if (partitionBy) expect(fromRows.length).toBeGreaterThan(2);
    expect(comparable(fromColumns)).toEqual(comparable(fromRows));
    const read = async (files: DataFile[]) =>
      plain((await Promise.all(files.map((f) => readDataFile(table.io, f.file_path, schema)))).flat());
    expect(await read(fromColumns)).toEqual(await read(fromRows));
  });
});
