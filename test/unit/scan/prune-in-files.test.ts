/**
 * Pruning inside data files (row groups, page index, filter column first) changes nothing but the work
 * done: floe's scan returns the same rows with it as without it, over generated data and filters, with
 * position deletes; and DuckDB, reading the same files, selects the same rows for fixed filters.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import { bindExpression } from '../../../functions/core/scan/bind-expression.js';
import type { Expression, Literal } from '../../../functions/core/scan/expression.js';
import { pruneRowSpans } from '../../../functions/core/scan/prune-row-spans.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import type { ScanPlan } from '../../../functions/core/scan/scan-plan.js';
import type { DataFile, Row, Schema, TableMetadata } from '../../../functions/core/spec/types.js';
import { type DuckDB, openDuckDB, sqlString } from '../data/parquet-test-helpers.js';
import { filterOf } from './filter-arbitrary.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'country', required: false, type: 'string' },
    { id: 3, name: 'qty', required: false, type: 'int' },
    { id: 4, name: 'amount', required: false, type: 'double' },
    { id: 5, name: 'note', required: false, type: 'string' },
    { id: 6, name: 'day', required: false, type: 'date' },
  ],
};

const POSITION_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 2147483546, name: 'file_path', required: true, type: 'string' },
    { id: 2147483545, name: 'pos', required: true, type: 'long' },
  ],
};

const COUNTRIES = ['AT', 'DE', 'FR', 'NL', 'ÄÖ'];
const io = new LocalFileIO();
let root: string;
let counter = 0;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-prune-'));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** Small row groups and pages, so a file has many of both to prune. */
async function writeTable(
  rows: Row[],
  deletedPositions: number[],
): Promise<{ table: LoadedTable; plan: ScanPlan; file: DataFile }> {
  const dir = path.join(root, `t${counter++}`);
  const [file, ...more] = await writeDataFiles(rows, {
    io,
    schema: SCHEMA,
    specId: 0,
    partition: {},
    nextLocation: (i) => `${dir}/data-${i}.parquet`,
    rowGroupSizeBytes: 600,
    pageRowLimit: 7,
  });
  expect(more).toEqual([]);
  const deletes =
    deletedPositions.length === 0
      ? []
      : await writeDataFiles(
          deletedPositions.map((pos) => ({ file_path: file.file_path, pos: BigInt(pos) })),
          {
            io,
            schema: POSITION_SCHEMA,
            specId: 0,
            partition: {},
            nextLocation: (i) => `${dir}/pos-${i}.parquet`,
          },
        );
  for (const d of deletes) d.content = 1;
  const metadata: TableMetadata = {
    'format-version': 2,
    'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c2',
    location: dir,
    'last-sequence-number': 1,
    'last-updated-ms': 1_700_000_000_000,
    'last-column-id': 6,
    schemas: [SCHEMA],
    'current-schema-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [] }],
    'default-spec-id': 0,
    'last-partition-id': 999,
    properties: {},
    'current-snapshot-id': null,
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': [],
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    'default-sort-order-id': 0,
    refs: {},
  };
  const table: LoadedTable = {
    identifier: { namespace: ['db'], name: 't' },
    metadata,
    metadataLocation: '',
    io,
  };
  const plan: ScanPlan = {
    snapshotId: 1n,
    tasks: [
      {
        file,
        dataSequenceNumber: 1n,
        specId: 0,
        deletes: deletes.map((d) => ({ file: d, dataSequenceNumber: 1n, specId: 0 })),
      },
    ],
    funnel: {
      manifestsTotal: 0,
      manifestsAfterPartitionSummaries: 0,
      filesInTable: 1,
      filesAfterPartitionPruning: 1,
      filesAfterManifestSummaries: 1,
      filesAfterStats: 1,
    },
    manifestsRead: 0,
    bytesRead: 0,
  };
  return { table, plan, file };
}

const rowArb = (i: number) =>
  fc
    .record({
      country: fc.option(fc.constantFrom(...COUNTRIES), { nil: null, freq: 5 }),
      qty: fc.option(fc.integer({ min: -5, max: 20 }), { nil: null, freq: 4 }),
      amount: fc.option(fc.oneof(fc.double({ min: -10, max: 10, noNaN: true }), fc.constant(Number.NaN)), {
        nil: null,
        freq: 4,
      }),
      // Sometimes longer than 64 bytes: those pages have no string bounds.
      note: fc.option(fc.constantFrom('a', 'b', 'x'.repeat(70), 'zz'), { nil: null }),
      day: fc.option(fc.integer({ min: 19_000, max: 19_010 }), { nil: null }),
    })
    .map((r) => ({ id: BigInt(i * 2), ...r }));

const rowsArb = fc
  .integer({ min: 1, max: 120 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => rowArb(i))))
  .chain((rows) => {
    // Sorted runs, as compaction writes them, make pages and row groups prunable.
    const sorted = fc
      .boolean()
      .map((sort) =>
        sort ? [...rows].sort((a, b) => String(a.country).localeCompare(String(b.country))) : rows,
      );
    return fc.tuple(
      sorted,
      fc.subarray(
        rows.map((_, i) => i),
        { maxLength: Math.min(10, rows.length) },
      ),
    );
  });

