import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { IngestEventReport } from '../core/ingest/ingest-event.js';

/** EMF metrics for one batch (the names the construct's alarms and dashboard use). */
export function recordIngestMetrics(metrics: Metrics, report: IngestEventReport): void {
  const sum = (pick: (t: IngestEventReport['tables'][number]) => number) =>
    report.tables.reduce((s, t) => s + pick(t), 0);
  metrics.addMetric('RecordsIn', MetricUnit.Count, report.records);
  metrics.addMetric(
    'RowsWritten',
    MetricUnit.Count,
    sum((t) => t.rowsWritten),
  );
  metrics.addMetric(
    'DeadLetteredRecords',
    MetricUnit.Count,
    sum((t) => t.deadLettered),
  );
  metrics.addMetric(
    'ReplayedRecordsSkipped',
    MetricUnit.Count,
    sum((t) => t.skippedAsReplayed),
  );
  metrics.addMetric(
    'DataFilesWritten',
    MetricUnit.Count,
    sum((t) => t.dataFiles),
  );
  metrics.addMetric(
    'BytesWritten',
    MetricUnit.Bytes,
    sum((t) => t.bytesWritten),
  );
  metrics.addMetric(
    'CommitAttempts',
    MetricUnit.Count,
    sum((t) => t.attempts),
  );
  metrics.addMetric(
    'CommitConflicts',
    MetricUnit.Count,
    sum((t) => t.conflicts),
  );
  metrics.addMetric(
    'CommitStateUnknown',
    MetricUnit.Count,
    sum((t) => t.unknownOutcomes),
  );
  if (report.tables.some((t) => t.status === 'committed')) metrics.addMetric('Commits', MetricUnit.Count, 1);
}
