/**
 * The files of a mapped batch, for commit-batch.ts: rows written with the schema they were reconciled
 * to (their field ids must be the ids that commit), and a `checkBase` that hands the schema change to
 * the snapshot (same commit as the data) — or, when another writer changed the schema since, answers
 * `stale` so commitBatch drops the files and maps the batch again on the new base, taking
 * fresh ids above the other writer's.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import { writeRows } from '../table/write-rows.js';
import type { BatchFiles } from './commit-batch.js';
import type { MappedBatch } from '../mapping/map-batch.js';
import { reconciliationStillApplies } from '../mapping/evolution/reconcile-schema.js';

/**
 * Writes a mapped batch's rows as DataFiles of `table` (nothing is committed).
 * @throws whatever writing throws (TransientIOError, ...)
 */
export async function writeEvolvedRows(
  table: LoadedTable,
  batch: MappedBatch,
  batchId: string,
): Promise<BatchFiles> {
  const rec = batch.reconciliation;
  const rows = batch.gathered ?? batch.rows;
  const count = rows.length;
  const dataFiles = count ? await writeRows(table, rows, { filePrefix: batchId, schema: rec.schema }) : [];
  return {
    dataFiles,
    deleteFiles: [],
    used: batch.used,
    rows: count,
    checkBase: async (base) => {
      if (!reconciliationStillApplies(base.metadata, rec)) {
        return {
          kind: 'stale',
          reason: `${formatIdentifier(base.identifier)}: the table schema changed (now ${base.metadata['current-schema-id']}) while this batch was written for schema ${rec.baseSchemaId}`,
        };
      }
      return rec.changed
        ? { kind: 'fits', preUpdates: rec.updates, preRequirements: rec.requirements }
        : { kind: 'fits' };
    },
  };
}
