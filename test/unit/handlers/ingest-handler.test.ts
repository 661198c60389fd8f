import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { loadHandlerConfig } from '../../../functions/handlers/config.js';
import { handler, ingestHandler } from '../../../functions/handlers/ingest.js';
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
  });
});
