/**
 * The CDC ingest path end to end on a local warehouse: the Debezium sample of events/ becomes the
 * orders' current state; mode and key are stored with the table; summaries count the equality
 * deletes; replays, keyless records and keys on two partitions are handled as the issue asks.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IDENTIFIER_PROPERTY, MODE_PROPERTY } from '../../../functions/core/routing/table-mode.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSchema, currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { parseSchema } from '../../../functions/core/spec/schema.js';
import type { Row } from '../../../functions/core/spec/types.js';
import { liveEntries } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';

const event = (name: string) => JSON.parse(readFileSync(`events/${name}`, 'utf8'));
const SCHEMA = parseSchema(JSON.parse(readFileSync('events/orders-cdc-schema.json', 'utf8')));

interface EsmRecord {
  partition: number;
  offset: number;
  value: string | null;
}

/** The source table after some events, replayed the plain way: op by op, per partition in offset order. */
function replaySource(names: string[]): Map<number, Record<string, unknown>> {
  const state = new Map<number, Record<string, unknown>>();
  for (const name of names) {
    const groups = Object.values(event(name).records as Record<string, EsmRecord[]>);
    for (const list of groups) {
      for (const r of [...list].sort((a, b) => a.offset - b.offset)) {
        if (r.value === null) continue;
        const v = JSON.parse(Buffer.from(r.value, 'base64').toString('utf8'));
        if (v.op === 'd') state.delete(v.before.order_id);
        else if (v.op) state.set(v.after.order_id, v.after);
      }
    }
  }
  return state;
}

function display(row: Row): string {
  const amount = row.amount as bigint;
  return `${row.order_id} ${(Number(amount) / 100).toFixed(2)} ${row.status}`;
}