const predicateArb: fc.Arbitrary<Expression> = fc.oneof(
  fc.record({
    op: fc.constantFrom('eq', 'not-eq', 'lt', 'lt-eq', 'gt', 'gt-eq') as fc.Arbitrary<'eq'>,
    term: fc.constant('id'),
    value: fc.integer({ min: -2, max: 250 }).map((n) => BigInt(n) as Literal),
  }),
  fc.record({
    op: fc.constantFrom('eq', 'not-eq', 'lt', 'gt-eq') as fc.Arbitrary<'eq'>,
    term: fc.constant('country'),
    value: fc.constantFrom(...COUNTRIES, 'B', 'Z') as fc.Arbitrary<Literal>,
  }),
  fc.record({
    op: fc.constantFrom('eq', 'lt', 'gt') as fc.Arbitrary<'eq'>,
    term: fc.constant('qty'),
    value: fc.integer({ min: -6, max: 21 }) as fc.Arbitrary<Literal>,
  }),
  fc.record({
    op: fc.constantFrom('eq', 'lt-eq', 'gt') as fc.Arbitrary<'eq'>,
    term: fc.constant('day'),
    value: fc
      .integer({ min: 18_998, max: 19_012 })
      .map((d) => new Date(d * 86_400_000).toISOString().slice(0, 10) as Literal),
  }),
  fc.record({
    op: fc.constantFrom('lt', 'gt', 'not-eq') as fc.Arbitrary<'lt'>,
    term: fc.constant('amount'),
    value: fc.double({ min: -11, max: 11, noNaN: true }) as fc.Arbitrary<Literal>,
  }),
  fc.record({
    op: fc.constantFrom('in', 'not-in') as fc.Arbitrary<'in'>,
    term: fc.constantFrom('country', 'note'),
    values: fc.subarray(['DE', 'NL', 'a', 'zz', 'x'.repeat(70)], { minLength: 1 }) as fc.Arbitrary<Literal[]>,
  }),
  fc
    .record({
      op: fc.constantFrom('is-null', 'not-null', 'is-nan', 'not-nan') as fc.Arbitrary<'is-null'>,
      term: fc.constantFrom('country', 'qty', 'amount', 'note'),
    })
    .filter((p) => !p.op.includes('nan') || p.term === 'amount'),
);

const filterArb = filterOf(predicateArb);

describe('readScan: pruning inside files', () => {
  it('returns the same rows as the plain read, for any data, deletes, filter and projection', async () => {
    await fc.assert(
      fc.asyncProperty(rowsArb, filterArb, fc.boolean(), async ([rows, deleted], filter, narrow) => {
        // Prepare
        const { table, plan } = await writeTable(rows, deleted);
        const schema = narrow
          ? { type: 'struct' as const, fields: [SCHEMA.fields[0], SCHEMA.fields[4]] }
          : undefined;

        // Act
        const pruned = await readScanRows(table, plan, { filter, schema });
        const plain = await readScanRows(table, plan, { filter, schema, pruneInFiles: false });

        // Assess
        expect(pruned).toEqual(plain);
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it('reads one page of a sorted file for a point query', async () => {
    // Prepare
    const rows = Array.from({ length: 500 }, (_, i) => ({
      id: BigInt(i * 2),
      country: COUNTRIES[i % 4],
      qty: i % 20,
      amount: i / 3,
      note: null,
      day: 19_000 + (i % 10),
    }));
    const { table, plan, file } = await writeTable(rows, []);
    const bytes = await io.read(file.file_path);

    // Act
    const spans = pruneRowSpans(bytes, bindExpression({ op: 'eq', term: 'id', value: 314n }, SCHEMA));
    const found = await readScanRows(table, plan, { filter: { op: 'eq', term: 'id', value: 314n } });

    // Assess
    expect(spans).toHaveLength(1);
    const [span] = spans ?? [];
    expect(span.to - span.from).toBeLessThanOrEqual(7);
    expect(span.from).toBeLessThanOrEqual(157);
    expect(span.to).toBeGreaterThan(157);
    expect(found).toEqual([rows[157]]);
  });

  describe('against DuckDB on the same file', () => {
    let duck: DuckDB;
    beforeAll(async () => {
      duck = await openDuckDB();
    });
    afterAll(() => duck.close());

    const cases: [string, Expression, string][] = [
      ['point', { op: 'eq', term: 'id', value: 200n }, 'id = 200'],
      [
        'country and qty',
        {
          op: 'and',
          left: { op: 'eq', term: 'country', value: 'DE' },
          right: { op: 'gt', term: 'qty', value: 12 },
        },
        "country = 'DE' AND qty > 12",
      ],
      [
        'or with nulls',
        { op: 'or', left: { op: 'is-null', term: 'qty' }, right: { op: 'lt', term: 'id', value: 40n } },
        'qty IS NULL OR id < 40',
      ],
    ];

    it.each(cases)('selects the same ids (%s)', async (_, filter, sql) => {
      // Prepare
      const rows = Array.from({ length: 400 }, (_, i) => ({
        id: BigInt(i * 2),
        country: COUNTRIES[Math.floor(i / 50) % 4],
        qty: i % 9 === 0 ? null : i % 25,
        amount: i / 7,
        note: null,
        day: 19_000 + (i % 10),
      }));
      const { table, plan, file } = await writeTable(rows, []);

      // Act
      const floe = await readScanRows(table, plan, { filter });
      const duckRows = await duck.rows(
        `SELECT id FROM read_parquet(${sqlString(file.file_path)}) WHERE ${sql} ORDER BY id`,
      );

      // Assess
      expect(floe.map((r) => r.id)).toEqual(duckRows.map((r) => BigInt(r.id as bigint)));
      expect(floe.length).toBeGreaterThan(0);
    });
  });
});
