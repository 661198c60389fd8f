/**
 * The columnar compaction against the row path it replaces (readScanRows → sortRows → writeDataFiles,
 * compactGroup's `columnar: false`): on random tables — every Iceberg type, nulls at every level,
 * position and equality deletes (on the id, on strings, ints, a struct field, a column dropped since),
 * schema evolution (added, renamed, dropped columns, int → long,
 * float → double, decimal widening), random sort orders, target sizes and codecs — both write the same
 * rows in the same order, as byte-identical files with the same DataFile entries (record counts,
 * bounds, null and NaN counts, sizes).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Catalog, LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { readDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { joinLocation } from '../../../functions/core/io/location.js';
import { compactGroup, type GroupOutcome } from '../../../functions/core/maintenance/compact-group.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import { planCompaction } from '../../../functions/core/maintenance/plan-compaction.js';
import {
  groupResultLocation,
  readGroupResult,
} from '../../../functions/core/maintenance/rewrite-run-files.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { currentSchema } from '../../../functions/core/spec/metadata.js';
import type {
  DataFile,
  IcebergType,
  Row,
  Schema,
  SortField,
  StructField,
  TableIdentifier,
  Transform,
  Value,
} from '../../../functions/core/spec/types.js';
import { tempWarehouse } from '../../support/tables.js';
import { appendBatch, commitFiles, commitPositionDeletes } from './maintenance-fixture.js';

const ID: TableIdentifier = { namespace: ['lake'], name: 'mixed' };

const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 4 });
const long = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const text = fc.oneof(fc.string({ maxLength: 6 }), fc.string({ unit: 'grapheme', maxLength: 4 }));

interface Candidate {
  field: StructField;
  value: fc.Arbitrary<Value>;
}

/** Optional columns a table may start with (id 1 is always there: the equality-delete key). */
const CANDIDATES: Candidate[] = [
  { field: { id: 2, name: 'b', required: false, type: 'boolean' }, value: opt(fc.boolean()) },
  { field: { id: 3, name: 'i', required: false, type: 'int' }, value: opt(fc.integer()) },
  { field: { id: 4, name: 'f', required: false, type: 'float' }, value: opt(fc.float()) },
  { field: { id: 5, name: 'd', required: false, type: 'double' }, value: opt(fc.double()) },
  {
    field: { id: 6, name: 'dt', required: false, type: 'date' },
    value: opt(fc.integer({ min: -1e6, max: 1e6 })),
  },
  {
    field: { id: 7, name: 'ts', required: false, type: 'timestamp' },
    value: opt(fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n })),
  },
  {
    field: { id: 8, name: 'tz', required: false, type: 'timestamptz' },
    value: opt(fc.bigInt({ min: 0n, max: 2n ** 55n })),
  },
  { field: { id: 9, name: 's', required: false, type: 'string' }, value: opt(text) },
  { field: { id: 10, name: 'u', required: false, type: 'uuid' }, value: opt(fc.uuid()) },
  {
    field: { id: 11, name: 'fx', required: false, type: 'fixed[3]' },
    value: opt(fc.uint8Array({ minLength: 3, maxLength: 3 })),
  },
  {
    field: { id: 12, name: 'bin', required: false, type: 'binary' },
    value: opt(fc.uint8Array({ maxLength: 5 })),
  },
  {
    field: { id: 13, name: 'dec', required: false, type: 'decimal(9, 2)' },
    value: opt(fc.bigInt({ min: -(10n ** 9n) + 1n, max: 10n ** 9n - 1n })),
  },
  {
    field: { id: 14, name: 'wide', required: false, type: 'decimal(38, 10)' },
    value: opt(fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n })),
  },
  {
    field: { id: 28, name: 't', required: false, type: 'time' },
    value: opt(fc.bigInt({ min: 0n, max: 86_399_999_999n })),
  },
  {
    field: {
      id: 15,
      name: 'st',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 16, name: 'a', required: true, type: 'int' },
          {
            id: 17,
            name: 'inner',
            required: false,
            type: { type: 'struct', fields: [{ id: 18, name: 'z', required: false, type: 'string' }] },
          },
        ],
      },
    },
    value: opt(fc.record({ a: fc.integer(), inner: opt(fc.record({ z: opt(text) })) })),
  },
  {
    field: {
      id: 19,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 20, element: 'long', 'element-required': false },
    },
    value: opt(fc.array(opt(long), { maxLength: 3 })),
  },
  {
    field: {
      id: 21,
      name: 'attrs',
      required: false,
      type: {
        type: 'map',
        'key-id': 22,
        key: 'string',
        'value-id': 23,
        value: 'double',
        'value-required': false,
      },
    },
    value: opt(
      fc
        .array(fc.tuple(text, opt(fc.double())), { maxLength: 3 })
        .map((pairs) => new Map<Value, Value>(pairs)),
    ),
  },
  {
    field: {
      id: 24,
      name: 'pts',
      required: false,
      type: {
        type: 'list',
        'element-id': 25,
        'element-required': true,
        element: {
          type: 'struct',
          fields: [
            { id: 26, name: 'x', required: true, type: 'double' },
            { id: 27, name: 'y', required: false, type: 'string' },
          ],
        },
      },
    },
    value: opt(fc.array(fc.record({ x: fc.double(), y: opt(text) }), { maxLength: 2 })),
  },
];

