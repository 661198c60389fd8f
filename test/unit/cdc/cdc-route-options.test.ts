/**
 * A CDC route's own options: `when` (several tables fed from one topic by a field of the change event)
 * and `mapping` type rules (how a column's values are written, e.g. Debezium's epoch numbers when the
 * converter sends no Connect schema). Options a CDC table cannot apply are refused, never ignored.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSchema } from '../../../functions/core/spec/metadata.js';
import type { Row, TableIdentifier } from '../../../functions/core/spec/types.js';
import { jsonEvent } from '../../support/json-event.js';
import { tempWarehouse } from '../../support/tables.js';

const TOPIC = 'shop.all';

/** An MSK event of Debezium JSON values (no Connect schemas) on partition 0 of TOPIC. */
const debeziumEvent = (values: unknown[]) => jsonEvent(TOPIC, values);

const change = (
  table: string,
  op: string,
  after: Record<string, unknown> | null,
  before: unknown = null,
) => ({
  before,
  after,
  source: { connector: 'postgresql', db: 'shop', schema: 'public', table },
  op,
  ts_ms: 1_795_000_000_000,
});

const schema = (fields: [string, string, boolean][]) => ({
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [1],
  fields: fields.map(([name, type, required], i) => ({ id: i + 1, name, type, required })),
});

