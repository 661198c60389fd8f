/**
 * One table's share of a Kafka batch, exactly once (see commit-batch.ts). The table's mode decides
 * what its records mean: `append` tables get one row per record (here); `debezium` and `upsert`
 * tables get the rows' current state, with equality deletes (ingest-cdc.ts).
 */
import { formatIdentifier, type LoadedTable } from '../catalog/catalog.js';
import { resolveMode } from '../routing/table-mode.js';
import { LakeError } from '../errors.js';
import type { MappedBatch } from '../mapping/map-batch.js';
import type { CommittedState } from '../table/source-offsets.js';
import { sameMappingBase, splitDuplicates } from './batch-offsets.js';
import { commitBatch } from './commit-batch.js';
import { commitDeadLetters } from './commit-dead-letters.js';
import type { RawRecord } from '../records/esm-event.js';
import { ingestCdcTable } from './ingest-cdc.js';
import { loadOrCreateTable } from './load-or-create-table.js';
import { type MappedRecords, mapRecords } from './map-records.js';
import { describeChanges } from '../mapping/evolution/reconcile-schema.js';
import { writeEvolvedRows } from './write-evolved-rows.js';
import type { TableRoute } from '../routing/routes.js';
import type { IngestTableOptions } from './table-batch.js';
import { baseReport, type TableIngestReport } from './table-report.js';

export type { IngestTableOptions, IngestWarningKind } from './table-batch.js';
export type { TableIngestReport } from './table-report.js';

export { offsetsOf } from './batch-offsets.js';
export { loadOrCreateTable } from './load-or-create-table.js';

/**
 * Ingests one table's records of a batch. `batchId` must be the same on every delivery of the batch.
 * @throws ValidationError for a route that does not fit the table (mode, key, schema)
 * @throws LakeError subclasses; retryable ones mean "fail the batch, the ESM will redeliver it"
 */
export async function ingestTable(
  options: IngestTableOptions,
  route: TableRoute,
  batchId: string,
  records: RawRecord[],
  allRoutes: TableRoute[] = [route],
): Promise<TableIngestReport> {
  const table = await loadOrCreateTable(options.catalog, route, { lock: options.lock });
  const mode = resolveMode(route, table.metadata.properties ?? {});
  if (mode !== 'append') return ingestCdcTable({ options, route, table, batchId, records, allRoutes }, mode);

  let plan: AppendPlan | undefined;
  const outcome = await commitBatch(
    options,
    route.table,
    batchId,
    records,
    async (current, fresh, committed) => {
      // The first round maps once; only a moved base (new schema or offsets) maps again.
      plan ??= await planAppend(options, route, batchId, { current, fresh, committed }, allRoutes);
      return writeEvolvedRows(current, await batchFor(plan, route, current, fresh), batchId);
    },
    table,
  );
  return { ...baseReport(route, batchId, records, plan?.deadLettered ?? 0, outcome), mode };
}

/** An append batch mapped on the first base, its dead letters committed. */
interface AppendPlan {
  table: LoadedTable;
  fresh: RawRecord[];
  mapping: MappedRecords;
  lettered: Set<RawRecord>;
  deadLettered: number;
}

/**
 * Maps the fresh records of the first round and commits their dead letters (decided against the offsets
 * the main table had not committed: `round.committed`).
 */
async function planAppend(
  options: IngestTableOptions,
  route: TableRoute,
  batchId: string,
  round: { current: LoadedTable; fresh: RawRecord[]; committed: CommittedState },
  allRoutes: TableRoute[],
): Promise<AppendPlan> {
  const { unique, duplicates } = splitDuplicates(round.fresh);
  const mapping = await mapRecords(route, unique, round.current.metadata, allRoutes);
  const mapped = mapping.batch;
  const letters = [...duplicates, ...mapping.deadLetters];
  if (mapped.reconciliation.changed) {
    options.onWarning?.(
      formatIdentifier(route.table),
      `schema evolves: ${describeChanges(mapped.reconciliation.changes)}`,
      'schema-change',
    );
  }
  const deadLettered = await commitDeadLetters(options, route, batchId, letters, round.committed.offsets);
  const lettered = new Set(letters.map((l) => l.record));
  return { table: round.current, fresh: round.fresh, mapping, lettered, deadLettered };
}

/** The mapped batch for a round's base: the first mapping while it still fits, else mapped again. */
async function batchFor(
  plan: AppendPlan,
  route: TableRoute,
  current: LoadedTable,
  fresh: RawRecord[],
): Promise<MappedBatch> {
  const { mapping } = plan;
  if (sameMappingBase(current, plan.table, fresh, plan.fresh)) return mapping.batch;
  // A batch mapped from its text is decoded now (its dead letters are filtered out below).
  const byRecord = new Map((await mapping.decoded()).map((d) => [d.record, d]));
  const good = fresh.filter((r) => byRecord.has(r) && !plan.lettered.has(r)).map((r) => byRecord.get(r)!);
  const batch = mapping.remap(good, current.metadata);
  if (batch.deadLetters.length > 0) {
    // Never drop them: fail the batch, the redelivery decides dead letters against the new schema.
    throw new LakeError(`${formatIdentifier(route.table)}: the table schema changed during the batch`, {
      retryable: true,
    });
  }
  return batch;
}