const KEY: Candidate = {
  field: { id: 1, name: 'id', required: true, type: 'long' },
  value: fc.bigInt({ min: 0n, max: 12n }),
};

/** Columns sort orders may use, with the transforms that apply to them. */
const SORTABLE: Record<number, string[]> = {
  1: ['identity', 'bucket[3]', 'truncate[4]'],
  2: ['identity'],
  3: ['identity', 'bucket[2]'],
  5: ['identity'],
  6: ['identity', 'month'],
  7: ['identity', 'day', 'hour'],
  9: ['identity', 'truncate[1]'],
  13: ['identity', 'truncate[100]'],
  16: ['identity'],
};

type Evolution = 'add' | 'rename' | 'drop' | 'promote';

interface Scenario {
  columns: number[];
  batches: number;
  evolveAfter: number;
  evolutions: Evolution[];
  sort: { source: number; transform: number; desc: boolean; nullsFirst: boolean }[];
  target: number | undefined;
  codec: string;
  positionDeletes: { file: number; positions: number[] }[];
  equalityKeys: bigint[];
  /** Equality deletes on other columns: which ones, and which written rows' values they delete. */
  keyed: { ids: number[]; picks: number[] };
  seed: number;
}

const scenarios: fc.Arbitrary<Scenario> = fc.record({
  columns: fc.subarray(CANDIDATES.map((_, k) => k)),
  batches: fc.integer({ min: 2, max: 4 }),
  evolveAfter: fc.integer({ min: 0, max: 3 }),
  evolutions: fc.subarray<Evolution>(['add', 'rename', 'drop', 'promote']),
  sort: fc.array(
    fc.record({
      source: fc.constantFrom(...Object.keys(SORTABLE).map(Number)),
      transform: fc.nat(),
      desc: fc.boolean(),
      nullsFirst: fc.boolean(),
    }),
    { maxLength: 3 },
  ),
  target: fc.constantFrom(undefined, 3000),
  codec: fc.constantFrom('zstd', 'snappy', 'gzip', 'uncompressed'),
  positionDeletes: fc.array(
    fc.record({ file: fc.nat(), positions: fc.uniqueArray(fc.nat({ max: 20 }), { maxLength: 5 }) }),
    { maxLength: 2 },
  ),
  equalityKeys: fc.uniqueArray(fc.bigInt({ min: 0n, max: 12n }), { maxLength: 3 }),
  keyed: fc.record({
    ids: fc.constantFrom([1, 16], [9], [3], [16], [9, 3]),
    picks: fc.array(fc.nat(), { maxLength: 3 }),
  }),
  seed: fc.integer(),
});

/** The schema after the scenario's evolutions (ids kept; names, types and presence changed). */
function evolve(
  schema: Schema,
  evolutions: Evolution[],
  sortSources: Set<number>,
  preferDropped: number[],
): Schema {
  let fields = [...schema.fields];
  for (const e of evolutions) {
    if (e === 'add') {
      fields.push({ id: 40, name: 'added', required: false, type: 'string' });
      fields.push({
        id: 41,
        name: 'added_st',
        required: false,
        type: { type: 'struct', fields: [{ id: 42, name: 'q', required: false, type: 'long' }] },
      });
    } else if (e === 'rename') {
      fields = fields.map((f) => (f.id === 1 ? f : { ...f, name: `${f.name}_r` }));
    } else if (e === 'drop') {
      // An equality-delete key column first: its deletes must still apply through the older schema.
      const droppable = fields.filter((f) => f.id !== 1 && !sortSources.has(f.id) && f.id < 40);
      const victim = droppable.find((f) => preferDropped.includes(f.id)) ?? droppable[0];
      if (victim) fields = fields.filter((f) => f !== victim);
    } else {
      const promoted: Record<string, string> = {
        int: 'long',
        float: 'double',
        'decimal(9, 2)': 'decimal(12, 2)',
      };
      fields = fields.map((f) =>
        typeof f.type === 'string' && promoted[f.type] && !sortSources.has(f.id)
          ? { ...f, type: promoted[f.type] as IcebergType }
          : f,
      );
    }
  }
  return { ...schema, 'schema-id': schema['schema-id'] + 1, fields };
}

