import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { IngestEventOptions } from '../core/ingest/ingest-event.js';
import type { IngestSummary, TableIngestSummary } from './ingest-summary.js';

type Counted = {
  [K in keyof TableIngestSummary]-?: TableIngestSummary[K] extends number ? K : never;
}[keyof TableIngestSummary];
type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

/** Each metric summed over the batch's tables (the names the construct's alarms and dashboard use). */
const SUMS: [string, Counted, Unit][] = [
  ['RowsWritten', 'rowsWritten', MetricUnit.Count],
  ['DeadLetteredRecords', 'deadLettered', MetricUnit.Count],
  ['ReplayedRecordsSkipped', 'skippedAsReplayed', MetricUnit.Count],
  ['DataFilesWritten', 'dataFiles', MetricUnit.Count],
  ['BytesWritten', 'bytesWritten', MetricUnit.Bytes],
  ['CommitAttempts', 'attempts', MetricUnit.Count],
  ['CommitConflicts', 'conflicts', MetricUnit.Count],
  ['CommitStateUnknown', 'unknownOutcomes', MetricUnit.Count],
];

const AGGREGATE_SUMS = [
  ['AggregateWindowsUpdated', 'windowsUpdated'],
  ['AggregateWindowsClosed', 'windowsClosed'],
  ['AggregateLateRecords', 'lateRecords'],
] as const;

/** EMF metrics for one batch. */
export function recordIngestMetrics(metrics: Metrics, summary: IngestSummary): void {
  metrics.addMetric('RecordsIn', MetricUnit.Count, summary.records);
  for (const [name, field, unit] of SUMS) {
    metrics.addMetric(
      name,
      unit,
      summary.tables.reduce((s, t) => s + t[field], 0),
    );
  }
  if (summary.tables.some((t) => t.status === 'committed')) metrics.addMetric('Commits', MetricUnit.Count, 1);
  // Only batches with an aggregate table report these (so append-only functions get no empty metrics).
  for (const [name, field] of AGGREGATE_SUMS) {
    if (summary.tables.every((t) => t[field] === undefined)) continue;
    metrics.addMetric(
      name,
      MetricUnit.Count,
      summary.tables.reduce((s, t) => s + (t[field] ?? 0), 0),
    );
  }
}

/** The core's callbacks during a batch: commit outcomes and warnings, each a log line and a metric. */
export function observeBatch(
  logger: Logger,
  metrics: Metrics,
): Pick<IngestEventOptions, 'onCommitEvent' | 'onWarning'> {
  return {
    onCommitEvent: (table, e) => {
      if (e.type !== 'attempt') logger.info('commit', { table, ...e });
      if (e.type === 'committed') metrics.addMetric('CommitLatency', MetricUnit.Milliseconds, e.ms);
    },
    // Schema changes, keys seen on two partitions, ...: worth a log line and a metric each.
    onWarning: (table, message, kind) => {
      logger.warn(message, { table, kind });
      const name = kind === 'schema-change' ? 'SchemaChanges' : 'IngestWarnings';
      metrics.addMetric(name, MetricUnit.Count, 1);
    },
  };
}
