/**
 * The per-table metrics the construct's stale-table and record-age alarms read, as the real ingest
 * handler emits them (EMF on stdout, Powertools enabled) for batches committed to the embedded catalog.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { tempWarehouse } from '../../support/tables.js';

const event = (name: string) => JSON.parse(readFileSync(`events/${name}`, 'utf8'));
const context = { getRemainingTimeInMillis: () => 60_000 };
const NOW = Date.parse('2027-01-01T00:00:00Z');

interface EmfDocument {
  _aws: {
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  [key: string]: unknown;
}

/** The EMF documents written to stdout while `act` runs (log lines and other output are left out). */
async function emfDuring(act: () => Promise<unknown>): Promise<EmfDocument[]> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    lines.push(...String(chunk).split('\n'));
    return true;
  });
  try {
    await act();
  } finally {
    spy.mockRestore();
  }
  return lines.filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l) as EmfDocument);
}

/** The documents that carry `metric`, with their dimension names, value and unit. */
function emitted(docs: EmfDocument[], metric: string) {
  return docs.flatMap((d) =>
    d._aws.CloudWatchMetrics.flatMap((m) =>
      m.Metrics.filter((x) => x.Name === metric).map((x) => ({
        namespace: m.Namespace,
        dimensions: m.Dimensions,
        service: d.service,
        table: d.table,
        unit: x.Unit,
        value: d[metric],
      })),
    ),
  );
}

describe('ingest handler: per-table commit and record-age metrics', () => {
  let cleanup: () => Promise<void>;
  let ingestHandler: typeof import('../../../functions/handlers/ingest.js').ingestHandler;
  beforeAll(async () => {
    let dir: string;
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
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    process.env.POWERTOOLS_METRICS_NAMESPACE = 'floe-test';
    process.env.POWERTOOLS_SERVICE_NAME = 'orders-pipeline';
    // Imported once the variables are set: the handler's Metrics read the service name when created
    ({ ingestHandler } = await import('../../../functions/handlers/ingest.js'));
    // Only Date is faked: the catalog's I/O keeps its real timers
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
  });
  afterEach(() => vi.setSystemTime(NOW));
  afterAll(async () => {
    vi.useRealTimers();
    await cleanup();
  });

  it('emits TableCommits and CommittedRecordAge under service and table for a committed batch', async () => {
    // Prepare
    const batch = event('orders-batch-1.json');
    const timestamps = Object.values(batch.records as Record<string, { timestamp: number }[]>)
      .flat()
      .map((r) => r.timestamp);
    const newest = Math.max(...timestamps);
    // Act
    const docs = await emfDuring(() => ingestHandler(batch, context));
    // Assess
    const dims = [['service', 'table']];
    const at = {
      namespace: 'floe-test',
      dimensions: dims,
      service: 'orders-pipeline',
      table: 'sales.orders',
    };
    expect(emitted(docs, 'TableCommits')).toEqual([{ ...at, unit: 'Count', value: 1 }]);
    expect(emitted(docs, 'CommittedRecordAge')).toEqual([
      { ...at, unit: 'Milliseconds', value: NOW - newest },
    ]);
  });

  it('emits neither for a batch that committed nothing (its redelivery)', async () => {
    // Prepare: batch 2 committed once
    await emfDuring(() => ingestHandler(event('orders-batch-2.json'), context));
    // Act
    const docs = await emfDuring(() => ingestHandler(event('orders-batch-2.json'), context));
    // Assess: the batch ran (its records were seen and skipped) but no table metric went out
    expect(emitted(docs, 'TableCommits')).toEqual([]);
    expect(emitted(docs, 'CommittedRecordAge')).toEqual([]);
  });

  it('reports an age of 0, never a negative one, for records stamped ahead of this clock', async () => {
    // Prepare: batch 3's records, stamped a minute after "now"
    const batch = event('orders-batch-1.json');
    for (const list of Object.values(
      batch.records as Record<string, { offset: number; timestamp: number }[]>,
    ))
      for (const r of list) {
        r.offset += 50_000;
        r.timestamp = NOW + 60_000;
      }
    // Act
    const docs = await emfDuring(() => ingestHandler(batch, context));
    // Assess
    expect(emitted(docs, 'CommittedRecordAge').map((m) => m.value)).toEqual([0]);
  });
});