/** Random rows for `schema` (names as the schema has them now). */
function rowsFor(schema: Schema, count: number, seed: number): Row[] {
  const byId = new Map([KEY, ...CANDIDATES].map((c) => [c.field.id, c.value]));
  const extra: Record<number, fc.Arbitrary<Value>> = {
    40: opt(text),
    41: opt(fc.record({ q: opt(long) })),
  };
  const promotedValue = (f: StructField, a: fc.Arbitrary<Value>): fc.Arbitrary<Value> =>
    f.type === 'long' && f.id === 3 ? a.map((v) => (v === null ? null : BigInt(v as number))) : a;
  const record = fc.record(
    Object.fromEntries(
      schema.fields.map((f) => [
        f.name,
        promotedValue(f, byId.get(f.id) ?? extra[f.id] ?? fc.constant(null)),
      ]),
    ),
  );
  return fc.sample(fc.array(record, { minLength: count, maxLength: count }), {
    seed,
    numRuns: 1,
  })[0] as Row[];
}

async function evolveTable(catalog: Catalog, schema: Schema): Promise<void> {
  await catalog.commitTable(
    ID,
    [],
    [
      { action: 'add-schema', schema },
      { action: 'set-current-schema', 'schema-id': -1 },
    ],
  );
}

async function commitEqualityDeletes(catalog: Catalog, keys: bigint[]): Promise<void> {
  if (keys.length === 0) return;
  const table = await catalog.loadTable(ID);
  const keySchema: Schema = { type: 'struct', 'schema-id': 0, fields: [KEY.field] };
  const files = await writeDataFiles(
    keys.map((id) => ({ id })),
    {
      io: table.io,
      schema: keySchema,
      specId: 0,
      partition: {},
      content: 2,
      equalityIds: [1],
      nextLocation: (i) => joinLocation(table.metadata.location, 'data', `eq-${i}.parquet`),
    },
  );
  await commitFiles(catalog, 'delete', [], files, ID);
}

/** A written row's value of field `id` (top level, or `st.a`), whatever the column is named now. */
function fieldValue(row: Row, schema: Schema, id: number): Value {
  if (id === 16) {
    const st = schema.fields.find((f) => f.id === 15);
    const value = st ? row[st.name] : null;
    return value === null || value === undefined ? null : ((value as Row).a ?? null);
  }
  const field = schema.fields.find((f) => f.id === id);
  return field ? (row[field.name] ?? null) : null;
}

/**
 * Equality deletes keyed on `ids` holding the values of some written rows (plus one all-null key), the
 * key columns typed as the newest schema holding them types them (a column dropped since still keys).
 */
async function commitKeyedDeletes(
  catalog: Catalog,
  written: { row: Row; schema: Schema }[],
  ids: number[],
  picks: number[],
): Promise<void> {
  const table = await catalog.loadTable(ID);
  const newestFirst = [...table.metadata.schemas].reverse();
  const typeOf = (id: number): IcebergType | undefined => {
    for (const schema of newestFirst) {
      const top = schema.fields.find((f) => f.id === (id === 16 ? 15 : id));
      if (top) return id === 16 ? 'int' : top.type;
    }
    return undefined;
  };
  if (picks.length === 0 || ids.some((id) => typeOf(id) === undefined)) return;
  const fields: StructField[] = ids.map((id) =>
    id === 16
      ? {
          id: 15,
          name: 'st',
          required: false,
          type: { type: 'struct', fields: [{ id: 16, name: 'a', required: false, type: 'int' }] },
        }
      : { id, name: `k${id}`, required: false, type: typeOf(id) as IcebergType },
  );
  const keyOf = (row: Row, schema: Schema): Row =>
    Object.fromEntries(
      ids.map((id, j) => {
        const v = fieldValue(row, schema, id);
        if (id === 16) return [fields[j].name, v === null ? null : { a: v }];
        return [fields[j].name, typeOf(id) === 'long' && typeof v === 'number' ? BigInt(v) : v];
      }),
    );
  const keys = [
    ...picks.map((p) => keyOf(written[p % written.length].row, written[p % written.length].schema)),
    Object.fromEntries(fields.map((f) => [f.name, null])),
  ];
  const files = await writeDataFiles(keys, {
    io: table.io,
    schema: { type: 'struct', 'schema-id': 0, fields },
    specId: 0,
    partition: {},
    content: 2,
    equalityIds: ids,
    nextLocation: (i) => joinLocation(table.metadata.location, 'data', `eq-keyed-${i}.parquet`),
  });
  await commitFiles(catalog, 'delete', [], files, ID);
}

