/**
 * The value corpus (issue 20, "No value is changed without a dead letter"): spellings of a value that
 * floe once stored as some other value — offsets beyond ±18:00, decimals that underflow as doubles,
 * -0, unsigned five-digit years, offsets on a timestamp without zone, numbers written as strings —
 * each with the value it must store or the dead letter (stage and reason) it must become.
 *
 * Every case runs through the REAL ingest path (`ingestEvent` on an embedded catalog) four ways, one
 * batch each, so the fast paths are held to the same answers as the general one:
 *   scan     the default route: JSON text scanned straight into columns (fitting-json.ts), the rest
 *            decoded and mapped by mapBatch;
 *   objects  a route with `when`: JSON.parse, then the fitting-columns fast path on objects;
 *   general  a type rule on `id` only: no fitting fast path, every value by json-to-value.ts;
 *   rules    a type rule on every column: every value by coercions.ts.
 * Expected values are worked out by hand (Python's datetime for the microseconds), not by floe.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { DLQ_SCHEMA, type FailedStage } from '../../../functions/core/records/dead-letters.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { kafkaLineageType } from '../../../functions/core/records/kafka-lineage.js';
import { parseMappingConfig } from '../../../functions/core/mapping/mapping-config.js';
import { parseRouteCondition } from '../../../functions/core/mapping/route-condition.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import type { Row, Schema, StructType, TableIdentifier, Value } from '../../../functions/core/spec/types.js';
import { duckdbQuery, sqlString } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';
import { b64 } from './bad-input-cases.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'amount', required: false, type: 'decimal(10, 2)' },
    { id: 3, name: 'weight', required: false, type: 'double' },
    { id: 4, name: 'f', required: false, type: 'float' },
    { id: 5, name: 'at', required: false, type: 'timestamptz' },
    { id: 6, name: 'local', required: false, type: 'timestamp' },
    { id: 7, name: 'day', required: false, type: 'date' },
    { id: 8, name: 'n', required: false, type: 'long' },
  ],
};
type Column = 'amount' | 'weight' | 'f' | 'at' | 'local' | 'day' | 'n';

interface Dead {
  stage: FailedStage;
  error: RegExp;
}
interface ValueCase {
  column: Column;
  /** The value as written in the record's JSON text. */
  json: string;
  want: { value: Value } | Dead;
  /** Under a type rule (coercions.ts) the reconciliation leaves the value to the conversion: stage map. */
  rule?: Dead;
}

/** 2026-11-20T10:00:00Z in µs (Python: datetime(2026, 11, 20, 10, tzinfo=timezone.utc)). */
const NOV20_10Z = 1_795_168_800_000_000n;
const HOUR = 3_600_000_000n;

const OFFSET_BEYOND = /has the zone offset .+, beyond ±18:00 \(or minutes past 59\)/;
const UNSIGNED_YEAR = /has a year of more than four digits without a sign \(ISO 8601 writes it \+10000-…\)/;
const LOCAL_OFFSET = /but the column is a timestamp without zone \(local wall-clock time\)/;

