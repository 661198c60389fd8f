/**
 * What the ingest function returns to Lambda: a compact, JSON-safe view of the internal report (snapshot
 * ids as decimal strings; no per-record detail). The ESM only looks at success or failure, so the result
 * is for logs, tests and `aws lambda invoke`; it must never fail to serialise (see lambda-glue.ts).
 */
import type { IngestEventReport } from '../core/ingest/ingest-event.js';

export interface TableIngestSummary {
  table: string;
  status: 'committed' | 'already-committed' | 'nothing-to-commit';
  recordsIn: number;
  rowsWritten: number;
  deadLettered: number;
  skippedAsReplayed: number;
  dataFiles: number;
  bytesWritten: number;
  /** The snapshot committed, as a decimal string (a 64-bit id does not fit a JSON number). */
  snapshotId: string | null;
  attempts: number;
  conflicts: number;
  unknownOutcomes: number;
  /** CDC tables: delete files committed, keys equality deletes delete, rows position deletes delete. */
  deleteFiles?: number;
  equalityDeletes?: number;
  positionDeletes?: number;
  /** Aggregate tables: windows written, windows closed, records dead-lettered as late. */
  windowsUpdated?: number;
  windowsClosed?: number;
  lateRecords?: number;
  warnings?: string[];
}

export interface IngestSummary {
  batchId: string;
  records: number;
  tables: TableIngestSummary[];
}

export function summarizeIngest(report: IngestEventReport): IngestSummary {
  return {
    batchId: report.batchId,
    records: report.records,
    tables: report.tables.map((t) => ({
      table: t.table,
      status: t.status,
      recordsIn: t.recordsIn,
      rowsWritten: t.rowsWritten,
      deadLettered: t.deadLettered,
      skippedAsReplayed: t.skippedAsReplayed,
      dataFiles: t.dataFiles,
      bytesWritten: t.bytesWritten,
      snapshotId: t.snapshotId === undefined ? null : t.snapshotId.toString(),
      attempts: t.attempts,
      conflicts: t.conflicts,
      unknownOutcomes: t.unknownOutcomes,
      ...(t.deleteFiles === undefined ? {} : { deleteFiles: t.deleteFiles }),
      ...(t.equalityDeletes === undefined ? {} : { equalityDeletes: t.equalityDeletes }),
      ...(t.positionDeletes === undefined ? {} : { positionDeletes: t.positionDeletes }),
      ...(t.windowsUpdated === undefined ? {} : { windowsUpdated: t.windowsUpdated }),
      ...(t.windowsClosed === undefined ? {} : { windowsClosed: t.windowsClosed }),
      ...(t.lateRecords === undefined ? {} : { lateRecords: t.lateRecords }),
      ...(t.warnings?.length ? { warnings: t.warnings } : {}),
    })),
  };
}

/** `{ "topic-partition": "first..last" }` from the raw event, for log lines (no decoding). */
export function offsetRanges(event: unknown): Record<string, string> {
  const records = (event as { records?: Record<string, { offset?: unknown }[]> } | null)?.records;
  const out: Record<string, string> = {};
  if (!records || typeof records !== 'object') return out;
  for (const [key, list] of Object.entries(records)) {
    if (!Array.isArray(list) || list.length === 0) continue;
    out[key] = `${list[0]?.offset}..${list[list.length - 1]?.offset}`;
  }
  return out;
}
