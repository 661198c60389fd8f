/**
 * Exactly-once commit of one table's share of a Kafka batch, whatever the files are (appended rows,
 * CDC rows plus equality deletes, aggregate windows, a DLQ's letters):
 *   1. classify the records against the base's committed state (classify-batch.ts, here and nowhere
 *      else): replays are skipped (a replay takes effect once; a batch older than the ones committed
 *      before it is not a replay), and records at committed offsets that are not the records committed
 *      there fail the batch (OffsetIdentityError) — neither skipped nor written;
 *   2. let the caller write files for the fresh records;
 *   3. commit one snapshot carrying `floe.batch-id`, the committed ranges with the batch's added, and
 *      the marks of its records (table/offset-marks.ts).
 * If another writer committed some of the offsets our files stand for (or moved the table's specs)
 * while we wrote, our files are dropped and the batch is re-filtered against the new base — re-applying
 * them could duplicate rows. Dead letters go first, to the DLQ table, through the same path
 * (commit-dead-letters.ts). The round itself is table/commit-files-once.ts.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import type { TableRequirement, TableUpdate } from '../catalog/requirements-updates.js';
import type { DataFile, TableIdentifier } from '../spec/types.js';
import type { CommitResult } from '../table/commit-loop.js';
import { appendFiles } from '../table/actions/append-files.js';
import { rowDelta } from '../table/actions/row-delta.js';
import type { Prepared, Stale } from '../table/actions/table-action.js';
import { commitFilesOnce } from '../table/commit-files-once.js';
import { epochSuffix } from '../table/offset-epochs.js';
import { marksOf, type OffsetMarks } from '../table/offset-marks.js';
import {
  BATCH_ID_KEY,
  type CommittedState,
  committedSummary,
  mergeOffsets,
  readCommittedState,
  type SourceOffsets,
} from '../table/source-offsets.js';
import { offsetsOf } from './batch-offsets.js';
import { classifyBatch, overlaps } from './classify-batch.js';
import { OffsetIdentityError } from './offset-identity-error.js';
import { extendToSpanStarts, fragmentationWarning } from './span-starts.js';
import type { RawRecord } from '../records/esm-event.js';
import type { IngestTableOptions } from './table-batch.js';

/** What a batch's writer produced for the records not yet committed. */
export interface BatchFiles {
  dataFiles: DataFile[];
  deleteFiles: DataFile[];
  /** Delete files of the base the delete files supersede (a v3 data file's deletion vector). */
  replacedDeleteFiles?: DataFile[];
  /** The records the files stand for: their offsets must still be uncommitted at commit time. */
  used: RawRecord[];
  /** Rows in the data files. */
  rows: number;
  /** Extra snapshot summary properties the files commit with (an aggregate table's watermark). */
  summary?: Record<string, string>;
  /**
   * Checks the files against each commit attempt's base: the schema/spec changes to commit with
   * them, or `stale` when the files no longer fit the base (they are dropped and written again).
   */
  checkBase?: (base: LoadedTable) => Promise<BaseCheck>;
}

/** Whether a batch's files fit a commit attempt's base, and what to commit with them if so. */
export type BaseCheck =
  | { kind: 'fits'; preUpdates?: TableUpdate[]; preRequirements?: TableRequirement[] }
  | Stale;

export interface BatchOutcome<T extends BatchFiles> {
  /** Absent when every record was already committed. */
  result?: CommitResult;
  written?: T;
  skipped: number;
}

/**
 * Writes files for the records of `records` not yet committed (through `write`, given the base, the
 * fresh records and the base's committed state) and commits them with the batch's offsets (`covered`;
 * by default the spans of `records`, offsetsOf, reaching back to `options.spanStarts` where sound) and
 * the marks of `records`, exactly once
 * (table/commit-files-once.ts: rewritten on a fresh base when the base moved under the files).
 * @throws OffsetIdentityError when records at committed offsets are not the ones committed (not retryable)
 * @throws LakeError subclasses from writing and committing; retryable ones mean "redeliver the batch"
 */
