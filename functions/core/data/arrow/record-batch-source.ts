/**
 * Rows that build their own Arrow batches: what the writer needs of rows held as columns (gathered
 * columns at ingest, gathered file columns in compaction) — a length, and the RecordBatch of a range
 * with its column statistics, exactly as build-record-batch.ts builds it from the same rows.
 */
import type * as arrow from 'apache-arrow';
import type { StructType } from '../../spec/types.js';
import type { StatsSink } from './column-stats.js';

export interface RecordBatchSource {
  readonly length: number;
  /** Arrow RecordBatch of rows [start, end) for `schema` / `arrowSchema`; fills `stats` for every leaf. */
  buildBatch(
    schema: StructType,
    arrowSchema: arrow.Schema,
    start: number,
    end: number,
    stats: StatsSink,
  ): arrow.RecordBatch;
}
