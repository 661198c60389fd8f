/**
 * Connect logical types in `{ schema, payload }` envelopes (Debezium's defaults with JsonConverter):
 * each value rewritten to what the row conversion reads unambiguously, and end to end through a
 * `debezium` table: a decimal, a date, a microsecond timestamp and a time land as what the source
 * held, not as base64 refusals or dates in 1970. Expected values were computed with Python's datetime
 * and int.to_bytes, not with this code.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fromConnectSchema } from '../../../functions/core/cdc/connect-logical.js';
import { unwrapConnectEnvelope } from '../../../functions/core/cdc/debezium-envelope.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { JsonNumberText } from '../../../functions/core/records/json-to-value.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSchema } from '../../../functions/core/spec/metadata.js';
import type { PrimitiveType } from '../../../functions/core/spec/types.js';
import { jsonEvent } from '../../support/json-event.js';
import { tempWarehouse } from '../../support/tables.js';

const field = (name: string, type: string, logical?: string, parameters?: Record<string, string>) => ({
  field: name,
  type,
  optional: true,
  ...(logical ? { name: logical } : {}),
  ...(parameters ? { parameters } : {}),
});
const DECIMAL = 'org.apache.kafka.connect.data.Decimal';

describe('Connect logical types', () => {
  it.each([
    [field('x', 'bytes', DECIMAL, { scale: '2' }), 'MDk=', new JsonNumberText('123.45')],
    [field('x', 'bytes', DECIMAL, { scale: '2' }), 'z8c=', new JsonNumberText('-123.45')],
    [field('x', 'bytes', DECIMAL, { scale: '0' }), 'AIA=', new JsonNumberText('128')],
    [field('x', 'bytes', DECIMAL, { scale: '0' }), 'gA==', new JsonNumberText('-128')],
    [field('x', 'bytes', DECIMAL, { scale: '4' }), '+gofAQ==', new JsonNumberText('-9999.9999')],
    [field('x', 'bytes', DECIMAL, { scale: '3' }), 'AQ==', new JsonNumberText('0.001')],
    [
      field('x', 'struct', 'io.debezium.data.VariableScaleDecimal'),
      { scale: 2, value: 'MDk=' },
      new JsonNumberText('123.45'),
    ],
    [field('x', 'int32', 'io.debezium.time.Date'), 20415, '2025-11-23'],
    [field('x', 'int32', 'org.apache.kafka.connect.data.Date'), -1, '1969-12-31'],
    [field('x', 'int64', 'io.debezium.time.MicroTimestamp'), 1795168800123456, '2026-11-20T10:00:00.123456Z'],
    [
      field('x', 'int64', 'io.debezium.time.MicroTimestamp'),
      new JsonNumberText('1795168800123456'),
      '2026-11-20T10:00:00.123456Z',
    ],
    [field('x', 'int64', 'io.debezium.time.MicroTimestamp'), -1, '1969-12-31T23:59:59.999999Z'],
    [
      field('x', 'int64', 'io.debezium.time.NanoTimestamp'),
      new JsonNumberText('1795168800123456789'),
      '2026-11-20T10:00:00.123456Z',
    ],
    [field('x', 'int32', 'io.debezium.time.Time'), 3723004, '01:02:03.004000'],
    [field('x', 'int64', 'io.debezium.time.MicroTime'), 3723004005, '01:02:03.004005'],
    [field('x', 'int64', 'io.debezium.time.NanoTime'), 3723004005999, '01:02:03.004005'],
    // Left as they are: epoch milliseconds (floe's reading of a number), zoned text, no logical type.
    [field('x', 'int64', 'io.debezium.time.Timestamp'), 1795168800123, 1795168800123],
    [field('x', 'string', 'io.debezium.time.ZonedTimestamp'), '2026-11-20T10:00:00Z', '2026-11-20T10:00:00Z'],
    [field('x', 'int64'), 20415, 20415],
    // Not the shape the logical type promises: left for the row conversion to refuse with its reason.
    [field('x', 'bytes', DECIMAL, { scale: '2' }), 'not base64!', 'not base64!'],
    [field('x', 'int32', 'io.debezium.time.Date'), 'yesterday', 'yesterday'],
    [field('x', 'int64', 'io.debezium.time.MicroTime'), 86_400_000_000, 86_400_000_000],
  ])('%o: %o → %o', (schema, value, expected) => {
    const struct = { type: 'struct', fields: [schema] };
    expect(fromConnectSchema(struct, { x: value, other: 'kept' })).toEqual({ x: expected, other: 'kept' });
  });

  it('goes through nested structs and arrays, and leaves nulls and unknown fields alone', () => {
    const schema = {
      type: 'struct',
      fields: [
        { field: 'after', type: 'struct', fields: [field('d', 'int32', 'io.debezium.time.Date')] },
        { field: 'days', type: 'array', items: { type: 'int32', name: 'io.debezium.time.Date' } },
        field('none', 'int32', 'io.debezium.time.Date'),
      ],
    };
    expect(
      fromConnectSchema(schema, { after: { d: 0, e: 5 }, days: [0, null], none: null, op: 'c' }),
    ).toEqual({
      after: { d: '1970-01-01', e: 5 },
      days: ['1970-01-01', null],
      none: null,
      op: 'c',
    });
    expect(unwrapConnectEnvelope({ schema: { type: 'struct', fields: [] }, payload: null })).toBeNull();
  });
});

describe('a debezium table fed Debezium JSON with schemas (decimal.handling.mode=precise)', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  /** Table `cdc.<name>` (debezium, key `id`) fed by topic `db.public.<name>`, with these columns. */
  const debeziumRoute = (name: string, columns: [string, PrimitiveType][]): TableRoute => ({
    table: { namespace: ['cdc'], name },
    topics: [`db.public.${name}`],
    schema: {
      type: 'struct',
      'schema-id': 0,
      'identifier-field-ids': [1],
      fields: columns.map(([column, type], i) => ({ id: i + 1, name: column, required: i === 0, type })),
    },
    mode: 'debezium',
    identifierColumns: ['id'],
    kafkaLineage: false,
    properties: {},
  });

  /** A Debezium create with its Connect schema (JsonConverter, schemas.enable=true). */
  const connectChange = (rowFields: unknown[], after: Record<string, unknown>) => {
    const rowSchema = { ...field('r', 'struct'), fields: rowFields };
    return {
      schema: {
        type: 'struct',
        fields: [{ ...rowSchema, field: 'before' }, { ...rowSchema, field: 'after' }, field('op', 'string')],
      },
      payload: { op: 'c', before: null, after },
    };
  };

  it('stores decimals, dates, microsecond timestamps and times as the source held them', async () => {
    const rowFields = [
      field('id', 'int64'),
      field('amount', 'bytes', DECIMAL, { scale: '2', 'connect.decimal.precision': '10' }),
      field('ship_date', 'int32', 'io.debezium.time.Date'),
      field('created_at', 'int64', 'io.debezium.time.MicroTimestamp'),
      field('slot', 'int64', 'io.debezium.time.MicroTime'),
    ];
    const route = debeziumRoute('typed', [
      ['id', 'long'],
      ['amount', 'decimal(10, 2)'],
      ['ship_date', 'date'],
      ['created_at', 'timestamp'],
      ['slot', 'time'],
    ]);
    const event = jsonEvent('db.public.typed', [
      connectChange(rowFields, {
        id: 1,
        amount: 'MDk=',
        ship_date: 20415,
        created_at: 1795168800123456,
        slot: 3723004005,
      }),
      connectChange(rowFields, { id: 2, amount: 'z8c=', ship_date: -1, created_at: -1, slot: 0 }),
    ]);
    const report = await ingestEvent({ catalog: wh.catalog, routes: [route] }, event);
    expect(report.tables[0].deadLettered).toBe(0);
    const table = await wh.catalog.loadTable(route.table);
    const rows = (await readScanRows(table, await planScan(table))).sort(
      (a, b) => Number(a.id) - Number(b.id),
    );
    expect(rows).toEqual([
      // 2025-11-23 is day 20415; 2026-11-20T10:00:00.123456 is 1795168800123456 µs; 01:02:03.004005.
      { id: 1n, amount: 12345n, ship_date: 20415, created_at: 1795168800123456n, slot: 3723004005n },
      { id: 2n, amount: -12345n, ship_date: -1, created_at: -1n, slot: 0n },
    ]);
  });

  it('gives columns the source adds the types their Connect schema names (schema evolution)', async () => {
    // Arrange: the table knows only `id`; the source table has gained one column of each kind.
    const rowFields = [
      field('id', 'int64'),
      field('amount', 'bytes', DECIMAL, { scale: '2', 'connect.decimal.precision': '10' }),
      field('rate', 'bytes', DECIMAL, { scale: '3' }),
      field('ship_date', 'int32', 'io.debezium.time.Date'),
      field('created_at', 'int64', 'io.debezium.time.MicroTimestamp'),
      field('changed_at', 'string', 'io.debezium.time.ZonedTimestamp'),
      field('slot', 'int64', 'io.debezium.time.MicroTime'),
      field('small', 'int16'),
      field('big', 'int64'),
      field('flag', 'boolean'),
      field('ratio', 'float64'),
      field('blob', 'bytes'),
      field('uid', 'string', 'io.debezium.data.Uuid'),
    ];
    const after = {
      id: 1,
      amount: 'MDk=',
      rate: 'AQ==',
      ship_date: 20415,
      created_at: 1795168800123456,
      changed_at: '2026-11-20T10:00:00.5+01:00',
      slot: 3723004005,
      small: 7,
      big: 8,
      flag: true,
      ratio: 0.5,
      blob: 'AAE=',
      uid: '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0',
    };
    const route = debeziumRoute('grown', [['id', 'long']]);

    // Act
    const report = await ingestEvent(
      { catalog: wh.catalog, routes: [route] },
      jsonEvent('db.public.grown', [connectChange(rowFields, after)]),
    );

    // Assess
    expect(report.tables[0].deadLettered).toBe(0);
    const table = await wh.catalog.loadTable(route.table);
    expect(currentSchema(table.metadata).fields.map((f) => [f.name, f.type, f.required])).toEqual([
      ['id', 'long', true],
      ['amount', 'decimal(10, 2)', false],
      ['rate', 'decimal(38, 3)', false],
      ['ship_date', 'date', false],
      ['created_at', 'timestamp', false],
      ['changed_at', 'timestamptz', false],
      ['slot', 'time', false],
      ['small', 'int', false],
      ['big', 'long', false],
      ['flag', 'boolean', false],
      ['ratio', 'double', false],
      ['blob', 'binary', false],
      ['uid', 'uuid', false],
    ]);
    const [row] = await readScanRows(table, await planScan(table));
    expect(row).toEqual({
      id: 1n,
      amount: 12345n,
      rate: 1n,
      ship_date: 20415,
      created_at: 1795168800123456n,
      changed_at: 1795165200500000n,
      slot: 3723004005n,
      small: 7,
      big: 8n,
      flag: true,
      ratio: 0.5,
      blob: Uint8Array.of(0, 1),
      uid: '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0',
    });
  });

  it('widens a column the source widened, keeps one the source declares narrower, takes the wider of two records', async () => {
    // Arrange: `n` is a long column the source declares int16, `ts` a timestamptz column it sends as a
    // MicroTimestamp (both kept as the table has them); `d` a decimal(10, 2) the source made
    // decimal(12, 2) (promoted); `m` is new, decimal(8, 2) in one record and (14, 2) in the next.
    const rowFields = (mPrecision: string) => [
      field('id', 'int64'),
      field('n', 'int16'),
      field('ts', 'int64', 'io.debezium.time.MicroTimestamp'),
      field('d', 'bytes', DECIMAL, { scale: '2', 'connect.decimal.precision': '12' }),
      field('m', 'bytes', DECIMAL, { scale: '2', 'connect.decimal.precision': mPrecision }),
    ];
    const route = debeziumRoute('widened', [
      ['id', 'long'],
      ['n', 'long'],
      ['ts', 'timestamptz'],
      ['d', 'decimal(10, 2)'],
    ]);
    const row = { n: 1, ts: 1795168800123456, d: 'MDk=', m: 'MDk=' };
    const event = jsonEvent('db.public.widened', [
      connectChange(rowFields('8'), { id: 1, ...row }),
      connectChange(rowFields('14'), { id: 2, ...row }),
    ]);

    // Act
    const report = await ingestEvent({ catalog: wh.catalog, routes: [route] }, event);

    // Assess
    expect(report.tables[0].deadLettered).toBe(0);
    const table = await wh.catalog.loadTable(route.table);
    expect(currentSchema(table.metadata).fields.map((f) => [f.name, f.type])).toEqual([
      ['id', 'long'],
      ['n', 'long'],
      ['ts', 'timestamptz'],
      ['d', 'decimal(12, 2)'],
      ['m', 'decimal(14, 2)'],
    ]);
  });

  it('under policy dlq, keeps a column the source widened and takes the values that fit it', async () => {
    // Arrange: `d` is decimal(10, 2); the source made it decimal(12, 2); 123.45 still fits.
    const rowFields = [
      field('id', 'int64'),
      field('d', 'bytes', DECIMAL, { scale: '2', 'connect.decimal.precision': '12' }),
    ];
    const route = {
      ...debeziumRoute('kept', [
        ['id', 'long'],
        ['d', 'decimal(10, 2)'],
      ]),
      schemaEvolution: 'dlq' as const,
    };

    // Act
    const report = await ingestEvent(
      { catalog: wh.catalog, routes: [route] },
      jsonEvent('db.public.kept', [connectChange(rowFields, { id: 1, d: 'MDk=' })]),
    );

    // Assess
    expect(report.tables[0]).toMatchObject({ deadLettered: 0, rowsWritten: 1 });
    const table = await wh.catalog.loadTable(route.table);
    expect(currentSchema(table.metadata).fields.map((f) => f.type)).toEqual(['long', 'decimal(10, 2)']);
  });
});
