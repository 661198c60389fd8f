/**
 * Exactly-once commit of one table's share of a Kafka batch, whatever the files are (appended rows,
 * or CDC rows plus equality deletes):
 *   1. skip records whose offset lies in one of the table's committed offset ranges (a replay takes
 *      effect once; a batch older than the ones committed before it is not a replay);
 *   2. let the caller write files for the records not yet committed;
 *   3. commit one snapshot carrying `floe.batch-id` and the committed ranges with the batch's added.
 * If another writer committed some of the offsets our files stand for (or moved the table's specs)
 * while we wrote, our files are dropped and the batch is re-filtered against the new base — re-applying
 * them could duplicate rows. Dead letters go first, to the DLQ table, through the same path.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import type { TableRequirement, TableUpdate } from '../catalog/requirements-updates.js';
import { LakeError } from '../errors.js';
import { TableArea } from '../io/confined-delete.js';
import type { CommitLock } from '../lock/commit-lock.js';
import type { DataFile, SnapshotId, SnapshotOperation, TableIdentifier } from '../spec/types.js';
import type { CommitEvent, CommitResult } from '../table/commit-loop.js';
import { commitWithRetry } from '../table/commit-loop.js';
import { prepareSnapshot } from '../table/snapshot-producer.js';
import {
  BATCH_ID_KEY,
  encodeOffsets,
  mergeOffsets,
  OFFSETS_KEY,
  readCommittedOffsets,
  type SourceOffsets,
} from '../table/source-offsets.js';
import { containsOffset, offsetSetOf } from '../table/offset-ranges.js';
import { writeRows } from '../table/write-rows.js';
import { DLQ_SCHEMA, type DeadLetter, deadLetterRow, dlqIdentifier } from './dead-letters.js';
import type { RawRecord } from './esm-event.js';
import { loadOrCreateTable } from './load-or-create-table.js';
import type { IngestMode, TableRoute } from './routes.js';

export interface IngestTableOptions {
  catalog: Catalog;
  lock?: CommitLock;
  deadlineMs?: number;
  onCommitEvent?: (table: string, event: CommitEvent) => void;
  /** Told about things an operator should fix (also listed in the report's `warnings`). */
  onWarning?: (table: string, message: string, kind: IngestWarningKind) => void;
}

/**
 * What a warning is about, so a caller can count it without parsing its text: the table's schema
 * evolved with the batch, or the data shows a configuration to fix (e.g. one key on two partitions).
 */
export type IngestWarningKind = 'schema-change' | 'configuration';

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
  /** Equality-delete files committed (CDC tables). */
  deleteFiles?: number;
  /** Keys whose older rows the batch deleted or replaced (CDC tables). */
  equalityDeletes?: number;
  /** Records recognised as no change (tombstones, heartbeats, ...), by reason (CDC tables). */
  ignored?: Record<string, number>;
  /** Configuration problems worth fixing (e.g. one key on two Kafka partitions). */
  warnings?: string[];
  /** Aggregate tables: windows whose row the batch wrote, windows it closed, records dead-lettered as late. */
  windowsUpdated?: number;
  windowsClosed?: number;
  lateRecords?: number;
}

/** Thrown inside prepare when files written for one base do not fit the base being committed on. */
export class StaleWriteError extends LakeError {
  constructor(message: string) {
    super(message, { retryable: true });
  }
}

/**
 * The offsets a batch commits: per topic-partition, the span from its first to its last offset.
 * The span, not only the offsets the records hold: inside one delivered batch the consumer skipped
 * the missing offsets (transaction markers, aborted or compacted records), so no other batch can hold
 * them, and leaving them out would split the ranges at every marker. The span never covers another
 * batch's records: a consumer delivers a partition's records in order, so everything deliverable
 * between the first and the last offset is in this batch (the ESM, `floe run`, and the on-failure
 * records of a failed batch, which are that batch whole). Offsets that could not be read (-1) commit nothing.
 */
export function offsetsOf(records: readonly RawRecord[]): SourceOffsets {
  const spans = new Map<string, Map<number, [bigint, bigint]>>();
  for (const r of records) {
    if (r.offset < 0n) continue;
    const parts = spans.get(r.topic) ?? new Map<number, [bigint, bigint]>();
    const span = parts.get(r.partition);
    if (!span) parts.set(r.partition, [r.offset, r.offset]);
    else if (r.offset < span[0]) span[0] = r.offset;
    else if (r.offset > span[1]) span[1] = r.offset;
    spans.set(r.topic, parts);
  }
  return new Map([...spans].map(([t, parts]) => [t, new Map([...parts].map(([p, span]) => [p, [span]]))]));
}