/** Builds the scenario's table; returns it loaded, ready to plan. */
async function buildTable(catalog: Catalog, s: Scenario): Promise<LoadedTable> {
  const initial: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [KEY.field, ...s.columns.map((k) => CANDIDATES[k].field)],
  };
  const present = new Set(initial.fields.map((f) => f.id));
  const sortFields: SortField[] = s.sort
    .filter((f) => present.has(f.source))
    .map((f) => ({
      'source-id': f.source,
      transform: SORTABLE[f.source][f.transform % SORTABLE[f.source].length] as Transform,
      direction: f.desc ? 'desc' : 'asc',
      'null-order': f.nullsFirst ? 'nulls-first' : 'nulls-last',
    }));
  await catalog.createTable(ID, {
    schema: initial,
    properties: {
      'write.avro.compression-codec': 'uncompressed',
      'write.parquet.compression-codec': s.codec,
      ...(s.target ? { 'write.target-file-size-bytes': String(s.target) } : {}),
    },
    ...(sortFields.length > 0 ? { sortOrder: { 'order-id': 1, fields: sortFields } } : {}),
  });
  let schema = initial;
  const written: { row: Row; schema: Schema }[] = [];
  for (let b = 0; b < s.batches; b++) {
    if (b === s.evolveAfter && s.evolutions.length > 0) {
      schema = evolve(schema, s.evolutions, new Set(sortFields.map((f) => f['source-id'])), s.keyed.ids);
      await evolveTable(catalog, schema);
    }
    const rows = rowsFor(schema, 1 + ((s.seed + b * 7) & 15), s.seed + b);
    for (const row of rows) written.push({ row, schema });
    await appendBatch(catalog, rows, (b + 1) * 100, ID);
  }
  const files = (await planScan(await catalog.loadTable(ID))).tasks.map((t) => t.file);
  for (const d of s.positionDeletes) {
    await commitPositionDeletes(catalog, files[d.file % files.length], d.positions, ID);
  }
  await commitEqualityDeletes(catalog, s.equalityKeys);
  await commitKeyedDeletes(catalog, written, s.keyed.ids, s.keyed.picks);
  return catalog.loadTable(ID);
}

/** Everything of a DataFile but its path. */
function entryOf(file: DataFile): Omit<DataFile, 'file_path'> {
  const { file_path: _path, ...rest } = file;
  return rest;
}

describe('columnar compaction writes what the row path writes', () => {
  it('same rows in the same order, byte-identical files, same DataFile entries', async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async (s) => {
        const { catalog, cleanup } = await tempWarehouse();
        try {
          const table = await buildTable(catalog, s);
          const { plan } = await planCompaction(
            table,
            resolveSettings(table.metadata),
            'run-1',
            'lake.mixed',
          );
          if (!plan) return;
          const schema = currentSchema(table.metadata);
          for (const group of plan.groups) {
            const location = groupResultLocation(table.metadata.location, plan.runId, group.index);
            // The group's result file (none when every row was deleted), removed for the next run.
            const resultOf = async (outcome: GroupOutcome): Promise<DataFile[]> => {
              if (!outcome.written) return [];
              const files = await readGroupResult(table.io, location, group.specId);
              await table.io.delete(location);
              return files;
            };
            const rowPath = await compactGroup(table, plan, group.index, { columnar: false });
            const rowFiles = await resultOf(rowPath);
            const columnar = await compactGroup(table, plan, group.index);
            const columnarFiles = await resultOf(columnar);
            expect(columnar).toEqual(rowPath);
            expect(columnarFiles.map(entryOf)).toEqual(rowFiles.map(entryOf));
            const rowsOf = async (files: DataFile[]) =>
              (await Promise.all(files.map((f) => readDataFile(table.io, f.file_path, schema)))).flat();
            expect(await rowsOf(columnarFiles)).toEqual(await rowsOf(rowFiles));
            for (let k = 0; k < rowFiles.length; k++) {
              const [a, b] = await Promise.all([
                table.io.read(columnarFiles[k].file_path),
                table.io.read(rowFiles[k].file_path),
              ]);
              expect(Buffer.compare(a, b)).toBe(0);
            }
          }
        } finally {
          await cleanup();
        }
      }),
      {
        numRuns: 40,
        examples: [
          // every row deleted: the key column was dropped before any row was written, so each row's
          // key is null, as the delete's all-null key is
          [
            {
              columns: [7],
              batches: 2,
              evolveAfter: 0,
              evolutions: ['drop'],
              sort: [],
              target: undefined,
              codec: 'zstd',
              positionDeletes: [],
              equalityKeys: [],
              keyed: { ids: [9], picks: [0] },
              seed: 0,
            },
          ],
        ],
      },
    );
  }, 240_000);
});
