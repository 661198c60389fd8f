/**
 * CDC batches through the key index on a local warehouse: each batch's lookup goes through the index,
 * the index follows every commit, and `verify` finds it equal to a full scan; the table equals the
 * source replayed op by op (a model), and equals what the scan locator gives.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main as cli } from '../../../functions/cli/main.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { indexStatus, verifyIndex } from '../../../functions/core/key-index/verify-index.js';
import { indexIdentifier, readCoverage } from '../../../functions/core/key-index/index-table.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { parseSchema } from '../../../functions/core/spec/schema.js';
import { tempWarehouse } from '../../support/tables.js';
import { feed, modelRows, rowsOf, upsertRoute } from '../../support/upsert-table.js';

const event = (name: string) => JSON.parse(readFileSync(`events/${name}`, 'utf8'));
const SCHEMA = parseSchema(JSON.parse(readFileSync('events/orders-cdc-schema.json', 'utf8')));

describe('the key index under CDC ingest', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  const route: TableRoute = {
    table: { namespace: ['sales'], name: 'orders_current' },
    topics: ['shop.public.orders', '__debezium-heartbeat.shop'],
    schema: SCHEMA,
    partitionBy: 'bucket(4, order_id)',
    mode: 'debezium',
    identifierColumns: ['order_id'],
    kafkaLineage: true,
    properties: {},
  };
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('follows every commit and agrees with a full scan', async () => {
    // Act
    const warnings: string[] = [];
    const options = {
      catalog: wh.catalog,
      routes: [route],
      onWarning: (_t: string, m: string) => warnings.push(m),
    };
    await ingestEvent(options, event('orders-cdc-1.json'));
    await ingestEvent(options, event('orders-cdc-2.json'));

    // Assess
    const main = await wh.catalog.loadTable(route.table);
    const index = await wh.catalog.loadTable(indexIdentifier(route.table));
    expect(readCoverage(index)?.snapshotId).toBe(currentSnapshot(main.metadata)?.['snapshot-id']);
    expect(await verifyIndex(wh.catalog, main)).toEqual([]);
    expect((await indexStatus(wh.catalog, main)).behind).toBe(0);
    expect(warnings.filter((w) => w.includes('key index'))).toEqual([]);
    const rows = await readScanRows(main, await planScan(main));
    expect(rows.map((r) => Number(r.order_id)).sort((a, b) => a - b)).toEqual([
      1, 2, 3, 5, 6, 7, 9, 11, 12, 13, 14,
    ]);
  });

  it('follows a format-version 3 table: deletion vectors and version-carrying deletes become entries, no rebuild', async () => {
    // Prepare: updates and deletes of keys in one file, so each batch merges the file's vector
    const route = upsertRoute('items_v3', { 'format-version': '3' });
    const model = new Map<number, string>();

    // Act
    await feed(
      wh,
      route,
      [
        [1, 'a'],
        [2, 'b'],
        [3, 'c'],
        [4, 'd'],
      ],
      0,
      model,
    );
    await feed(
      wh,
      route,
      [
        [1, 'a2'],
        [2, null],
      ],
      4,
      model,
    );
    await feed(
      wh,
      route,
      [
        [3, null],
        [1, 'a3'],
        [5, 'e'],
      ],
      6,
      model,
    );

    // Assess: the index followed each batch by appends from the batches' own snapshots (a snapshot it
    // could not read would have been a rebuild: a replace of the index), and agrees with a full scan
    const main = await wh.catalog.loadTable(route.table);
    expect(main.metadata['format-version']).toBe(3);
    expect(await rowsOf(wh, route)).toEqual(modelRows(model));
    const index = await wh.catalog.loadTable(indexIdentifier(route.table));
    expect(index.metadata.snapshots?.map((s) => s.summary.operation)).toEqual(['append', 'append', 'append']);
    expect(await verifyIndex(wh.catalog, main)).toEqual([]);
    expect((await indexStatus(wh.catalog, main)).behind).toBe(0);
  });

  it('floe index: status says how far behind, rebuild and build bring it back, verify agrees', async () => {
    // Prepare: the table moves on without its index (turned off after the first batch).
    const options = { catalog: wh.catalog, routes: [route] };
    await ingestEvent(options, event('orders-cdc-1.json'));
    const loaded = await wh.catalog.loadTable(route.table);
    await wh.catalog.commitTable(
      route.table,
      [],
      [{ action: 'set-properties', updates: { 'floe.key-index': 'off' } }],
      loaded,
    );
    await ingestEvent(options, event('orders-cdc-2.json'));
    const flags = ['--warehouse', wh.dir, '--table', 'sales.orders_current'];
    const printed: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => printed.push(chunk) > 0) as typeof process.stdout.write;

    // Act
    let codes: number[];
    try {
      codes = [
        await cli(['index', ...flags, 'status', '--json']),
        await cli(['index', ...flags, 'build']),
        await cli(['index', ...flags, 'status', '--json']),
        await cli(['index', ...flags, 'rebuild']),
        await cli(['index', ...flags, 'verify']),
      ];
    } finally {
      process.stdout.write = write;
    }

    // Assess
    expect(codes).toEqual([0, 0, 0, 0, 0]);
    expect(JSON.parse(printed[0])).toMatchObject({ exists: true, behind: 1 });
    expect(printed[1]).toContain('caught up over 1 snapshot(s)');
    expect(JSON.parse(printed[2])).toMatchObject({ behind: 0 });
    expect(printed[3]).toContain('index rebuilt at snapshot');
    expect(printed[4]).toContain('the index agrees with the table');
  });
});