/** Whether a record's offset is in the committed ranges of its topic-partition. */
function isCommitted(r: RawRecord, committed: SourceOffsets): boolean {
  return r.offset >= 0n && containsOffset(committed, r.topic, r.partition, r.offset);
}

/** The records whose offsets are outside the committed ranges of their topic-partition. */
export function unseen(records: RawRecord[], committed: SourceOffsets): RawRecord[] {
  // A record whose offset could not be read (-1) always carries a decode error: it is never "seen"
  // by offsets, so it reaches the DLQ; a replay of the same batch is recognised by its batch id.
  return records.filter((r) => !isCommitted(r, committed));
}

/**
 * Splits off the records that repeat an offset already held earlier in the batch (same topic,
 * partition and offset: a hand-made or concatenated event). The first occurrence is the record;
 * each later one becomes a dead letter saying so, so nothing is dropped silently and the offset
 * is written once.
 */
export function splitDuplicates(records: RawRecord[]): { unique: RawRecord[]; duplicates: DeadLetter[] } {
  const seen = new Set<string>();
  const unique: RawRecord[] = [];
  const duplicates: DeadLetter[] = [];
  for (const r of records) {
    const key = `${r.topic}\u0000${r.partition}\u0000${r.offset}`;
    if (r.offset < 0n || !seen.has(key)) {
      seen.add(key);
      unique.push(r);
    } else {
      duplicates.push({
        record: r,
        stage: 'duplicate',
        error: `offset ${r.offset} of ${r.topic}/${r.partition} is held twice in the batch; the first is kept`,
      });
    }
  }
  return { unique, duplicates };
}

/**
 * Whether what a batch was mapped for still holds in a commit round: the same records are unseen
 * and the schema is the one they were reconciled with (else the round maps them again).
 */
export function sameMappingBase(
  current: LoadedTable,
  mappedFor: LoadedTable,
  unseenRecords: readonly RawRecord[],
  fresh: readonly RawRecord[],
): boolean {
  return (
    unseenRecords.length === fresh.length &&
    current.metadata['current-schema-id'] === mappedFor.metadata['current-schema-id'] &&
    current.metadata['last-column-id'] === mappedFor.metadata['last-column-id']
  );
}

function overlaps(records: RawRecord[], committed: SourceOffsets): boolean {
  return records.some((r) => isCommitted(r, committed));
}

/** What a batch's writer produced for the records not yet committed. */
export interface BatchFiles {
  dataFiles: DataFile[];
  deleteFiles: DataFile[];
  /** The records the files stand for: their offsets must still be uncommitted at commit time. */
  used: RawRecord[];
  /** Rows in the data files. */
  rows: number;
  /** Extra snapshot summary properties the files commit with (an aggregate table's watermark). */
  summary?: Record<string, string>;
  /**
   * Checks the files against each commit attempt's base and returns schema/spec changes to commit
   * with them. @throws StaleWriteError when the files no longer fit the base
   */
  checkBase?: (
    base: LoadedTable,
  ) => Promise<{ preUpdates?: TableUpdate[]; preRequirements?: TableRequirement[] }>;
}

export interface BatchOutcome<T extends BatchFiles> {
  /** Absent when every record was already committed. */
  result?: CommitResult;
  written?: T;
  skipped: number;
}

/** Iceberg Java's RowDelta rule: only data → append, only deletes → delete, both → overwrite. */
function operationOf(files: BatchFiles): SnapshotOperation {
  if (files.deleteFiles.length === 0) return 'append';
  return files.dataFiles.length === 0 ? 'delete' : 'overwrite';
}

async function deleteFiles(table: LoadedTable, files: BatchFiles): Promise<void> {
  // Through the one delete guard: only the table's own files go, failures stay as orphans.
  await new TableArea(table).delete([...files.dataFiles, ...files.deleteFiles].map((f) => f.file_path));
}