export async function commitBatch<T extends BatchFiles>(
  options: IngestTableOptions,
  id: TableIdentifier,
  batchId: string | ((files: T) => string),
  records: RawRecord[],
  write: (table: LoadedTable, fresh: RawRecord[], committed: CommittedState) => Promise<T>,
  loaded?: LoadedTable,
  covered?: SourceOffsets,
): Promise<BatchOutcome<T>> {
  let skipped = records.length;
  // What the last prepared attempt committed on, for the fragmentation warning after it landed.
  let last: { committed: SourceOffsets; batchOffsets: SourceOffsets } | undefined;
  let batchMarks: OffsetMarks | undefined;
  const spans = offsetsOf(records);
  // The same offsets in a later epoch are another batch (offset-epochs.ts): set per round, from its base.
  let epoch = '';
  const idOf = (files: T) => (typeof batchId === 'string' ? batchId : batchId(files)) + epoch;
  const outcome = await commitFilesOnce(
    options.catalog,
    id,
    {
      batchId: idOf,
      loaded,
      write: async (table) => {
        const state = readCommittedState(table.metadata);
        const { fresh, replayed, conflicts } = classifyBatch(records, state);
        if (conflicts.length > 0) throw new OffsetIdentityError(formatIdentifier(id), conflicts);
        skipped = replayed;
        epoch = epochSuffix(state.epochs, spans);
        return fresh.length === 0 ? undefined : write(table, fresh, state);
      },
      // Deletion vectors of one batch share a Puffin file: each path once.
      paths: (files) => [...new Set([...files.dataFiles, ...files.deleteFiles].map((f) => f.file_path))],
      prepare: async (base, files): Promise<Prepared<Stale>> => {
        const state = readCommittedState(base.metadata);
        const committed = state.offsets;
        if (overlaps(files.used, committed)) {
          return {
            kind: 'stale',
            reason: `${formatIdentifier(id)}: another writer committed some of these offsets meanwhile`,
          };
        }
        if (epochSuffix(state.epochs, spans) !== epoch) {
          return { kind: 'stale', reason: `${formatIdentifier(id)}: a new offset epoch started meanwhile` };
        }
        const batchOffsets = covered ?? extendToSpanStarts(spans, options.spanStarts, committed);
        last = { committed, batchOffsets };
        batchMarks ??= marksOf(records);
        const extra = files.checkBase ? await files.checkBase(base) : { kind: 'fits' as const };
        if (extra.kind === 'stale') return extra;
        const snapshot = {
          dataFiles: files.dataFiles,
          preUpdates: extra.preUpdates,
          preRequirements: extra.preRequirements,
          summary: {
            ...files.summary,
            [BATCH_ID_KEY]: idOf(files),
            ...committedSummary(state, batchOffsets, batchMarks),
          },
        };
        // Rows alone are an append; rows with their deletes (CDC, upsert, aggregate) a row delta.
        return files.deleteFiles.length === 0
          ? appendFiles(base, snapshot)
          : rowDelta(base, {
              ...snapshot,
              deleteFiles: files.deleteFiles,
              removedDeleteFiles: files.replacedDeleteFiles,
            });
      },
    },
    {
      lock: options.lock,
      deadlineMs: options.deadlineMs,
      onEvent: (e) => options.onCommitEvent?.(formatIdentifier(id), e),
    },
  );
  if (outcome.kind === 'nothing-to-write') return { skipped: records.length };
  if (covered === undefined && last && outcome.result.status === 'committed') {
    const merged = mergeOffsets(last.committed, last.batchOffsets);
    const fragmented = fragmentationWarning(last.committed, merged, last.batchOffsets);
    if (fragmented) options.onWarning?.(formatIdentifier(id), fragmented, 'fragmented-offsets');
  }
  // Already committed: the files written on this base were spare (dropped), the batch's rows are those landed.
  const written = outcome.result.status === 'committed' ? outcome.files : undefined;
  return { result: outcome.result, ...(written ? { written } : {}), skipped };
}