describe('Debezium CDC into the current table', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  const EQUALITY = { properties: { 'floe.delete-mode': 'equality' } };
  const route = (extra: Partial<TableRoute> = {}): TableRoute => ({
    table: { namespace: ['sales'], name: 'orders_current' },
    topics: ['shop.public.orders', '__debezium-heartbeat.shop'],
    schema: SCHEMA,
    partitionBy: 'bucket(4, order_id)',
    mode: 'debezium',
    identifierColumns: ['order_id'],
    kafkaLineage: true,
    properties: {},
    ...extra,
  });
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  async function rows(): Promise<Row[]> {
    const table = await wh.catalog.loadTable(route().table);
    return readScanRows(table, await planScan(table));
  }

  it('reconstructs the source table: updates applied, cancellations deleted, replays skipped', async () => {
    // Act
    const first = await ingestEvent({ catalog: wh.catalog, routes: [route()] }, event('orders-cdc-1.json'));
    const afterFirst = await rows();
    const second = await ingestEvent({ catalog: wh.catalog, routes: [route()] }, event('orders-cdc-2.json'));
    const replay = await ingestEvent({ catalog: wh.catalog, routes: [route()] }, event('orders-cdc-1.json'));

    // Assess
    const expected = (names: string[]) =>
      [...replaySource(names).values()].map((o) => `${o.order_id} ${o.amount} ${o.status}`).sort();
    expect(afterFirst.map(display).sort()).toEqual(expected(['orders-cdc-1.json']));
    const current = await rows();
    expect(current.map(display).sort()).toEqual(expected(['orders-cdc-1.json', 'orders-cdc-2.json']));
    expect(current.map((r) => Number(r.order_id)).sort((a, b) => a - b)).toEqual([
      1, 2, 3, 5, 6, 7, 9, 11, 12, 13, 14,
    ]);
    expect(first.tables[0]).toMatchObject({ status: 'committed', mode: 'debezium', deadLettered: 0 });
    expect(second.tables[0]).toMatchObject({ status: 'committed', ignored: { heartbeat: 1, tombstone: 3 } });
    expect(replay.tables[0]).toMatchObject({ status: 'nothing-to-commit', skippedAsReplayed: 15 });
  });

  it('stores mode and key with the table, so a later ingest needs neither', async () => {
    // Prepare
    await ingestEvent({ catalog: wh.catalog, routes: [route()] }, event('orders-cdc-1.json'));

    // Act: no mode, no identifier columns, no schema
    const bare = route({
      mode: undefined,
      identifierColumns: undefined,
      schema: undefined,
      partitionBy: undefined,
    });
    const report = await ingestEvent({ catalog: wh.catalog, routes: [bare] }, event('orders-cdc-2.json'));

    // Assess
    const table = await wh.catalog.loadTable(route().table);
    expect(table.metadata.properties).toMatchObject({
      [MODE_PROPERTY]: 'debezium',
      [IDENTIFIER_PROPERTY]: 'order_id',
    });
    expect(currentSchema(table.metadata)['identifier-field-ids']).toEqual([1]);
    expect(report.tables[0].mode).toBe('debezium');
    expect((await rows()).length).toBe(11);
  });

  it('under floe.delete-mode=equality, counts equality deletes in each summary; total-equality-deletes matches the live delete files', async () => {
    // Act
    const reports = [];
    for (const name of ['orders-cdc-1.json', 'orders-cdc-2.json']) {
      reports.push(
        (await ingestEvent({ catalog: wh.catalog, routes: [route(EQUALITY)] }, event(name))).tables[0],
      );
    }

    // Assess
    const table = await wh.catalog.loadTable(route(EQUALITY).table);
    const [s1, s2] = table.metadata.snapshots.map((s) => s.summary);
    // Into the empty table no key has older rows: the first batch writes rows only.
    expect([reports[0].equalityDeletes, reports[0].deleteFiles]).toEqual([0, 0]);
    expect(s1.operation).toBe('append');
    expect(s1['added-delete-files']).toBeUndefined();
    expect(s1['added-records']).toBe(String(reports[0].rowsWritten));
    expect(reports[1].equalityDeletes).toBeGreaterThan(0);
    expect(s2.operation).toBe('overwrite');
    expect(s2['added-equality-deletes']).toBe(String(reports[1].equalityDeletes));
    expect(s2['added-delete-files']).toBe(String(reports[1].deleteFiles));
    expect(s2['added-equality-delete-files']).toBe(String(reports[1].deleteFiles));
    expect(s2['added-records']).toBe(String(reports[1].rowsWritten));
    const live = await liveEntries(table);
    const eq = live.filter((e) => e.data_file.content === 2);
    expect(eq.every((e) => e.data_file.equality_ids?.join() === '1')).toBe(true);
    expect(currentSnapshot(table.metadata)!.summary['total-equality-deletes']).toBe(
      String(eq.reduce((s, e) => s + e.data_file.record_count, 0n)),
    );
    expect(currentSnapshot(table.metadata)!.summary['total-delete-files']).toBe(String(eq.length));
    // Partitioned by bucket(order_id): the key decides the partition, so deletes sit in their partition.
    expect(eq.every((e) => e.data_file.spec_id === 0 && e.data_file.partition.order_id_bucket !== null)).toBe(
      true,
    );
  });
  it('counts position deletes in each summary, as Iceberg Java does; total-position-deletes matches the live delete files', async () => {
    // Act
    const reports = [];
    for (const name of ['orders-cdc-1.json', 'orders-cdc-2.json']) {
      reports.push((await ingestEvent({ catalog: wh.catalog, routes: [route()] }, event(name))).tables[0]);
    }

    // Assess
    const table = await wh.catalog.loadTable(route().table);
    const [s1, s2] = table.metadata.snapshots.map((s) => s.summary);
    expect([reports[0].positionDeletes, reports[0].deleteFiles]).toEqual([0, 0]);
    expect(s1.operation).toBe('append');
    expect(reports[1].positionDeletes).toBeGreaterThan(0);
    expect(reports[1].equalityDeletes).toBe(0);
    expect(s2.operation).toBe('overwrite');
    const live = await liveEntries(table);
    const pos = live.filter((e) => e.data_file.content === 1);
    expect(live.some((e) => e.data_file.content === 2)).toBe(false);
    expect(s2['added-position-delete-files']).toBe(String(pos.length));
    expect(s2['added-delete-files']).toBe(String(reports[1].deleteFiles));
    expect(s2['added-position-deletes']).toBe(String(pos.reduce((n, e) => n + e.data_file.record_count, 0n)));
    expect(s2['added-equality-delete-files']).toBeUndefined();
    expect(currentSnapshot(table.metadata)!.summary['total-position-deletes']).toBe(
      String(pos.reduce((n, e) => n + e.data_file.record_count, 0n)),
    );
    // Each delete file of rows sits in its data files' spec and partition, and its file_path bounds
    // are whole data file paths (key-versions files, the deleted keys' versions, name no data file).
    const ofRows = pos.filter((e) => !e.data_file.file_path.includes('key-versions'));
    expect(ofRows.length).toBeGreaterThan(0);
    for (const e of ofRows) {
      expect(e.data_file.spec_id).toBe(0);
      expect(e.data_file.partition.order_id_bucket).not.toBeNull();
      const lower = new TextDecoder().decode(e.data_file.lower_bounds!.get(2147483546));
      expect(lower).toMatch(/\.parquet$/);
    }
  });
});

