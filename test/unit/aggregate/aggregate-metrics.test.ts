/** The handler's metrics for aggregate tables: windows updated, windows closed, late records. */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { recordIngestMetrics } from '../../../functions/handlers/ingest-metrics.js';
import type { IngestSummary, TableIngestSummary } from '../../../functions/handlers/ingest-summary.js';

const base: TableIngestSummary = {
  table: 'rt.x',
  status: 'committed',
  recordsIn: 10,
  rowsWritten: 4,
  deadLettered: 2,
  skippedAsReplayed: 0,
  dataFiles: 1,
  bytesWritten: 100,
  snapshotId: '1',
  attempts: 1,
  conflicts: 0,
  unknownOutcomes: 0,
};

function metricsOf(summary: IngestSummary): Map<string, number> {
  const seen: [string, number][] = [];
  const sink = { addMetric: (name: string, _unit: string, value: number) => seen.push([name, value]) };
  recordIngestMetrics(sink as unknown as Metrics, summary);
  return new Map(seen);
}

describe('aggregate metrics', () => {
  it('sums the aggregate counters of a batch; batches without an aggregate table have none', () => {
    const withAggregate = metricsOf({
      batchId: 'b',
      records: 20,
      tables: [
        { ...base, windowsUpdated: 3, windowsClosed: 1, lateRecords: 2 },
        { ...base, table: 'rt.y', windowsUpdated: 4, windowsClosed: 0, lateRecords: 0 },
        { ...base, table: 'sales.orders' },
      ],
    });
    expect(withAggregate.get('AggregateWindowsUpdated')).toBe(7);
    expect(withAggregate.get('AggregateWindowsClosed')).toBe(1);
    expect(withAggregate.get('AggregateLateRecords')).toBe(2);
    const without = metricsOf({ batchId: 'b', records: 10, tables: [base] });
    expect([...without.keys()].filter((k) => k.startsWith('Aggregate'))).toEqual([]);
  });
});
