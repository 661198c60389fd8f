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
import { decodeFor } from '../routing/decode-for-route.js';
import { ingestCdcTable } from './ingest-cdc.js';
import { loadOrCreateTable } from './load-or-create-table.js';
import type { DeadLetter } from '../records/dead-letters.js';
import { describeChanges } from '../mapping/evolution/reconcile-schema.js';
import { evolutionPolicyOf } from '../mapping/evolution/evolution-policy.js';
import { writeEvolvedRows } from './write-evolved-rows.js';
import type { DecodedRecord } from '../mapping/decoded-record.js';
import { gatherJsonBatch } from '../mapping/fast/gather-json.js';
import { type MappedBatch, mapBatch } from '../mapping/map-batch.js';
import { DEFAULT_MAPPING } from '../mapping/mapping-config.js';
import type { TableRoute } from '../routing/routes.js';
import { selectForRoute } from '../routing/select-for-route.js';
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

  const policy = evolutionPolicyOf(table.metadata.properties, route.schemaEvolution);
  const mapping = route.mapping ?? DEFAULT_MAPPING;
  // Dead letters are decided against the offsets the main table has not committed yet.
  const committed = readCommittedOffsets(table.metadata);
  const fresh = unseen(records, committed);
  const { unique, duplicates } = splitDuplicates(fresh);
  const mapOptions = { mapping, metadata: table.metadata, policy, columnar: true };
  // JSON whose text fits the schema as it is skips decoding into objects (only the rest is decoded).
  const scanned = !route.format && !route.when ? gatherJsonBatch(unique, mapOptions) : undefined;
  let mapped: MappedBatch;
  let letters: DeadLetter[];
  let mine: DecodedRecord[] | undefined;
  if (scanned) {
    mapped = scanned;
    letters = [...duplicates, ...scanned.deadLetters];
  } else {
    const { decoded, deadLetters: decodeLetters } = await decodeFor(route, unique);
    const selected = selectForRoute(route, allRoutes, decoded);
    mine = selected.mine;
    mapped = mapBatch(mine, mapOptions);
    letters = [...duplicates, ...decodeLetters, ...selected.unrouted, ...mapped.deadLetters];
  }
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
        // A scanned batch: decoded now (its dead letters are filtered out below).
        mine ??= (await decodeFor(route, unique)).decoded;
        const byRecord = new Map(mine.map((d) => [d.record, d]));
        const good = unseenRecords
          .filter((r) => byRecord.has(r) && !lettered.has(r))
          .map((r) => byRecord.get(r)!);
        batch = mapBatch(good, { mapping, metadata: current.metadata, policy });
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
