/**
 * One CDC table's share of a Kafka batch (mode `debezium` or `upsert`), exactly once like appends
 * (commit-batch.ts): records → decoded by the route's format (decode-for-route.ts) → changes (dead letters first, to the DLQ table) → collapsed per key in
 * offset order → data files for the final rows + equality deletes for every key the batch replaces
 * or deletes → one snapshot. Reading applies the deletes (merge-on-read), so the table shows the
 * source table's current state.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import { collapseChanges } from '../cdc/collapse-changes.js';
import { planDeleteScope, sameScope } from '../cdc/delete-scope.js';
import { type ExtractedChanges, extractChanges } from '../cdc/extract-changes.js';
import { type CdcMode, resolveCdcSettings } from '../cdc/table-mode.js';
import { writeChanges } from '../cdc/write-changes.js';
import { LakeError } from '../errors.js';
import { currentSchema } from '../spec/metadata.js';
import { readCommittedOffsets } from '../table/source-offsets.js';
import {
  type BatchFiles,
  baseReport,
  commitBatch,
  commitDeadLetters,
  type IngestTableOptions,
  StaleWriteError,
  type TableIngestReport,
  unseen,
} from './commit-batch.js';
import type { DeadLetter } from './dead-letters.js';
import { decodeFor } from './decode-for-route.js';
import type { RawRecord } from './esm-event.js';
import type { TableRoute } from './routes.js';
import { selectForRoute } from './select-for-route.js';

interface CdcFiles extends BatchFiles {
  equalityDeletes: number;
}

/** Dead letters in their records' batch order, as one pass over the records would have met them. */
function inRecordOrder(records: RawRecord[], letters: DeadLetter[]): DeadLetter[] {
  const position = new Map(records.map((r, i) => [r, i]));
  return [...letters].sort((a, b) => (position.get(a.record) ?? 0) - (position.get(b.record) ?? 0));
}

/**
 * Ingests a CDC table's records of a batch (the table is loaded; `mode` is its resolved mode).
 * @throws ValidationError when the table has no usable key (see resolveCdcSettings)
 * @throws LakeError subclasses from decoding (a registry outage), writing and committing; retryable
 *   ones mean "redeliver the batch"
 */
export async function ingestCdcTable(
  options: IngestTableOptions,
  route: TableRoute,
  table: LoadedTable,
  mode: CdcMode,
  batchId: string,
  records: RawRecord[],
  allRoutes: readonly TableRoute[] = [route],
): Promise<TableIngestReport> {
  const name = formatIdentifier(route.table);
  const schema = currentSchema(table.metadata);
  const settings = resolveCdcSettings(mode, schema, route, table.metadata.properties ?? {});
  // Dead letters are decided against the offsets the main table has not committed yet.
  const fresh = unseen(records, readCommittedOffsets(table.metadata));
  // A registry outage throws here, before anything is dead-lettered: the batch is redelivered.
  const { decoded: all, deadLetters: decodeLetters } = await decodeFor(route, fresh);
  // Changes the route's `when` does not take belong to other tables (one topic, several tables).
  const { mine: decoded, unrouted } = selectForRoute(route, allRoutes, all);
  const extracted = extractChanges(decoded, schema, settings);
  const deadLetters = inRecordOrder(fresh, [...decodeLetters, ...unrouted, ...extracted.deadLetters]);
  const deadLettered = await commitDeadLetters(options, route, batchId, deadLetters);
  const letters = new Set(deadLetters.map((l) => l.record));
  const byRecord = new Map(decoded.map((d) => [d.record, d]));
  let ignored: ExtractedChanges['ignored'] = extracted.ignored;
  let warnings: string[] = [];

  const outcome = await commitBatch<CdcFiles>(
    options,
    route.table,
    batchId,
    records,
    async (current, unseenRecords) => {
      const good = unseenRecords.filter((r) => byRecord.has(r) && !letters.has(r));
      let changes = extracted.changes;
      let columns = settings.key;
      // The first round extracts once; only a moved base (new schema or offsets) extracts again.
      const same =
        current.metadata['current-schema-id'] === schema['schema-id'] &&
        unseenRecords.length === fresh.length;
      if (!same) {
        const now = currentSchema(current.metadata);
        const nowSettings = resolveCdcSettings(mode, now, route, current.metadata.properties ?? {});
        const again = extractChanges(
          good.map((r) => byRecord.get(r)!),
          now,
          nowSettings,
        );
        if (again.deadLetters.length > 0) {
          // Never drop them: fail the batch, the redelivery decides dead letters against the new schema.
          throw new LakeError(`${name}: the table schema changed during the batch`, { retryable: true });
        }
        changes = again.changes;
        columns = nowSettings.key;
        ignored = again.ignored;
      }
      const collapsed = collapseChanges(changes, columns);
      warnings = collapsed.warnings;
      const keyIds = columns.map((c) => c.id);
      // Only a batch with deletes needs a scope (and may add the unpartitioned spec).
      const scope = collapsed.finals.some((f) => f.deleteExisting)
        ? await planDeleteScope(current, keyIds)
        : undefined;
      const written = await writeChanges(current, collapsed.finals, columns, scope, { filePrefix: batchId });
      return {
        ...written,
        used: good,
        checkBase: async (base) => {
          if (!scope) return {};
          const now = await planDeleteScope(base, keyIds);
          if (!sameScope(scope, now)) {
            throw new StaleWriteError(`${name}: the partition specs changed while the batch was written`);
          }
          return { preUpdates: now.preUpdates, preRequirements: now.preRequirements };
        },
      };
    },
    table,
  );
  for (const warning of warnings) options.onWarning?.(name, warning);
  const committed = outcome.result?.status === 'committed';
  return {
    ...baseReport(route, batchId, records, deadLettered, outcome),
    mode,
    deleteFiles: committed ? (outcome.written?.deleteFiles.length ?? 0) : 0,
    equalityDeletes: committed ? (outcome.written?.equalityDeletes ?? 0) : 0,
    ignored: { ...ignored },
    warnings,
  };
}
