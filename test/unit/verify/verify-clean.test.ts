/**
 * `floe verify` passes on every kind of table floe writes: append (with its dead-letter table), CDC
 * (Debezium), upsert, an aggregate's result table, and tables after maintenance (compaction, expiry,
 * orphan removal, manifest rewrite). The CLI runs in-process on an embedded warehouse.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { parseSchema } from '../../../functions/core/spec/schema.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { writeRows } from '../../../functions/core/table/write-rows.js';
import { verifyTable } from '../../../functions/core/verify/verify-table.js';
import { jsonEvent } from '../../support/json-event.js';
import { tempWarehouse } from '../../support/tables.js';
import {
  commitEqualityDeletes,
  commitFiles,
  commitPositionDeletes,
  createEventsTable,
  EVENTS_ID,
  eventRows,
} from '../maintenance/maintenance-fixture.js';

const event = (name: string) => JSON.parse(readFileSync(`events/${name}`, 'utf8'));

const CDC_ROUTE: TableRoute = {
  table: { namespace: ['sales'], name: 'orders_current' },
  topics: ['shop.public.orders', '__debezium-heartbeat.shop'],
  schema: parseSchema(JSON.parse(readFileSync('events/orders-cdc-schema.json', 'utf8'))),
  partitionBy: 'bucket(4, order_id)',
  mode: 'debezium',
  identifierColumns: ['order_id'],
  kafkaLineage: true,
  properties: {},
};

const UPSERT_ROUTE: TableRoute = {
  table: { namespace: ['app'], name: 'profiles' },
  topics: ['profiles'],
  schema: {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'user_id', required: true, type: 'long' },
      { id: 2, name: 'name', required: false, type: 'string' },
    ],
  },
  mode: 'upsert',
  identifierColumns: ['user_id'],
  kafkaLineage: true,
  properties: {},
};

const APPEND_ROUTE: TableRoute = {
  table: { namespace: ['app'], name: 'clicks' },
  topics: ['clicks'],
  schema: {
    type: 'struct',
    'schema-id': 0,
    fields: [{ id: 1, name: 'id', required: true, type: 'long' }],
  },
  kafkaLineage: true,
  properties: {},
};

describe('floe verify on the tables floe writes', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  let out: string;
  let err: string;
  beforeEach(async () => {
    wh = await tempWarehouse();
    out = '';
    err = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out += String(chunk);
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err += String(chunk);
      return true;
    });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await wh.cleanup();
  });

  const verify = (table: string, ...flags: string[]) =>
    main(['verify', '--warehouse', wh.dir, '--table', table, ...flags]);

  it('passes on an append table with dead letters, and on its dead-letter table', async () => {
    // Prepare: batch 2 has two records that do not map (dead-lettered)
    const ingest = await main([
      'ingest',
      'events/orders-batch-1.json',
      'events/orders-batch-2.json',
      '--warehouse',
      wh.dir,
      '--table',
      'sales.orders',
      '--schema',
      'events/orders.schema.json',
    ]);
    expect(ingest, err).toBe(0);
    expect(out).toContain('2 dead-lettered');
    out = '';
    // Act
    const table = await verify('sales.orders', '--deep');
    const tableOut = out;
    out = '';
    const dlq = await verify('sales.orders__dlq', '--deep');
    // Assess
    expect(table, tableOut + err).toBe(0);
    expect(tableOut).toMatch(/rows-read 238\b/);
    expect(tableOut).toContain('verify: clean');
    expect(dlq, out + err).toBe(0);
    expect(out).toMatch(/rows-read 2\b/);
  });

  it('passes on a Debezium CDC table, counting replaced and deleted versions as notes', async () => {
    // Prepare
    const options = { catalog: wh.catalog, routes: [CDC_ROUTE] };
    await ingestEvent(options, event('orders-cdc-1.json'));
    await ingestEvent(options, event('orders-cdc-2.json'));
    const table = await wh.catalog.loadTable(CDC_ROUTE.table);
    // Act
    const report = await verifyTable(table, { deep: true });
    // Assess
    expect(report.findings).toEqual([]);
    expect(report.counts['key-passes']).toBe(1n);
    expect(report.notes.join('\n')).toMatch(
      /committed offset\(s\) in \d+ gap\(s\) hold no live row \(replaced/,
    );
  });

  it('passes on an upsert table with updates and a delete', async () => {
    // Prepare: user 1 renamed, user 2 deleted (a null value)
    const key = (v: unknown) => String((v as { user_id?: number } | null)?.user_id ?? 2);
    const options = { catalog: wh.catalog, routes: [UPSERT_ROUTE] };
    await ingestEvent(
      options,
      jsonEvent(
        'profiles',
        [
          { user_id: 1, name: 'a' },
          { user_id: 2, name: 'b' },
        ],
        { key },
      ),
    );
    await ingestEvent(
      options,
      jsonEvent('profiles', [{ user_id: 1, name: 'a2' }, null, { user_id: 3, name: 'c' }], {
        key,
        firstOffset: 2,
      }),
    );
    // Act
    const code = await verify('app.profiles', '--deep');
    // Assess
    expect(code, out + err).toBe(0);
    expect(out).toMatch(/rows-read 2\b/);
    expect(out).toContain('key-passes 1');
  });

  it("passes on an aggregate's result table", async () => {
    // Prepare
    const ingest = await main([
      'ingest',
      'events/orders-batch-1.json',
      'events/orders-batch-2.json',
      '--warehouse',
      wh.dir,
      '--routes',
      'events/orders-aggregate-routes.json',
    ]);
    expect(ingest, err).toBe(0);
    out = '';
    // Act
    const code = await verify('sales.revenue_per_country_day', '--deep');
    // Assess
    expect(code, out + err).toBe(0);
    expect(out).toContain('key-passes 1');
    expect(out).toContain('no _kafka lineage');
  });

  it('passes on a table another engine wrote: no floe summaries or lineage, with both kinds of deletes', async () => {
    // Prepare: partitioned by category, identifier field id, rows appended in three commits, then
    // equality deletes of two ids and a position delete, as Spark's merge-on-read would leave them
    await createEventsTable(wh.catalog);
    for (let b = 0; b < 3; b++) {
      const table = await wh.catalog.loadTable(EVENTS_ID);
      await commitFiles(wh.catalog, 'append', await writeRows(table, eventRows(b * 8 + 1, b * 8 + 8)), []);
    }
    await commitEqualityDeletes(wh.catalog, [3, 12]);
    const table = await wh.catalog.loadTable(EVENTS_ID);
    await commitPositionDeletes(wh.catalog, (await planScan(table)).tasks[0].file, [0]);
    // Act
    const report = await verifyTable(await wh.catalog.loadTable(EVENTS_ID), { deep: true });
    // Assess
    expect(report.findings).toEqual([]);
    expect(report.counts['live-files']).toBeGreaterThan(12n);
    expect(report.notes.join('\n')).toContain('no _kafka lineage');
  });

  it('passes after compaction, expiry, orphan removal and a manifest rewrite', async () => {
    // Prepare: six small batches of an append table, and a CDC table with deletes to apply
    for (let b = 0; b < 6; b++) {
      const ids = [1, 2, 3, 4].map((i) => ({ id: b * 4 + i }));
      await ingestEvent(
        { catalog: wh.catalog, routes: [APPEND_ROUTE] },
        jsonEvent('clicks', ids, { firstOffset: b * 4, partition: b % 2 }),
      );
    }
    const cdc = { catalog: wh.catalog, routes: [CDC_ROUTE] };
    await ingestEvent(cdc, event('orders-cdc-1.json'));
    await ingestEvent(cdc, event('orders-cdc-2.json'));
    for (const t of ['app.clicks', 'sales.orders_current']) {
      const maintained = await main([
        'maintain',
        'all',
        '--warehouse',
        wh.dir,
        '--table',
        t,
        '--older-than',
        '0',
        '--retain-last',
        '1',
      ]);
      expect(maintained, err).toBe(0);
    }
    const clicks = await wh.catalog.loadTable(APPEND_ROUTE.table);
    expect(clicks.metadata.snapshots.length).toBeLessThan(6);
    out = '';
    // Act
    const append = await verify('app.clicks', '--deep');
    const appendOut = out;
    out = '';
    const keyed = await verify('sales.orders_current', '--deep');
    // Assess
    expect(append, appendOut + err).toBe(0);
    expect(appendOut).toMatch(/rows-read 24\b/);
    expect(keyed, out + err).toBe(0);
  });
});