describe('CDC records that are not usable', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  const schema = parseSchema({
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'tenant', required: true, type: 'string' },
      { id: 2, name: 'id', required: true, type: 'long' },
      { id: 3, name: 'v', required: false, type: 'string' },
    ],
  });
  const route: TableRoute = {
    table: { namespace: ['kv'], name: 'items' },
    topics: ['items'],
    schema,
    partitionBy: 'tenant',
    mode: 'upsert',
    identifierColumns: ['tenant', 'id'],
    kafkaLineage: false,
    properties: {},
  };
  const record = (partition: number, offset: number, key: unknown, value: unknown) => ({
    topic: 'items',
    partition,
    offset,
    timestamp: 0,
    timestampType: 'CREATE_TIME',
    key: key === null ? null : Buffer.from(JSON.stringify(key)).toString('base64'),
    value: value === null ? null : Buffer.from(JSON.stringify(value)).toString('base64'),
    headers: [],
  });
  const esm = (records: ReturnType<typeof record>[]) => {
    const groups: Record<string, unknown[]> = {};
    for (const r of records) {
      groups[`items-${r.partition}`] ??= [];
      groups[`items-${r.partition}`].push(r);
    }
    return { eventSource: 'aws:kafka', records: groups };
  };

  it('sends records without a usable key to the DLQ with the reason; the rest is applied', async () => {
    // Act
    const report = await ingestEvent(
      { catalog: wh.catalog, routes: [route] },
      esm([
        record(0, 0, { tenant: 'a', id: 1 }, { v: 'one' }),
        record(0, 1, null, { v: 'no key' }),
        record(0, 2, null, null),
        record(0, 3, { tenant: 'a' }, { v: 'half a key' }),
        record(0, 4, { tenant: 'b', id: 2 }, { v: 'two' }),
        record(0, 5, { tenant: 'a', id: 1 }, { v: 'one, again' }),
      ]),
    );

    // Assess
    expect(report.tables[0]).toMatchObject({ deadLettered: 3, rowsWritten: 2 });
    const table = await wh.catalog.loadTable(route.table);
    const live = await readScanRows(table, await planScan(table));
    expect(live.map((r) => `${r.tenant}/${r.id}/${r.v}`).sort()).toEqual(['a/1/one, again', 'b/2/two']);
    const dlq = await wh.catalog.loadTable({ namespace: ['kv'], name: 'items__dlq' });
    const letters = await readScanRows(dlq, await planScan(dlq));
    expect(letters.map((l) => [l.offset, l.error]).sort()).toEqual([
      [1n, "no usable key: no Kafka key, and the value lacks 'tenant', 'id'"],
      [2n, 'no usable key: a tombstone without a Kafka key'],
      [3n, "no usable key: the Kafka key has no 'tenant', 'id'"],
    ]);
  });

  it('warns when one key changes on two Kafka partitions in one batch', async () => {
    // Prepare
    const warnings: string[] = [];

    // Act
    const report = await ingestEvent(
      {
        catalog: wh.catalog,
        routes: [route],
        onWarning: (table, message) => warnings.push(`${table}: ${message}`),
      },
      esm([
        record(0, 0, { tenant: 'a', id: 1 }, { v: 'p0' }),
        record(1, 0, { tenant: 'a', id: 1 }, { v: 'p1' }),
      ]),
    );

    // Assess
    expect(report.tables[0].warnings).toHaveLength(1);
    expect(report.tables[0].warnings![0]).toMatch(/tenant=a, id=1 on items\/0 and items\/1/);
    expect(warnings).toEqual([`kv.items: ${report.tables[0].warnings![0]}`]);
  });
});
