import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { formatIdentifier } from '../core/catalog/catalog.js';
import type { IngestEventOptions } from '../core/ingest/ingest-event.js';
import type { RawRecord } from '../core/records/esm-event.js';
import type { TableRoute } from '../core/routing/routes.js';
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

/** The per-table metrics (dimensions `service` and `table`) the construct's table alarms read. */
export const TABLE_COMMITS_METRIC = 'TableCommits';
export const COMMITTED_RECORD_AGE_METRIC = 'CommittedRecordAge';

/**
 * The newest record timestamp (epoch ms, Kafka's `timestamp`, the `_kafka.timestamp` column) each table
 * was handed in this batch: the newest over the records of the topics routed to it. Records without a
 * timestamp (Kafka's -1, or none: decoded as ≤ 0) are left out; a table with none of them has no entry.
 */
export function newestTimestamps(
  records: readonly RawRecord[],
  routes: readonly TableRoute[],
): Map<string, number> {
  const byTopic = new Map<string, number>();
  for (const r of records) {
    if (r.timestamp > (byTopic.get(r.topic) ?? 0)) byTopic.set(r.topic, r.timestamp);
  }
  const byTable = new Map<string, number>();
  for (const route of routes) {
    const table = formatIdentifier(route.table);
    for (const topic of route.topics) {
      const t = byTopic.get(topic);
      if (t !== undefined && t > (byTable.get(table) ?? 0)) byTable.set(table, t);
    }
  }
  return byTable;
}

/**
 * Per table that committed a snapshot in this batch: `TableCommits` (1) and `CommittedRecordAge` (`now`
 * − the newest record timestamp it was handed, in ms; 0 when producer clocks run ahead of this one).
 * A table that committed nothing (a replay, an empty share) emits neither: its `TableCommits` goes
 * missing, which is what the stale-table alarm looks for. Each metric is its own EMF document, because
 * its `table` dimension must not reach the batch's other metrics.
 */
export function recordTableMetrics(
  metrics: Metrics,
  summary: IngestSummary,
  newest: ReadonlyMap<string, number>,
  now: number,
): void {
  for (const t of summary.tables) {
    if (t.status !== 'committed') continue;
    emitForTable(metrics, t.table, TABLE_COMMITS_METRIC, MetricUnit.Count, 1);
    const timestamp = newest.get(t.table);
    if (timestamp === undefined) continue;
    emitForTable(
      metrics,
      t.table,
      COMMITTED_RECORD_AGE_METRIC,
      MetricUnit.Milliseconds,
      Math.max(0, now - timestamp),
    );
  }
}

function emitForTable(metrics: Metrics, table: string, name: string, unit: Unit, value: number): void {
  const single = metrics.singleMetric();
  single.addDimension('table', table);
  single.addMetric(name, unit, value);
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
