/**
 * Dead-letter redrive: after a fix (a schema change, a mapping change), re-ingest a table's dead
 * letters exactly once. The main table's snapshots carry the set of redriven dead letters
 * (`floe.redriven-offsets`, carried forward like the committed offsets), so a dead letter takes effect
 * once however often redrive runs, whatever it selects, and across a crash between the commit and the
 * return. Dead letters that still fail stay where they are, with the new reason reported.
 */
import type { Catalog } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import { NoSuchTableError, ValidationError } from '../errors.js';
import { resolveMode } from '../routing/table-mode.js';
import type { CommitLock } from '../lock/commit-lock.js';
import type { Expression } from '../scan/expression.js';
import { planScan } from '../scan/plan-scan.js';
import { readScanRows } from '../scan/read-scan.js';
import type { DataFile, Row, TableIdentifier } from '../spec/types.js';
import { appendFiles } from '../table/actions/append-files.js';
import type { Prepared, Stale } from '../table/actions/table-action.js';
import { commitFilesOnce } from '../table/commit-files-once.js';
import {
  containsOffset,
  decodeOffsetRanges,
  encodeOffsetRanges,
  type OffsetRanges,
  offsetSetOf,
  unionOffsets,
} from '../table/offset-ranges.js';
import { BATCH_ID_KEY, computeBatchId, findInAncestry, REDRIVEN_KEY } from '../table/source-offsets.js';
import { writeRows } from '../table/write-rows.js';
import { dlqIdentifier } from '../records/dead-letters.js';
import type { RawRecord } from '../records/esm-event.js';
import { decodeFor } from '../routing/decode-for-route.js';
import { evolutionPolicyOf } from '../mapping/evolution/evolution-policy.js';
import {
  reconciliationStillApplies,
  type SchemaReconciliation,
} from '../mapping/evolution/reconcile-schema.js';
import { mapBatch } from '../mapping/map-batch.js';
import { DEFAULT_MAPPING } from '../mapping/mapping-config.js';
import type { TableRoute } from '../routing/routes.js';

/** topic → partition → sorted, disjoint inclusive offset ranges (offset-ranges.ts). */
type OffsetSet = OffsetRanges;

/** Reads `floe.redriven-offsets` (the committed offsets' format, or the pair-array format `[["3","5"]]`). */
export function decodeOffsetSet(text: string | undefined): OffsetSet {
  return text ? decodeOffsetRanges(text, REDRIVEN_KEY) : new Map();
}

export function encodeOffsetSet(set: OffsetSet): string {
  return encodeOffsetRanges(set);
}

export function hasOffset(set: OffsetSet, topic: string, partition: number, offset: bigint): boolean {
  return containsOffset(set, topic, partition, offset);
}

/**
 * Adds exactly these offsets (redriven dead letters are single records, not spans of a batch),
 * merging adjacent and overlapping ranges.
 */
export function addOffsets(
  set: OffsetSet,
  records: { topic: string; partition: number; offset: bigint }[],
): OffsetSet {
  return unionOffsets(set, offsetSetOf(records));
}

export interface RedriveOptions {
  catalog: Catalog;
  lock?: CommitLock;
  table: TableIdentifier;
  /** The dead-letter table. @default `<table>__dlq` */
  dlqTable?: TableIdentifier;
  /** Which dead letters to redrive (over the DLQ table's columns: topic, partition, offset, stage, error, ...). */
  filter?: Expression;
  /**
   * The table's route as ingestion uses it: its format, mapping and schema-evolution policy apply to
   * the redriven records exactly as they would to new ones (a fixed mapping is what most redrives
   * are for). @default JSON values, the default mapping, the table's evolution policy
   */
  route?: TableRoute;
}

export interface RedriveReport {
  selected: number;
  alreadyRedriven: number;
  redriven: number;
  stillFailing: { topic: string; partition: number; offset: bigint; error: string }[];
  snapshotId?: bigint;
}

function toRawRecord(row: Row): RawRecord {
  return {
    topic: row.topic as string,
    partition: row.partition as number,
    offset: row.offset as bigint,
    timestamp: Number((row.timestamp as bigint | null) ?? 0n) / 1000,
    timestampType: 'CREATE_TIME',
    key: (row.key as Uint8Array | null) ?? null,
    value: (row.value as Uint8Array | null) ?? null,
    headers: ((row.headers as Row[] | null) ?? []).map((h) => ({
      key: h.key as string,
      value: (h.value as Uint8Array | null) ?? null,
    })),
  };
}

/** A table's route when none is given: JSON values, the default mapping, the table's own policy. */
export function defaultRoute(table: TableIdentifier): TableRoute {
  return { table, topics: [], kafkaLineage: true, properties: {} };
}

