/**
 * A CDC table whose source gained a column mid-stream (schema evolution in the commit of the rows),
 * read by icebird and by floe's reader: the same live rows, older rows null in the new column, the
 * equality deletes applied across the schema change. Also compacted by floe's maintenance and read
 * again: the same rows.
 */
import { icebergRead } from 'icebird';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { parseRoutes, type TableRoute } from '../../../functions/core/routing/routes.js';
import { commitTask, compactTask, planTask } from '../../../functions/core/maintenance/maintenance-tasks.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSchema } from '../../../functions/core/spec/metadata.js';
import { type HttpWarehouse, startHttpWarehouse } from '../../support/http-warehouse.js';
import { jsonEvent } from '../../support/json-event.js';

const TOPIC = 'inventory.public.items';

const event = (changes: unknown[], firstOffset: number) => jsonEvent(TOPIC, changes, { firstOffset });

const change = (
  op: string,
  after: Record<string, unknown> | null,
  before: Record<string, unknown> | null = null,
) => ({
  before,
  after,
  source: { table: 'items' },
  op,
  ts_ms: 1,
});

describe('a CDC table that evolved, read by icebird and floe', () => {
  let wh: HttpWarehouse;
  let route: TableRoute;

  beforeAll(async () => {
    wh = await startHttpWarehouse();
    [route] = parseRoutes([
      {
        table: 'inventory.items',
        topics: [TOPIC],
        mode: 'debezium',
        identifierColumns: ['id'],
        kafkaLineage: false,
        properties: { 'write.avro.compression-codec': 'uncompressed' },
        schema: {
          type: 'struct',
          'schema-id': 0,
          fields: [
            { id: 1, name: 'id', required: true, type: 'long' },
            { id: 2, name: 'name', required: true, type: 'string' },
          ],
        },
      },
    ]);
    const ingest = (changes: unknown[], offset: number) =>
      ingestEvent({ catalog: wh.catalog, routes: [route] }, event(changes, offset));
    await ingest(
      [1, 2, 3, 4].map((id) => change('c', { id, name: `item-${id}` })),
      0,
    );
    // The source table gained `stock`: new rows carry it, updated old rows too.
    await ingest(
      [
        change('c', { id: 5, name: 'item-5', stock: 50 }),
        change('u', { id: 2, name: 'item-2b', stock: 20 }, { id: 2, name: 'item-2', stock: null }),
        change('d', null, { id: 3, name: 'item-3', stock: null }),
      ],
      4,
    );
  });
  afterAll(() => wh.close());

  const EXPECTED = [
    { id: 1n, name: 'item-1', stock: null },
    { id: 2n, name: 'item-2b', stock: 20 },
    { id: 4n, name: 'item-4', stock: null },
    { id: 5n, name: 'item-5', stock: 50 },
  ];
  const byId = (rows: Record<string, unknown>[]) =>
    rows
      .map((r) => ({ id: BigInt(r.id as bigint), name: r.name, stock: r.stock ?? null }))
      .sort((a, b) => Number(a.id - b.id));

  it('evolved the schema in the commit of the rows', async () => {
    const table = await wh.catalog.loadTable(route.table);
    expect(currentSchema(table.metadata).fields.map((f) => [f.id, f.name, f.type, f.required])).toEqual([
      [1, 'id', 'long', true],
      [2, 'name', 'string', true],
      [3, 'stock', 'long', false],
    ]);
    expect(table.metadata.snapshots).toHaveLength(2);
  });

  it('floe and icebird read the same live rows, deletes applied across the change', async () => {
    const table = await wh.catalog.loadTable(route.table);
    const floe = byId(await readScanRows(table, await planScan(table)));
    expect(floe).toEqual(EXPECTED.map((r) => ({ ...r, stock: r.stock === null ? null : BigInt(r.stock) })));
    const ice = (await icebergRead({ tableUrl: `${wh.url}/inventory/items` })) as Record<string, unknown>[];
    expect(
      byId(ice).map((r) => ({ ...r, stock: r.stock === null ? null : BigInt(r.stock as bigint) })),
    ).toEqual(floe);
  });

  it('compaction keeps the same rows, readable by icebird', async () => {
    // The state machine's order: plan → compact each group → commit (as `floe maintain compact`).
    const ctx = { catalog: wh.catalog };
    const table0 = 'inventory.items';
    const plan = await planTask(ctx, { table: table0 });
    expect(plan.groups.length).toBeGreaterThan(0);
    const rewrites = [];
    for (const group of plan.groups) rewrites.push(await compactTask(ctx, { table: table0, group }));
    const commit = await commitTask(ctx, { table: table0, plan, rewrites });
    expect(commit.status).toBe('committed');
    const table = await wh.catalog.loadTable(route.table);
    const floe = byId(await readScanRows(table, await planScan(table)));
    expect(floe.map((r) => r.id)).toEqual([1n, 2n, 4n, 5n]);
    const ice = (await icebergRead({ tableUrl: `${wh.url}/inventory/items` })) as Record<string, unknown>[];
    expect(byId(ice).map((r) => [r.id, r.name, r.stock === null ? null : Number(r.stock)])).toEqual(
      EXPECTED.map((r) => [r.id, r.name, r.stock]),
    );
  });
});