const CASES: ValueCase[] = [
  // 9. zone offsets: ±18:00 at most, minutes 00–59
  { column: 'at', json: '"2026-11-20T10:00:00+25:00"', want: { stage: 'map', error: OFFSET_BEYOND } },
  { column: 'at', json: '"2026-11-20T10:00:00-99:99"', want: { stage: 'map', error: OFFSET_BEYOND } },
  { column: 'at', json: '"2026-11-20T10:00:00+2500"', want: { stage: 'map', error: OFFSET_BEYOND } },
  { column: 'at', json: '"2026-11-20T10:00:00+18:01"', want: { stage: 'map', error: OFFSET_BEYOND } },
  { column: 'at', json: '"2026-11-20T10:00:00+12:60"', want: { stage: 'map', error: OFFSET_BEYOND } },
  { column: 'at', json: '"2026-11-20T10:00:00+18:00"', want: { value: NOV20_10Z - 18n * HOUR } },
  { column: 'at', json: '"2026-11-20T10:00:00-18:00"', want: { value: NOV20_10Z + 18n * HOUR } },
  { column: 'at', json: '"2026-11-20T10:00:00+05:30"', want: { value: 1_795_149_000_000_000n } },
  { column: 'at', json: '"2026-11-20T10:00:00+0530"', want: { value: 1_795_149_000_000_000n } },
  { column: 'at', json: '"2026-11-20 10:00:00.5-05"', want: { value: NOV20_10Z + 5n * HOUR + 500_000n } },
  { column: 'day', json: '"2026-11-20T10:00:00+25:00"', want: { stage: 'map', error: OFFSET_BEYOND } },
  // 10. decimals: exact or a dead letter, whatever the spelling
  {
    column: 'amount',
    json: '123e-400',
    want: { stage: 'schema', error: /amount: the number 123e-400 has 400 decimal places/ },
    rule: { stage: 'map', error: /amount: 123e-400 has more than 2 decimal places \(no rounding is done\)/ },
  },
  {
    column: 'amount',
    json: '1e-325',
    want: { stage: 'schema', error: /amount: the number 1e-325 has 325 decimal places/ },
    rule: { stage: 'map', error: /amount: 1e-325 has more than 2 decimal places/ },
  },
  {
    column: 'amount',
    json: '-1e-400',
    want: { stage: 'schema', error: /amount: the number -1e-400 has 400 decimal places/ },
    rule: { stage: 'map', error: /amount: -1e-400 has more than 2 decimal places/ },
  },
  {
    column: 'amount',
    json: '"123e-400"',
    want: { stage: 'schema', error: /amount: the string "123e-400" has 400 decimal places/ },
    rule: { stage: 'map', error: /amount: 123e-400 has more than 2 decimal places/ },
  },
  {
    column: 'amount',
    json: '0.001',
    want: { stage: 'schema', error: /amount: number 0\.001 has 3 decimal places/ },
    rule: { stage: 'map', error: /amount: 0\.001 has more than 2 decimal places/ },
  },
  {
    column: 'amount',
    json: '1e400',
    want: { stage: 'schema', error: /amount: the number 1e400 needs 403 digits, more than a decimal holds/ },
    rule: { stage: 'map', error: /amount: 1e400 does not fit decimal\(10, 2\)/ },
  },
  {
    // Formerly a RangeError (a billion zeros padded) under a type rule: the whole batch failed, forever.
    column: 'amount',
    json: '"1e999999999"',
    want: { stage: 'schema', error: /amount: the string "1e999999999" needs 1000000002 digits/ },
    rule: { stage: 'map', error: /amount: 1e999999999 does not fit decimal\(10, 2\)/ },
  },
  { column: 'amount', json: '0e-400', want: { value: 0n } },
  { column: 'amount', json: '-0', want: { value: 0n } },
  { column: 'amount', json: '1.5e2', want: { value: 15000n } },
  { column: 'amount', json: '12.345E1', want: { value: 12345n } },
  { column: 'amount', json: '"1E+2"', want: { value: 10000n } },
  // ... and integers: 1e-400 is not 0 (JSON.parse's double was)
  {
    column: 'n',
    json: '1e-400',
    want: {
      stage: 'schema',
      error: /n: the number 1e-400 is not an integer \(long → double is not a compatible/,
    },
    rule: { stage: 'map', error: /n: expected an integer, got the number 1e-400/ },
  },
  { column: 'n', json: '0e-400', want: { value: 0n } },
  { column: 'n', json: '1E2', want: { value: 100n } },
  { column: 'n', json: '-0', want: { value: 0n } },
  // 11. -0 keeps its sign bit (IEEE: -1e-400 rounds to -0, 123e-400 to +0)
  { column: 'weight', json: '-0', want: { value: -0 } },
  { column: 'weight', json: '-0.0', want: { value: -0 } },
  { column: 'weight', json: '-0e5', want: { value: -0 } },
  { column: 'weight', json: '0', want: { value: 0 } },
  { column: 'weight', json: '-1e-400', want: { value: -0 } },
  { column: 'weight', json: '123e-400', want: { value: 0 } },
  { column: 'weight', json: '1e-320', want: { value: 1e-320 } },
  { column: 'f', json: '-0.0', want: { value: -0 } },
  {
    column: 'weight',
    json: '1e400',
    want: { stage: 'map', error: /weight: 1e400 is out of range for a double/ },
  },
  // 13(c). strings that spell a number go into float/double columns, NaN and ±Infinity as before
  { column: 'weight', json: '"NaN"', want: { value: Number.NaN } },
  { column: 'weight', json: '"Infinity"', want: { value: Number.POSITIVE_INFINITY } },
  { column: 'weight', json: '"-Infinity"', want: { value: Number.NEGATIVE_INFINITY } },
  { column: 'weight', json: '"1.5"', want: { value: 1.5 } },
  { column: 'weight', json: '"-0.0"', want: { value: -0 } },
  { column: 'weight', json: '" 2.5e1 "', want: { value: 25 } },
  { column: 'f', json: '"1.5"', want: { value: 1.5 } },
  {
    column: 'weight',
    json: '"1e400"',
    want: { stage: 'map', error: /weight: 1e400 is out of range for a double/ },
  },
  {
    column: 'weight',
    json: '"1,5"',
    want: { stage: 'schema', error: /weight: the string "1,5" cannot go into the double column/ },
    rule: { stage: 'map', error: /weight: expected a number, got the string "1,5"/ },
  },
  {
    column: 'weight',
    json: '"nan"',
    want: { stage: 'schema', error: /weight: the string "nan" cannot go into the double column/ },
    rule: { stage: 'map', error: /weight: expected a number, got the string "nan"/ },
  },
  // 13(a). a year of five digits needs its sign
  { column: 'day', json: '"10000-01-01"', want: { stage: 'map', error: UNSIGNED_YEAR } },
  { column: 'at', json: '"10000-01-01T00:00:00Z"', want: { stage: 'map', error: UNSIGNED_YEAR } },
  // Python: (date(9999, 12, 31) - date(1970, 1, 1)).days + 1
  { column: 'day', json: '"+10000-01-01"', want: { value: 2_932_897 } },
  { column: 'at', json: '"+10000-01-01T00:00:00Z"', want: { value: 253_402_300_800_000_000n } },
  { column: 'day', json: '"2026-11-20"', want: { value: 20_777 } },
  // 13(b). a timestamp without zone is the wall clock as written: a nonzero offset is a dead letter
  { column: 'local', json: '"2026-11-20T10:00:00"', want: { value: NOV20_10Z } },
  { column: 'local', json: '"2026-11-20T10:00:00Z"', want: { value: NOV20_10Z } },
  { column: 'local', json: '"2026-11-20T10:00:00+00:00"', want: { value: NOV20_10Z } },
  { column: 'local', json: '"2026-11-20T10:00:00+01:00"', want: { stage: 'map', error: LOCAL_OFFSET } },
  { column: 'local', json: '"2026-11-20T10:00:00-0800"', want: { stage: 'map', error: LOCAL_OFFSET } },
  { column: 'local', json: '"2026-11-20T10:00:00+25:00"', want: { stage: 'map', error: OFFSET_BEYOND } },
];

const COLUMNS: Column[] = ['amount', 'weight', 'f', 'at', 'local', 'day', 'n'];
type Way = 'scan' | 'objects' | 'general' | 'rules';
const WAYS: Record<Way, Partial<TableRoute>> = {
  scan: {},
  objects: { when: parseRouteCondition({ field: 'id', exists: true }) },
  general: { mapping: parseMappingConfig({ columns: { id: { type: 'long' } } }) },
  rules: {
    mapping: parseMappingConfig({
      columns: Object.fromEntries(
        SCHEMA.fields.map((f) => [f.name, { type: f.type }]).filter(([name]) => name !== 'id'),
      ),
    }),
  },
};

async function rowsOf(catalog: EmbeddedCatalog, id: TableIdentifier): Promise<Row[]> {
  if (!(await catalog.tableExists(id))) return [];
  const table = await catalog.loadTable(id);
  return readScanRows(table, await planScan(table));
}

/** Values compared with -0, NaN and bigints told apart. */
const shown = (v: unknown): string => (typeof v === 'bigint' ? `${v}n` : Object.is(v, -0) ? '-0' : String(v));

function esm(topic: string, values: string[], headers?: Record<string, number[] | null>[]) {
  return {
    eventSource: 'aws:kafka',
    records: {
      [`${topic}-0`]: values.map((text, offset) => ({
        topic,
        partition: 0,
        offset,
        timestamp: 1_795_168_800_000 + offset,
        timestampType: 'CREATE_TIME',
        key: null,
        value: b64(text),
        headers: headers ?? [],
      })),
    },
  };
}

describe('the value corpus through the real ingest path, fast and general', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
  });
  afterAll(() => cleanup());

  it('holds every spelling once', () => {
    const keys = CASES.map((c) => `${c.column} ${c.json}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(CASES.every((c) => COLUMNS.includes(c.column))).toBe(true);
  });

  it.each(Object.keys(WAYS) as Way[])(
    '%s: each value is stored as expected or dead-lettered',
    async (way) => {
      const topic = `values_${way}`;
      const id: TableIdentifier = { namespace: ['values'], name: way };
      const route: TableRoute = {
        table: id,
        topics: [topic],
        schema: SCHEMA,
        kafkaLineage: true,
        properties: {},
        ...WAYS[way],
      };
      // One record per case, with its offset as id; a good record first and last.
      const texts = CASES.map((c, i) => `{"id": ${i}, "${c.column}": ${c.json}}`);
      const event = esm(topic, texts);

      const report = await ingestEvent({ catalog, routes: [route] }, event);

      const rows = new Map((await rowsOf(catalog, id)).map((r) => [Number(r.id), r]));
      const dlq = new Map(
        (await rowsOf(catalog, { namespace: ['values'], name: `${way}__dlq` })).map((r) => [
          Number(r.offset),
          r,
        ]),
      );
      const outcomes = CASES.map((c, i) => {
        const row = rows.get(i);
        const letter = dlq.get(i);
        return `${c.column} ${c.json} → ${row ? shown(row[c.column]) : `${letter?.stage}: ${letter?.error}`}`;
      });
      const wanted = CASES.map((c, i) => {
        const dead = 'value' in c.want ? undefined : way === 'rules' && c.rule ? c.rule : c.want;
        if (!dead) return `${c.column} ${c.json} → ${shown((c.want as { value: Value }).value)}`;
        // The reason must match; the outcome line then reads as the letter's own.
        const letter = dlq.get(i);
        const matches = letter?.stage === dead.stage && dead.error.test(String(letter?.error));
        return matches ? outcomes[i] : `${c.column} ${c.json} → ${dead.stage}: ${dead.error}`;
      });
      expect(outcomes).toEqual(wanted);
      // Nothing lost, nothing twice: every record is a row or a dead letter.
      expect(rows.size + dlq.size).toBe(CASES.length);
      expect(report.tables[0]).toMatchObject({ rowsWritten: rows.size, deadLettered: dlq.size });
    },
  );

  it('keeps -0 in the Parquet file and in its Iceberg bounds (-0 orders before +0)', async () => {
    const topic = 'values_zero';
    const id: TableIdentifier = { namespace: ['values'], name: 'zero' };
    const route: TableRoute = {
      table: id,
      topics: [topic],
      schema: SCHEMA,
      kafkaLineage: true,
      properties: {},
    };
    await ingestEvent(
      { catalog, routes: [route] },
      esm(topic, ['{"id": 1, "weight": -0.0, "f": -0}', '{"id": 2, "weight": -0, "f": -0.0}']),
    );
    const table = await catalog.loadTable(id);
    const plan = await planScan(table);
    expect((await readScanRows(table, plan)).map((r) => [shown(r.weight), shown(r.f)])).toEqual([
      ['-0', '-0'],
      ['-0', '-0'],
    ]);
    const file = plan.tasks[0].file;
    // Python: struct.pack('<d', -0.0).hex() == '0000000000000080', struct.pack('<f', -0.0).hex() == '00000080'
    expect(Buffer.from(file.lower_bounds?.get(3) ?? []).toString('hex')).toBe('0000000000000080');
    expect(Buffer.from(file.upper_bounds?.get(3) ?? []).toString('hex')).toBe('0000000000000080');
    expect(Buffer.from(file.lower_bounds?.get(4) ?? []).toString('hex')).toBe('00000080');
    // A reader no one here wrote sees the sign too: 1 / -0 is -Infinity.
    const path = file.file_path.startsWith('file:') ? new URL(file.file_path).pathname : file.file_path;
    const duck = await duckdbQuery(
      `select id, (1 / weight)::varchar as w, (1 / f)::varchar as f from read_parquet(${sqlString(path)}) order by id`,
    );
    expect(duck).toEqual([
      { id: 1n, w: '-inf', f: '-inf' },
      { id: 2n, w: '-inf', f: '-inf' },
    ]);

    // -0 and +0 together: the lower bound is -0, the upper +0 (Iceberg orders -0 before +0).
    const both: TableIdentifier = { namespace: ['values'], name: 'zeros' };
    await ingestEvent(
      { catalog, routes: [{ ...route, table: both, topics: ['values_zeros'] }] },
      esm('values_zeros', ['{"id": 1, "weight": 0}', '{"id": 2, "weight": -0.0}']),
    );
    const [mixed] = (await planScan(await catalog.loadTable(both))).tasks.map((t) => t.file);
    expect(Buffer.from(mixed.lower_bounds?.get(3) ?? []).toString('hex')).toBe('0000000000000080');
    expect(Buffer.from(mixed.upper_bounds?.get(3) ?? []).toString('hex')).toBe('0000000000000000');
  });

  it('keeps a null header value null, distinct from an empty one: in _kafka, in mapped columns, in the DLQ', async () => {
    const topic = 'values_headers';
    const id: TableIdentifier = { namespace: ['values'], name: 'headers' };
    const route: TableRoute = {
      table: id,
      topics: [topic],
      schema: {
        ...SCHEMA,
        fields: [
          ...SCHEMA.fields,
          { id: 11, name: 'gone_text', required: false, type: 'string' },
          { id: 12, name: 'empty_text', required: false, type: 'string' },
          { id: 13, name: 'gone_bytes', required: false, type: 'binary' },
        ],
      },
      kafkaLineage: true,
      properties: {},
      mapping: parseMappingConfig({
        headers: [
          { header: 'gone', column: 'gone_text', as: 'string' },
          { header: 'empty', column: 'empty_text', as: 'string' },
          { header: 'gone', column: 'gone_bytes', as: 'binary' },
        ],
      }),
    };
    const headers: Record<string, number[] | null>[] = [{ gone: null }, { empty: [] }];
    // The second record is a dead letter (its id is text): its headers are kept as sent too.
    await ingestEvent({ catalog, routes: [route] }, esm(topic, ['{"id": 1}', '{"id": "x"}'], headers));

    const [row] = await rowsOf(catalog, id);
    expect(row.gone_text).toBeNull();
    expect(row.gone_bytes).toBeNull();
    expect(row.empty_text).toBe('');
    const lineage = (row._kafka as Row).headers as Row[];
    expect(lineage.map((h) => [h.key, h.value === null ? null : [...(h.value as Uint8Array)]])).toEqual([
      ['gone', null],
      ['empty', []],
    ]);
    const [letter] = await rowsOf(catalog, { namespace: ['values'], name: 'headers__dlq' });
    expect((letter.headers as Row[]).map((h) => h.value)).toEqual([null, new Uint8Array(0)]);
  });

  it('needs no schema change for null header values: the lineage and DLQ header value were optional already', () => {
    // Existing tables keep working: their `_kafka.headers.value` and DLQ `headers.value` are optional.
    const headerValue = (struct: StructType, name: string) => {
      const list = struct.fields.find((f) => f.name === name)?.type;
      if (typeof list !== 'object' || list.type !== 'list' || typeof list.element !== 'object')
        return undefined;
      const element = list.element as StructType;
      return element.fields.find((f) => f.name === 'value');
    };
    expect(headerValue(kafkaLineageType(100), 'headers')).toMatchObject({ type: 'binary', required: false });
    expect(headerValue(DLQ_SCHEMA, 'headers')).toMatchObject({ type: 'binary', required: false });
  });
});
