/** What ingesting one table's share of a batch did, as the ingest report lists it. */
import { formatIdentifier } from '../catalog/catalog.js';
import type { SnapshotId } from '../spec/types.js';
import type { BatchFiles, BatchOutcome } from './commit-batch.js';
import type { RawRecord } from '../records/esm-event.js';
import type { IngestMode, TableRoute } from '../routing/routes.js';

export interface TableIngestReport {
  table: string;
  batchId: string;
  recordsIn: number;
  skippedAsReplayed: number;
  rowsWritten: number;
  deadLettered: number;
  dataFiles: number;
  bytesWritten: number;
  snapshotId?: SnapshotId;
  status: 'committed' | 'already-committed' | 'nothing-to-commit';
  attempts: number;
  conflicts: number;
  unknownOutcomes: number;
  mode?: IngestMode;
  /** Delete files committed, equality or position (CDC tables). */
  deleteFiles?: number;
  /** Keys whose older rows the batch deleted or replaced (CDC tables). */
  equalityDeletes?: number;
  /** Rows the batch deleted or replaced through position deletes (keyed tables). */
  positionDeletes?: number;
  /** Records recognised as no change (tombstones, heartbeats, ...), by reason (CDC tables). */
  ignored?: Record<string, number>;
  /** Configuration problems worth fixing (e.g. one key on two Kafka partitions). */
  warnings?: string[];
  /** Aggregate tables: windows whose row the batch wrote, windows it closed, records dead-lettered as late. */
  windowsUpdated?: number;
  windowsClosed?: number;
  lateRecords?: number;
}

/** The report fields every mode shares. */
export function baseReport(
  route: TableRoute,
  batchId: string,
  records: RawRecord[],
  deadLettered: number,
  outcome: BatchOutcome<BatchFiles>,
): TableIngestReport {
  const result = outcome.result;
  const committed = result?.status === 'committed';
  const files = committed ? (outcome.written?.dataFiles ?? []) : [];
  return {
    table: formatIdentifier(route.table),
    batchId,
    recordsIn: records.length,
    skippedAsReplayed: outcome.skipped,
    rowsWritten: committed ? (outcome.written?.rows ?? 0) : 0,
    deadLettered,
    dataFiles: files.length,
    bytesWritten: files.reduce((s, f) => s + Number(f.file_size_in_bytes), 0),
    snapshotId: result?.snapshotId,
    status: result ? result.status : 'nothing-to-commit',
    attempts: result?.attempts ?? 0,
    conflicts: result?.conflicts ?? 0,
    unknownOutcomes: result?.unknownOutcomes ?? 0,
  };
}