async function commitFiles(
  options: IngestTableOptions,
  table: LoadedTable,
  batchId: string,
  batchOffsets: SourceOffsets,
  files: BatchFiles,
): Promise<CommitResult> {
  const id = table.identifier;
  return commitWithRetry(
    options.catalog,
    id,
    {
      batchId,
      prepare: async (base) => {
        const committed = readCommittedOffsets(base.metadata);
        if (overlaps(files.used, committed)) {
          throw new StaleWriteError(
            `${formatIdentifier(id)}: another writer committed some of these offsets meanwhile`,
          );
        }
        const extra = files.checkBase ? await files.checkBase(base) : {};
        return prepareSnapshot(base, {
          operation: operationOf(files),
          addedDataFiles: files.dataFiles,
          addedDeleteFiles: files.deleteFiles,
          preUpdates: extra.preUpdates,
          preRequirements: extra.preRequirements,
          summary: {
            ...files.summary,
            [BATCH_ID_KEY]: batchId,
            [OFFSETS_KEY]: encodeOffsets(mergeOffsets(committed, batchOffsets)),
          },
        });
      },
    },
    {
      lock: options.lock,
      base: table,
      deadlineMs: options.deadlineMs,
      onEvent: (e) => options.onCommitEvent?.(formatIdentifier(id), e),
    },
  );
}

/**
 * Writes files for the records of `records` not yet committed (through `write`) and commits them
 * with the batch's offsets (`covered`: the spans of `records`, offsetsOf); starts over (up to 3 times)
 * when the base moved under the files.
 * @throws LakeError subclasses from writing and committing; retryable ones mean "redeliver the batch"
 */
export async function commitBatch<T extends BatchFiles>(
  options: IngestTableOptions,
  id: TableIdentifier,
  batchId: string,
  records: RawRecord[],
  write: (table: LoadedTable, fresh: RawRecord[]) => Promise<T>,
  loaded?: LoadedTable,
  covered: SourceOffsets = offsetsOf(records),
): Promise<BatchOutcome<T>> {
  const batchOffsets = covered;
  for (let round = 0; ; round++) {
    // The caller's table serves the first round; the commit checks it is still current.
    const table = round === 0 && loaded ? loaded : await options.catalog.loadTable(id);
    const fresh = unseen(records, readCommittedOffsets(table.metadata));
    if (fresh.length === 0) return { skipped: records.length };
    const written = await write(table, fresh);
    try {
      const result = await commitFiles(options, table, batchId, batchOffsets, written);
      if (result.status === 'already-committed') await deleteFiles(table, written);
      return { result, written, skipped: records.length - fresh.length };
    } catch (error) {
      if (error instanceof StaleWriteError && round < 3) {
        await deleteFiles(table, written);
        continue;
      }
      // After an unknown outcome the files may be part of the table: never delete them.
      if (!(error instanceof LakeError && error.name === 'CommitStateUnknownError'))
        await deleteFiles(table, written);
      throw error;
    }
  }
}

/**
 * Commits dead letters to the route's DLQ table (created on first use), exactly once per record.
 * The DLQ table's ranges get the letters' own offsets — not the batch's spans: a batch whose main
 * commit failed after its letters landed (a schema change during the batch) can find more letters in
 * those spans on redelivery, and they must not be taken for replays — and `mainCommitted`, the main
 * table's committed ranges as the letters were decided against them. Those are sound to record: letters
 * are only ever sought outside them (they only grow), and they keep the DLQ's ranges as compact as the
 * main table's instead of gaining a range per batch with letters.
 * @throws as commitBatch
 */
export async function commitDeadLetters(
  options: IngestTableOptions,
  route: TableRoute,
  batchId: string,
  letters: DeadLetter[],
  mainCommitted: SourceOffsets,
): Promise<number> {
  if (letters.length === 0) return 0;
  const dlqRoute: TableRoute = {
    table: dlqIdentifier(route.table, route.dlqTable),
    topics: route.topics,
    schema: DLQ_SCHEMA,
    kafkaLineage: false,
    properties: {},
  };
  const dlq = await loadOrCreateTable(options.catalog, dlqRoute);
  const target = formatIdentifier(route.table);
  const now = Date.now();
  const byRecord = new Map(letters.map((l) => [l.record, l]));
  const out = await commitBatch(
    options,
    dlqRoute.table,
    batchId,
    [...byRecord.keys()],
    async (table, fresh) => {
      const rows = fresh.map((r) => deadLetterRow(byRecord.get(r)!, target, now));
      const dataFiles = await writeRows(table, rows, { filePrefix: batchId });
      return { dataFiles, deleteFiles: [], used: fresh, rows: rows.length };
    },
    dlq,
    mergeOffsets(offsetSetOf([...byRecord.keys()]), mainCommitted),
  );
  return out.written?.rows ?? 0;
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
