/**
 * One table's share of a Kafka batch, exactly once (see commit-batch.ts). The table's mode decides
 * what its records mean: `append` tables get one row per record (here); `debezium` and `upsert`
 * tables get the rows' current state, with equality deletes (ingest-cdc.ts).
 */
import { formatIdentifier } from '../catalog/catalog.js';
import { resolveMode } from '../cdc/table-mode.js';
import { LakeError } from '../errors.js';
import { currentSchema } from '../spec/metadata.js';
import { readCommittedOffsets } from '../table/source-offsets.js';
import { writeRows } from '../table/write-rows.js';
import {
  baseReport,
  commitBatch,
  commitDeadLetters,
  type IngestTableOptions,
  type TableIngestReport,
  unseen,
} from './commit-batch.js';
import type { RawRecord } from './esm-event.js';
import { ingestCdcTable } from './ingest-cdc.js';
import { loadOrCreateTable } from './load-or-create-table.js';
import { mapRecords } from './map-records.js';
import type { TableRoute } from './routes.js';

export type { IngestTableOptions, TableIngestReport } from './commit-batch.js';
export { offsetsOf } from './commit-batch.js';
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
): Promise<TableIngestReport> {
  const table = await loadOrCreateTable(options.catalog, route);
  const mode = resolveMode(route, table.metadata.properties ?? {});
  if (mode !== 'append') return ingestCdcTable(options, route, table, mode, batchId, records);

  const schema = currentSchema(table.metadata);
  // Dead letters are decided against the offsets the main table has not committed yet.
  const fresh = unseen(records, readCommittedOffsets(table.metadata));
  const mapped = mapRecords(fresh, schema);
  const deadLettered = await commitDeadLetters(options, route, batchId, mapped.deadLetters);
  const letters = new Set(mapped.deadLetters.map((l) => l.record));

  const outcome = await commitBatch(
    options,
    route.table,
    batchId,
    records,
    async (current, unseenRecords) => {
      const good = unseenRecords.filter((r) => !letters.has(r));
      // The first round maps once; only a moved base (new schema or offsets) maps again.
      const same =
        current.metadata['current-schema-id'] === schema['schema-id'] &&
        unseenRecords.length === fresh.length;
      let rows = mapped.rows;
      if (!same) {
        const again = mapRecords(good, currentSchema(current.metadata));
        if (again.deadLetters.length > 0) {
          // Never drop them: fail the batch, the redelivery decides dead letters against the new schema.
          throw new LakeError(`${formatIdentifier(route.table)}: the table schema changed during the batch`, {
            retryable: true,
          });
        }
        rows = again.rows;
      }
      const dataFiles = rows.length ? await writeRows(current, rows, { filePrefix: batchId }) : [];
      return { dataFiles, deleteFiles: [], used: good, rows: rows.length };
    },
  );
  return { ...baseReport(route, batchId, records, deadLettered, outcome), mode };
}
