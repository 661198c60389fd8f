/**
 * One table's share of a Kafka batch, exactly once (see commit-batch.ts). The table's mode decides
 * what its records mean: `append` tables get one row per record (here); `debezium` and `upsert`
 * tables get the rows' current state, with equality deletes (ingest-cdc.ts).
 */
import { formatIdentifier } from '../catalog/catalog.js';
import { resolveMode } from '../routing/table-mode.js';
import { LakeError } from '../errors.js';
import { readCommittedOffsets } from '../table/source-offsets.js';
import { sameMappingBase, splitDuplicates, unseen } from './batch-offsets.js';
import { commitBatch } from './commit-batch.js';
import { commitDeadLetters } from './commit-dead-letters.js';
import type { RawRecord } from '../records/esm-event.js';
import { ingestCdcTable } from './ingest-cdc.js';
import { loadOrCreateTable } from './load-or-create-table.js';
import { mapRecords } from './map-records.js';
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
  const table = await loadOrCreateTable(options.catalog, route);
  const mode = resolveMode(route, table.metadata.properties ?? {});
  if (mode !== 'append') return ingestCdcTable({ options, route, table, batchId, records, allRoutes }, mode);

  // Dead letters are decided against the offsets the main table has not committed yet.
  const committed = readCommittedOffsets(table.metadata);
  const fresh = unseen(records, committed);
  const { unique, duplicates } = splitDuplicates(fresh);
  const mapping = await mapRecords(route, unique, table.metadata, allRoutes);
  const mapped = mapping.batch;
  const letters = [...duplicates, ...mapping.deadLetters];
  if (mapped.reconciliation.changed) {
    options.onWarning?.(
      formatIdentifier(route.table),
      `schema evolves: ${describeChanges(mapped.reconciliation.changes)}`,
      'schema-change',
    );
  }
  const deadLettered = await commitDeadLetters(options, route, batchId, letters, committed);
  const lettered = new Set(letters.map((l) => l.record));

  const outcome = await commitBatch(
    options,
    route.table,
    batchId,
    records,
    async (current, unseenRecords) => {
      // The first round maps once; only a moved base (new schema or offsets) maps again.
      const same = sameMappingBase(current, table, unseenRecords, fresh);
      let batch = mapped;
      if (!same) {
        // A batch mapped from its text is decoded now (its dead letters are filtered out below).
        const byRecord = new Map((await mapping.decoded()).map((d) => [d.record, d]));
        const good = unseenRecords
          .filter((r) => byRecord.has(r) && !lettered.has(r))
          .map((r) => byRecord.get(r)!);
        batch = mapping.remap(good, current.metadata);
        if (batch.deadLetters.length > 0) {
          // Never drop them: fail the batch, the redelivery decides dead letters against the new schema.
          throw new LakeError(`${formatIdentifier(route.table)}: the table schema changed during the batch`, {
            retryable: true,
          });
        }
      }
      return writeEvolvedRows(current, batch, batchId);
    },
    table,
  );
  return { ...baseReport(route, batchId, records, deadLettered, outcome), mode };
}
