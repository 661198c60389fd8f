/**
 * One table's share of a Kafka batch, exactly once:
 *   1. skip records at or below the table's committed offsets (a replay takes effect once);
 *   2. map the rest to rows; dead letters are committed first, to the DLQ table (with its own offsets);
 *   3. write DataFiles, then commit one snapshot carrying `floe.batch-id` and the merged offsets.
 * If another writer moved the offsets of these partitions while we wrote, our files are dropped and
 * the batch is re-filtered against the new offsets — re-applying them could duplicate rows.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import { LakeError, NoSuchTableError, ValidationError } from '../errors.js';
import type { CommitLock } from '../lock/commit-lock.js';
import { currentSchema } from '../spec/metadata.js';
import { parsePartitionExpression } from '../spec/partition-spec.js';
import type { DataFile, Row, SnapshotId, TableIdentifier } from '../spec/types.js';
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
import { writeRows } from '../table/write-rows.js';
import { DLQ_SCHEMA, type DeadLetter, deadLetterRow, dlqIdentifier } from './dead-letters.js';
import type { RawRecord } from './esm-event.js';
import { withKafkaLineage } from './kafka-lineage.js';
import { mapRecords } from './map-records.js';
import type { TableRoute } from './routes.js';

export interface IngestTableOptions {
  catalog: Catalog;
  lock?: CommitLock;
  deadlineMs?: number;
  onCommitEvent?: (table: string, event: CommitEvent) => void;
}

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
}

/** Thrown inside prepare when the base's offsets overlap the rows already written. */
class OffsetsMovedError extends LakeError {
  constructor(message: string) {
    super(message, { retryable: true });
  }
}

/** Highest offset per topic-partition of some records. */
export function offsetsOf(records: RawRecord[]): SourceOffsets {
  const out: SourceOffsets = new Map();
  for (const r of records) {
    if (r.offset < 0n) continue;
    const parts = out.get(r.topic) ?? new Map<number, bigint>();
    if ((parts.get(r.partition) ?? -1n) < r.offset) parts.set(r.partition, r.offset);
    out.set(r.topic, parts);
  }
  return out;
}

function unseen(records: RawRecord[], committed: SourceOffsets): RawRecord[] {
  return records.filter((r) => r.offset > (committed.get(r.topic)?.get(r.partition) ?? -1n));
}

function overlaps(records: RawRecord[], committed: SourceOffsets): boolean {
  return records.some((r) => r.offset <= (committed.get(r.topic)?.get(r.partition) ?? -1n));
}

/** Loads the table, creating it from the route's schema and partition expression when missing. */
export async function loadOrCreateTable(catalog: Catalog, route: TableRoute): Promise<LoadedTable> {
  try {
    return await catalog.loadTable(route.table);
  } catch (error) {
    if (!(error instanceof NoSuchTableError)) throw error;
    if (!route.schema) {
      throw new ValidationError(
        `table ${formatIdentifier(route.table)} does not exist and no schema was given to create it`,
      );
    }
    const schema = route.kafkaLineage ? withKafkaLineage(route.schema) : route.schema;
    const partitionSpec = route.partitionBy ? parsePartitionExpression(route.partitionBy, schema) : undefined;
    try {
      return await catalog.createTable(route.table, { schema, partitionSpec, properties: route.properties });
    } catch (createError) {
      // Another writer created it first: theirs is as good as ours.
      if (await catalog.tableExists(route.table)) return catalog.loadTable(route.table);
      throw createError;
    }
  }
}

interface CommitFilesInput {
  catalog: Catalog;
  id: TableIdentifier;
  batchId: string;
  batchOffsets: SourceOffsets;
  writtenRecords: RawRecord[];
  files: DataFile[];
  options: IngestTableOptions;
}

async function commitFiles(input: CommitFilesInput): Promise<CommitResult> {
  const { catalog, id, batchId, batchOffsets, writtenRecords, files, options } = input;
  return commitWithRetry(
    catalog,
    id,
    {
      batchId,
      prepare: async (base) => {
        const committed = readCommittedOffsets(base.metadata);
        if (overlaps(writtenRecords, committed)) {
          throw new OffsetsMovedError(
            `${formatIdentifier(id)}: another writer committed some of these offsets meanwhile`,
          );
        }
        return prepareSnapshot(base, {
          operation: 'append',
          addedDataFiles: files,
          addedDeleteFiles: [],
          summary: {
            [BATCH_ID_KEY]: batchId,
            [OFFSETS_KEY]: encodeOffsets(mergeOffsets(committed, batchOffsets)),
          },
        });
      },
    },
    {
      lock: options.lock,
      deadlineMs: options.deadlineMs,
      onEvent: (e) => options.onCommitEvent?.(formatIdentifier(id), e),
    },
  );
}

async function deleteFiles(table: LoadedTable, files: DataFile[]): Promise<void> {
  await Promise.all(files.map((f) => table.io.delete(f.file_path).catch(() => {})));
}

