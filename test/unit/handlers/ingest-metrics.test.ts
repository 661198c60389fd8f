import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import type { RawRecord } from '../../../functions/core/records/esm-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import {
  newestTimestamps,
  observeBatch,
  recordIngestMetrics,
} from '../../../functions/handlers/ingest-metrics.js';
import type { IngestSummary } from '../../../functions/handlers/ingest-summary.js';

/** Metrics and a logger that only remember what they were told. */
function recorders() {
  const metrics: [string, number][] = [];
  const warnings: unknown[] = [];
  return {
    metrics,
    warnings,
    metricsSink: { addMetric: (name: string, _unit: string, value: number) => metrics.push([name, value]) },
    loggerSink: { info: () => undefined, warn: (...args: unknown[]) => warnings.push(args) },
  };
}

describe('ingest metrics', () => {
  it('counts a warning by its kind, never by its text', () => {
    // Prepare
    const r = recorders();
    const { onWarning } = observeBatch(
      r.loggerSink as unknown as Logger,
      r.metricsSink as unknown as Metrics,
    );
    // Act
    onWarning?.('sales.orders', 'schema evolves: add column coupon', 'schema-change');
    onWarning?.('sales.orders', 'key 42 seen on partitions 0 and 1', 'configuration');
    onWarning?.('sales.orders', 'schema evolves (but said by a configuration check)', 'configuration');
    // Assess
    expect(r.metrics).toEqual([
      ['SchemaChanges', 1],
      ['IngestWarnings', 1],
      ['IngestWarnings', 1],
    ]);
    expect(r.warnings).toHaveLength(3);
  });

  it('sums the tables of a batch into the metrics the alarms read', () => {
    // Prepare
    const r = recorders();
    const table = {
      status: 'committed' as const,
      recordsIn: 10,
      rowsWritten: 8,
      deadLettered: 2,
      skippedAsReplayed: 0,
      dataFiles: 1,
      bytesWritten: 100,
      snapshotId: '1',
      attempts: 1,
      conflicts: 0,
      unknownOutcomes: 0,
    };
    const summary: IngestSummary = {
      batchId: 'b',
      records: 10,
      tables: [
        { ...table, table: 'a.x' },
        { ...table, table: 'a.y', status: 'nothing-to-commit', rowsWritten: 0, snapshotId: null },
      ],
    };
    // Act
    recordIngestMetrics(r.metricsSink as unknown as Metrics, summary);
    // Assess
    const byName = Object.fromEntries(r.metrics);
    expect(byName).toMatchObject({ RecordsIn: 10, RowsWritten: 8, DeadLetteredRecords: 4, Commits: 1 });
  });

  it("takes each table's newest record timestamp over the topics routed to it, leaving out records without one", () => {
    // Prepare: two tables, one fed by two topics; -1 is Kafka's "no timestamp"
    const record = (topic: string, timestamp: number) => ({ topic, timestamp }) as RawRecord;
    const route = (name: string, topics: string[]) =>
      ({ table: { namespace: ['sales'], name }, topics }) as unknown as TableRoute;
    const records = [record('a', 5), record('a', 9), record('b', 12), record('c', -1), record('a', 7)];
    // Act
    const newest = newestTimestamps(records, [
      route('one', ['a']),
      route('both', ['a', 'b']),
      route('stampless', ['c']),
      route('idle', ['d']),
    ]);
    // Assess
    expect(Object.fromEntries(newest)).toEqual({ 'sales.one': 9, 'sales.both': 12 });
  });
});