describe('CDC routes: when and mapping', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  /** `[offset, error]` of the table's dead letters. */
  async function deadLetters(table: TableIdentifier): Promise<[bigint, string][]> {
    const letters = await rows({ namespace: table.namespace, name: `${table.name}__dlq` });
    return letters.map((r) => [r.offset as bigint, r.error as string]);
  }

  async function rows(table: TableIdentifier): Promise<Row[]> {
    const loaded = await wh.catalog.loadTable(table);
    const out = await readScanRows(loaded, await planScan(loaded));
    return out.sort((a, b) => Number(a.id) - Number(b.id));
  }

  it('takes only the changes its `when` matches: two tables from one topic stay apart', async () => {
    // Arrange: Debezium's topic routing puts two source tables on one topic; both have an `id` key.
    const routes = parseRoutes([
      {
        table: 'shop.orders',
        topics: [TOPIC],
        mode: 'debezium',
        identifierColumns: ['id'],
        schema: schema([
          ['id', 'long', true],
          ['status', 'string', false],
        ]),
        when: { field: 'source.table', equals: 'orders' },
      },
      {
        table: 'shop.customers',
        topics: [TOPIC],
        mode: 'debezium',
        identifierColumns: ['id'],
        schema: schema([
          ['id', 'long', true],
          ['name', 'string', false],
        ]),
        when: { field: 'source.table', equals: 'customers' },
      },
    ]);
    const event = debeziumEvent([
      change('orders', 'c', { id: 1, status: 'NEW' }),
      change('customers', 'c', { id: 1, name: 'Ada' }),
      change('customers', 'c', { id: 2, name: 'Grace' }),
      change('orders', 'u', { id: 1, status: 'PAID' }, { id: 1, status: 'NEW' }),
      change('customers', 'd', null, { id: 2, name: 'Grace' }),
      null, // the tombstone Debezium sends after a delete: no fields to route by, nothing to apply
      { ts_ms: 1_795_000_000_000 }, // a heartbeat, likewise
    ]);

    // Act
    const report = await ingestEvent({ catalog: wh.catalog, routes }, event);

    // Assess
    expect(report.tables.map((t) => t.deadLettered)).toEqual([0, 0]);
    expect(report.tables.map((t) => t.ignored)).toEqual([
      { tombstone: 1, heartbeat: 1 },
      { tombstone: 1, heartbeat: 1 },
    ]);
    expect(await rows(routes[0].table)).toEqual([expect.objectContaining({ id: 1n, status: 'PAID' })]);
    expect(await rows(routes[1].table)).toEqual([expect.objectContaining({ id: 1n, name: 'Ada' })]);
  });

  it('dead-letters, once, a change that no route of its topic takes', async () => {
    // Arrange
    const routes = parseRoutes(
      ['orders', 'customers'].map((name) => ({
        table: `shop.${name}`,
        topics: [TOPIC],
        mode: 'debezium',
        identifierColumns: ['id'],
        schema: schema([['id', 'long', true]]),
        when: { field: 'source.table', equals: name },
      })),
    );
    const event = debeziumEvent([change('orders', 'c', { id: 1 }), change('invoices', 'c', { id: 9 })]);

    // Act
    const report = await ingestEvent({ catalog: wh.catalog, routes }, event);

    // Assess
    expect(report.tables.map((t) => t.deadLettered)).toEqual([1, 0]);
    expect(await deadLetters(routes[0].table)).toEqual([
      [1n, "no table route's condition matches this record (topic shop.all)"],
    ]);
    expect(await rows(routes[0].table)).toEqual([expect.objectContaining({ id: 1n })]);
  });

  it('routes upsert deletes (tombstones) by a header condition; by a field condition they are unrouted', async () => {
    // Arrange: the same upsert table twice, one split by a header, one by a field of the value.
    const upsert = (name: string, when: unknown) => ({
      table: `shop.${name}`,
      topics: [TOPIC],
      mode: 'upsert',
      identifierColumns: ['id'],
      schema: schema([
        ['id', 'long', true],
        ['v', 'string', false],
      ]),
      when,
    });
    const byHeader = parseRoutes([upsert('by_header', { header: 'entity', equals: 'item' })]);
    const byField = parseRoutes([upsert('by_field', { field: 'kind', equals: 'item' })]);
    const event = () => {
      const e = jsonEvent(TOPIC, [{ id: 1, v: 'a', kind: 'item' }, null], { key: () => '{"id":1}' }) as {
        records: Record<string, Array<Record<string, unknown>>>;
      };
      for (const r of e.records[`${TOPIC}-0`]) r.headers = [{ entity: [...Buffer.from('item')] }];
      return e;
    };

    // Act
    await ingestEvent({ catalog: wh.catalog, routes: byHeader }, event());
    await ingestEvent({ catalog: wh.catalog, routes: byField }, event());

    // Assess: by header, the tombstone deleted id 1; by field it could not be routed, and says why.
    expect(await rows(byHeader[0].table)).toEqual([]);
    expect(await rows(byField[0].table)).toEqual([expect.objectContaining({ id: 1n, v: 'a' })]);
    expect(await deadLetters(byField[0].table)).toEqual([
      [
        1n,
        "no table route's condition matches this record (topic shop.all): a tombstone (null value) has no fields to match, only headers (route deletes by a header condition)",
      ],
    ]);
  });

  describe('type rules on Debezium values without Connect schemas', () => {
    // Debezium's JsonConverter with schemas.enable=false: MicroTimestamp, Date (days) and MicroTime
    // arrive as bare numbers; only the route can say what unit they are in.
    const TS = 1_795_000_000_123_456; // µs since the epoch
    const DAY = 20_452; // days since the epoch
    const TIME = 45_296_000_001; // µs since midnight (12:34:56.000001)
    const route = (mapping: unknown) =>
      parseRoutes([
        {
          table: 'shop.events',
          topics: [TOPIC],
          mode: 'debezium',
          identifierColumns: ['day'],
          schema: schema([
            ['day', 'date', true],
            ['at', 'timestamptz', false],
            ['local', 'timestamp', false],
            ['opens', 'time', false],
          ]),
          mapping,
        },
      ]);
    const MAPPING = {
      columns: {
        day: { type: 'date', epoch: 'days' },
        at: { type: 'timestamptz', epoch: 'micros' },
        local: { type: 'timestamp', epoch: 'nanos' },
        opens: { type: 'time', epoch: 'micros' },
      },
    };

    it('reads each column in the unit its rule names, keys of before-images too', async () => {
      // Arrange
      const routes = route(MAPPING);
      const event = debeziumEvent([
        // A nanosecond timestamp has more digits than a double holds: the text keeps them all.
        JSON.stringify(change('events', 'c', { day: DAY, at: TS, local: '@', opens: TIME })).replace(
          '"@"',
          `${TS}999`,
        ),
        change('events', 'c', { day: DAY + 1, at: null, local: null, opens: 0 }),
        change('events', 'd', null, { day: DAY + 1, at: null, local: null, opens: 0 }),
      ]);

      // Act
      const report = await ingestEvent({ catalog: wh.catalog, routes }, event);

      // Assess: the delete found its key through the date rule; values are exactly the numbers sent.
      expect(report.tables[0].deadLettered).toBe(0);
      const loaded = await wh.catalog.loadTable(routes[0].table);
      const read = await readScanRows(loaded, await planScan(loaded));
      expect(read).toEqual([
        expect.objectContaining({ day: DAY, at: BigInt(TS), local: BigInt(TS), opens: BigInt(TIME) }),
      ]);
    });

    it('dead-letters a value its rule cannot read, with the reason', async () => {
      // Arrange
      const routes = route(MAPPING);
      const event = debeziumEvent([
        change('events', 'c', { day: DAY, opens: 86_400_000_000 }),
        change('events', 'c', { day: 1.5 }),
      ]);

      // Act
      const report = await ingestEvent({ catalog: wh.catalog, routes }, event);

      // Assess
      expect(report.tables[0].deadLettered).toBe(2);
      expect(await deadLetters(routes[0].table)).toEqual([
        [0n, 'after.opens: 86400000000 (micros since midnight) is not a time of day'],
        [1n, expect.stringMatching(/^after\.day: 1\.5/)],
      ]);
    });

    it('refuses, at start-up, the parts of a mapping a CDC table cannot apply', () => {
      expect(() => route({ key: { column: 'k' } })).toThrow(
        /routes\[0\]\.mapping\.key: not applied to debezium\/upsert tables/,
      );
      expect(() => route({ flatten: true })).toThrow(/mapping\.flatten: not applied/);
      expect(() => route({ columns: { at: { from: 'created' } } })).toThrow(
        /mapping\.columns\.at\.from: not applied/,
      );
      expect(() => route({ columns: { at: { type: 'timestamptz', default: 0 } } })).toThrow(
        /mapping\.columns\.at\.default: not applied/,
      );
    });

    it('refuses a rule the table cannot hold, and a mapping on a table whose mode is stored', async () => {
      // Arrange: a table created as debezium; later routes leave the mode to the table's property.
      await ingestEvent(
        { catalog: wh.catalog, routes: route(undefined) },
        debeziumEvent([change('events', 'c', { day: 1 })]),
      );
      const [stored] = parseRoutes([{ table: 'shop.events', topics: [TOPIC], mapping: { flatten: true } }]);
      const struct = route({ columns: { at: { type: 'long' } } });
      const narrower = route({ columns: { opens: { type: 'string' } } });
      const event = debeziumEvent([change('events', 'c', { day: DAY })]);

      // Act / Assess
      await expect(ingestEvent({ catalog: wh.catalog, routes: [stored] }, event)).rejects.toThrow(
        /mapping\.flatten: not applied/,
      );
      await expect(ingestEvent({ catalog: wh.catalog, routes: struct }, event)).rejects.toThrow(
        /mapping\.columns\.at\.type: the rule reads long values, which the timestamptz column 'at' cannot hold/,
      );
      await expect(ingestEvent({ catalog: wh.catalog, routes: narrower }, event)).rejects.toThrow(
        /reads string values, which the time column 'opens' cannot hold/,
      );
    });
    it('gives a column the source adds later the type its rule names', async () => {
      // Arrange: `closes` is not a column yet; the rule says how its numbers read when it arrives.
      const routes = route({
        ...MAPPING,
        columns: { ...MAPPING.columns, closes: { type: 'time', epoch: 'millis' } },
      });
      const event = debeziumEvent([change('events', 'c', { day: DAY, closes: 72_000_000 })]);

      // Act
      await ingestEvent({ catalog: wh.catalog, routes }, event);

      // Assess
      const loaded = await wh.catalog.loadTable(routes[0].table);
      expect(currentSchema(loaded.metadata).fields.at(-1)).toEqual(
        expect.objectContaining({ name: 'closes', type: 'time', required: false }),
      );
      expect(await readScanRows(loaded, await planScan(loaded))).toEqual([
        expect.objectContaining({ day: DAY, closes: 72_000_000_000n }),
      ]);
    });
  });

  it('applies type rules to upsert values and Kafka keys', async () => {
    // Arrange: the key is a timestamp sent as epoch seconds, in the Kafka key and in the value.
    const [route] = parseRoutes([
      {
        table: 'shop.ticks',
        topics: [TOPIC],
        mode: 'upsert',
        identifierColumns: ['at'],
        schema: schema([
          ['at', 'timestamptz', true],
          ['price', 'decimal(9, 2)', false],
        ]),
        mapping: { columns: { at: { type: 'timestamptz', epoch: 'seconds' } } },
      },
    ]);
    // The third record is a tombstone for the first key.
    const keys = ['1795000000', '1795000060', '1795000000'];
    const event = jsonEvent(
      TOPIC,
      [{ at: 1_795_000_000, price: '1.50' }, { at: 1_795_000_060, price: '2.00' }, null],
      {
        key: (_, i) => keys[i],
      },
    );

    // Act
    const report = await ingestEvent({ catalog: wh.catalog, routes: [route] }, event);

    // Assess: the tombstone's key (seconds, by the rule) matched the first row's key and deleted it.
    expect(report.tables[0].deadLettered).toBe(0);
    const loaded = await wh.catalog.loadTable(route.table);
    expect(await readScanRows(loaded, await planScan(loaded))).toEqual([
      expect.objectContaining({ at: 1_795_000_060_000_000n, price: 200n }),
    ]);
  });
});