/** Writes rows for records not yet committed and commits them; retries from scratch if offsets moved. */
async function appendRows(
  options: IngestTableOptions,
  id: TableIdentifier,
  batchId: string,
  records: RawRecord[],
  toRows: (table: LoadedTable, fresh: RawRecord[]) => { rows: Row[]; used: RawRecord[] },
): Promise<{ result?: CommitResult; rows: number; files: DataFile[]; skipped: number }> {
  const batchOffsets = offsetsOf(records);
  for (let round = 0; ; round++) {
    const table = await options.catalog.loadTable(id);
    const fresh = unseen(records, readCommittedOffsets(table.metadata));
    if (fresh.length === 0) return { rows: 0, files: [], skipped: records.length };
    const { rows, used } = toRows(table, fresh);
    const files = rows.length ? await writeRows(table, rows, { filePrefix: batchId }) : [];
    try {
      const result = await commitFiles({
        catalog: options.catalog,
        id,
        batchId,
        batchOffsets,
        writtenRecords: used,
        files,
        options,
      });
      if (result.status === 'already-committed') await deleteFiles(table, files);
      return { result, rows: rows.length, files, skipped: records.length - fresh.length };
    } catch (error) {
      if (error instanceof OffsetsMovedError && round < 3) {
        await deleteFiles(table, files);
        continue;
      }
      if (!(error instanceof LakeError && error.name === 'CommitStateUnknownError'))
        await deleteFiles(table, files);
      throw error;
    }
  }
}

/** Commits dead letters to the route's DLQ table (created on first use), exactly once per record. */
async function commitDeadLetters(
  options: IngestTableOptions,
  route: TableRoute,
  batchId: string,
  letters: DeadLetter[],
): Promise<number> {
  if (letters.length === 0) return 0;
  const dlqRoute: TableRoute = {
    table: dlqIdentifier(route.table, route.dlqTable),
    topics: route.topics,
    schema: DLQ_SCHEMA,
    kafkaLineage: false,
    properties: {},
  };
  await loadOrCreateTable(options.catalog, dlqRoute);
  const target = formatIdentifier(route.table);
  const now = Date.now();
  const byRecord = new Map(letters.map((l) => [l.record, l]));
  const out = await appendRows(options, dlqRoute.table, batchId, [...byRecord.keys()], (_table, fresh) => ({
    rows: fresh.map((r) => deadLetterRow(byRecord.get(r)!, target, now)),
    used: fresh,
  }));
  return out.rows;
}

/**
 * Ingests one table's records of a batch. `batchId` must be the same on every delivery of the batch.
 * @throws LakeError subclasses; retryable ones mean "fail the batch, the ESM will redeliver it"
 */
export async function ingestTable(
  options: IngestTableOptions,
  route: TableRoute,
  batchId: string,
  records: RawRecord[],
): Promise<TableIngestReport> {
  const table = await loadOrCreateTable(options.catalog, route);
  const schema = currentSchema(table.metadata);
  // Dead letters are decided against the offsets the main table has not committed yet.
  const fresh = unseen(records, readCommittedOffsets(table.metadata));
  const mapped = mapRecords(fresh, schema);
  const deadLettered = await commitDeadLetters(options, route, batchId, mapped.deadLetters);
  const letters = new Set(mapped.deadLetters.map((l) => l.record));

  const out = await appendRows(options, route.table, batchId, records, (current, unseenRecords) => {
    const good = unseenRecords.filter((r) => !letters.has(r));
    // The first round maps once; only a moved base (new schema or offsets) maps again.
    const same =
      current.metadata['current-schema-id'] === schema['schema-id'] && unseenRecords.length === fresh.length;
    if (same) return { rows: mapped.rows, used: good };
    const again = mapRecords(good, currentSchema(current.metadata));
    if (again.deadLetters.length > 0) {
      // Never drop them: fail the batch, the redelivery decides dead letters against the new schema.
      throw new LakeError(`${formatIdentifier(route.table)}: the table schema changed during the batch`, {
        retryable: true,
      });
    }
    return { rows: again.rows, used: good };
  });
  const result = out.result;
  return {
    table: formatIdentifier(route.table),
    batchId,
    recordsIn: records.length,
    skippedAsReplayed: out.skipped,
    rowsWritten: result?.status === 'committed' ? out.rows : 0,
    deadLettered,
    dataFiles: result?.status === 'committed' ? out.files.length : 0,
    bytesWritten:
      result?.status === 'committed' ? out.files.reduce((s, f) => s + Number(f.file_size_in_bytes), 0) : 0,
    snapshotId: result?.snapshotId,
    status: result ? result.status : 'nothing-to-commit',
    attempts: result?.attempts ?? 0,
    conflicts: result?.conflicts ?? 0,
    unknownOutcomes: result?.unknownOutcomes ?? 0,
  };
}
