import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { loadHandlerConfig } from '../../../functions/handlers/config.js';
import { handler, ingestHandler } from '../../../functions/handlers/ingest.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { tempWarehouse } from '../../support/tables.js';

const event = (name: string) => JSON.parse(readFileSync(`events/${name}`, 'utf8'));
const context = { getRemainingTimeInMillis: () => 60_000 };

describe('ingest handler', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempWarehouse());
    process.env.FLOE_CATALOG = 'embedded';
    process.env.FLOE_WAREHOUSE = dir;
    process.env.FLOE_TABLES = JSON.stringify([
      {
        table: 'sales.orders',
        topics: ['orders'],
        schema: JSON.parse(readFileSync('events/orders.schema.json', 'utf8')),
        partitionBy: 'day(order_ts)',
      },
    ]);
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  });
  afterAll(() => cleanup());

  it('commits a batch, then recognises its redelivery', async () => {
    const first = await ingestHandler(event('orders-batch-1.json'), context);
    expect(first.tables[0]).toMatchObject({ table: 'sales.orders', status: 'committed', rowsWritten: 120 });
    // Lambda's runtime serialises the result with JSON.stringify: 64-bit ids travel as decimal strings
    expect(first.tables[0]?.snapshotId).toMatch(/^-?\d+$/);
    expect(JSON.parse(JSON.stringify(first))).toEqual(first);
    const again = await ingestHandler(event('orders-batch-1.json'), context);
    expect(again.tables[0]).toMatchObject({
      status: 'nothing-to-commit',
      rowsWritten: 0,
      skippedAsReplayed: 120,
    });
    expect(again.batchId).toBe(first.batchId);
  });

  it('dead-letters bad records and commits the rest', async () => {
    const report = await ingestHandler(event('orders-batch-2.json'), context);
    expect(report.tables[0]).toMatchObject({ rowsWritten: 118, deadLettered: 2 });
  });

  it("lets go of the event's records once decoded; dead letters keep their original", async () => {
    // Prepare: batch 2 (two records that do not fit) at later offsets, a batch of its own; the runtime
    // holds this object until the handler returns
    const delivered = event('orders-batch-2.json');
    const records = Object.values(delivered.records as Record<string, { offset: number }[]>).flat();
    for (const r of records) r.offset += 10_000;
    // Act
    const report = await ingestHandler(delivered, context);
    // Assess: the batch was ingested whole, and its records are no longer reachable from the event
    expect(report.records).toBe(records.length);
    expect(report.tables[0]).toMatchObject({ status: 'committed', rowsWritten: 118, deadLettered: 2 });
    expect(delivered).not.toHaveProperty('records');
    expect(delivered.eventSource).toBe('aws:kafka');
  });

  it('keeps the records of overlapping invocations apart (each batch decodes into buffers of its own then)', async () => {
    // Prepare: two different batches at offsets no other test used; Lambda never overlaps
    // invocations, but a caller of the exported handler may (one decode reuses the last one's buffers
    // only when no other invocation is in flight)
    const at = (name: string, shift: number) => {
      const e = event(name);
      for (const list of Object.values(e.records as Record<string, { offset: number }[]>))
        for (const r of list) r.offset += shift;
      return e;
    };
    const valuesOf = (name: string) =>
      Object.values(event(name).records as Record<string, { value: string }[]>)
        .flat()
        .flatMap((r) => {
          try {
            return [JSON.parse(Buffer.from(r.value, 'base64').toString()) as { order_id: unknown }];
          } catch {
            return []; // a value that is not JSON: dead-lettered
          }
        })
        .filter((v) => typeof v.order_id === 'number');
    const expected = new Map(
      [...valuesOf('orders-batch-1.json'), ...valuesOf('orders-batch-2.json')].map((v) => [
        String(v.order_id),
        v,
      ]),
    );

    // Act
    const [a, b] = await Promise.all([
      ingestHandler(at('orders-batch-1.json', 20_000), context),
      ingestHandler(at('orders-batch-2.json', 30_000), context),
    ]);

    // Assess: every row of both commits carries its own record's values
    expect(a.tables[0]).toMatchObject({ status: 'committed', rowsWritten: 120 });
    expect(b.tables[0]).toMatchObject({ status: 'committed', rowsWritten: 118 });
    const table = await new EmbeddedCatalog({ warehouse: dir }).loadTable({
      namespace: ['sales'],
      name: 'orders',
    });
    const snapshots = new Set([String(a.tables[0]?.snapshotId), String(b.tables[0]?.snapshotId)]);
    const rows = (await readScanRows(table, await planScan(table))).filter(
      (r) => (r._kafka as { offset: bigint }).offset >= 20_000n,
    );
    expect(snapshots.size).toBe(2);
    expect(rows).toHaveLength(238);
    for (const row of rows) {
      const want = expected.get(String(row.order_id));
      expect(want, String(row.order_id)).toBeDefined();
      expect(String(row.customer_id)).toBe(String((want as { customer_id?: number }).customer_id));
    }
  });

  it('fails a non-ESM event with a clear, non-retryable error through the middy handler', async () => {
    await expect(handler({ hello: 'world' }, { ...context } as never)).rejects.toThrow(
      'event is not a Kafka event source mapping event',
    );
  });

  it('rejects bad configuration with the variable named', async () => {
    await expect(loadHandlerConfig({ FLOE_CATALOG: 'embedded', FLOE_WAREHOUSE: dir })).rejects.toThrow(
      'environment variable FLOE_TABLES is required',
    );
    await expect(loadHandlerConfig({ FLOE_CATALOG: 'glue', FLOE_TABLES: '[]' })).rejects.toThrow(
      ValidationError,
    );
    await expect(loadHandlerConfig({ FLOE_TABLES: '{nope' })).rejects.toThrow(
      'FLOE_TABLES is not valid JSON',
    );
    await expect(
      loadHandlerConfig({ FLOE_WAREHOUSE: dir, FLOE_TABLES: '[{"table":"x","topics":["t"]}]' }),
    ).rejects.toThrow('must look like NAMESPACE.TABLE');
    await expect(
      loadHandlerConfig({ FLOE_WAREHOUSE: dir, FLOE_TABLES: '[{"table":"x","topics":["t"]}]' }),
    ).rejects.toThrow(ValidationError);
  });
});