/**
 * Re-ingests a table's dead letters exactly once.
 * @throws NoSuchTableError when the table or its DLQ table does not exist
 * @throws LakeError from the commit (retryable ones can simply be run again)
 */
export async function redriveDeadLetters(options: RedriveOptions): Promise<RedriveReport> {
  const { catalog, table: id } = options;
  const dlqId = options.dlqTable ?? dlqIdentifier(id);
  const dlq = await catalog.loadTable(dlqId).catch((error: unknown) => {
    if (error instanceof NoSuchTableError) {
      throw new NoSuchTableError(
        `${formatIdentifier(id)} has no dead-letter table ${formatIdentifier(dlqId)}`,
      );
    }
    throw error;
  });
  const target = formatIdentifier(id);
  const letters = (
    await readScanRows(dlq, await planScan(dlq, { filter: options.filter }), { filter: options.filter })
  )
    // A `duplicate` dead letter repeats an offset whose first occurrence the batch took: redriving it
    // would put the offset in the table twice.
    .filter((r) => r.target_table === target && r.stage !== 'duplicate')
    .map(toRawRecord);

  const route = options.route ?? defaultRoute(id);
  let report: RedriveReport | undefined;
  const outcome = await commitFilesOnce<RedriveFiles>(
    catalog,
    id,
    {
      batchId: (written) => written.batchId,
      write: async (table) => {
        const mode = resolveMode(route, table.metadata.properties ?? {});
        if (mode !== 'append') {
          throw new ValidationError(
            `${target} is a ${mode} table: redrive re-ingests dead letters of append tables only`,
          );
        }
        const done = decodeOffsetSet(findInAncestry(table.metadata, REDRIVEN_KEY));
        const pending = letters.filter((r) => !hasOffset(done, r.topic, r.partition, r.offset));
        // The same decode → mapping → schema evolution as ingestion (ingest-table.ts).
        const { decoded, deadLetters: undecodable } = await decodeFor(route, pending);
        const mapped = mapBatch(decoded, {
          mapping: route.mapping ?? DEFAULT_MAPPING,
          metadata: table.metadata,
          policy: evolutionPolicyOf(table.metadata.properties, route.schemaEvolution),
        });
        const failing = [...undecodable, ...mapped.deadLetters];
        const failed = new Set(failing.map((d) => d.record));
        const good = pending.filter((r) => !failed.has(r));
        report = {
          selected: letters.length,
          alreadyRedriven: letters.length - pending.length,
          redriven: 0,
          stillFailing: failing.map((d) => ({ ...d.record, error: d.error })),
        };
        if (good.length === 0) return undefined;
        const batchId = redriveBatchId(good);
        const rec = mapped.reconciliation;
        const files = await writeRows(table, mapped.rows, { filePrefix: batchId, schema: rec.schema });
        return { files, rec, good, batchId };
      },
      paths: (written) => written.files.map((f) => f.file_path),
      prepare: async (base, written): Promise<Prepared<Stale>> => {
        const baseDone = decodeOffsetSet(findInAncestry(base.metadata, REDRIVEN_KEY));
        if (written.good.some((r) => hasOffset(baseDone, r.topic, r.partition, r.offset))) {
          return { kind: 'stale', reason: 'another redrive committed some of these dead letters meanwhile' };
        }
        if (!reconciliationStillApplies(base.metadata, written.rec)) {
          return { kind: 'stale', reason: 'the table schema changed while the dead letters were mapped' };
        }
        return appendFiles(base, {
          preUpdates: written.rec.updates,
          preRequirements: written.rec.requirements,
          dataFiles: written.files,
          summary: {
            [BATCH_ID_KEY]: written.batchId,
            [REDRIVEN_KEY]: encodeOffsetSet(addOffsets(baseDone, written.good)),
          },
        });
      },
    },
    { lock: options.lock },
  );
  if (outcome.kind === 'nothing-to-write') return report!;
  return {
    ...report!,
    redriven: outcome.result.status === 'committed' ? outcome.files.good.length : 0,
    snapshotId: outcome.result.snapshotId,
  };
}

/** What one redrive round wrote: the files, the schema they were written for, the letters they hold. */
interface RedriveFiles {
  files: DataFile[];
  rec: SchemaReconciliation;
  good: RawRecord[];
  batchId: string;
}

/** The batch id of a redrive: its dead letters' own offsets, under `redrive:<topic>`. */
function redriveBatchId(good: readonly RawRecord[]): string {
  return computeBatchId(
    good.map((r) => ({
      topic: `redrive:${r.topic}`,
      partition: r.partition,
      first: r.offset,
      last: r.offset,
    })),
  );
}
