/**
 * One table's share of a Kafka batch, as the coordinators pass it around: the route, the loaded table,
 * the batch id and records, the other routes of the event (a topic can feed several tables), and the
 * ingest options (catalog, lock, deadline, observers).
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import type { CommitLock } from '../lock/commit-lock.js';
import type { CommitEvent } from '../table/commit-loop.js';
import type { RawRecord } from '../records/esm-event.js';
import type { TableRoute } from '../routing/routes.js';
import type { SpanStarts } from './span-starts.js';

export interface IngestTableOptions {
  catalog: Catalog;
  lock?: CommitLock;
  deadlineMs?: number;
  onCommitEvent?: (table: string, event: CommitEvent) => void;
  /** Told about things an operator should fix (also listed in the report's `warnings`). */
  onWarning?: (table: string, message: string, kind: IngestWarningKind) => void;
  /** Where a Kafka consumer's fetch for the batch started, per partition: closes holes (span-starts.ts). */
  spanStarts?: SpanStarts;
}

/**
 * What a warning is about, so a caller can count it without parsing its text: the table's schema
 * evolved with the batch, or the data shows a configuration to fix (e.g. one key on two partitions).
 */
export type IngestWarningKind = 'schema-change' | 'configuration' | 'fragmented-offsets';

/** One table's share of a batch (the table as loaded for it). */
export interface TableBatch {
  options: IngestTableOptions;
  route: TableRoute;
  table: LoadedTable;
  /** The same on every delivery of the batch. */
  batchId: string;
  records: RawRecord[];
  /** Every route of the event: records another route's `when` takes are not dead letters here. */
  allRoutes: readonly TableRoute[];
}
