/**
 * What a maintenance snapshot carries from ingestion. floe's committed offsets (and redriven dead letters)
 * are carried by every snapshot prepareSnapshot builds (source-offsets.ts, CARRIED_SUMMARY_KEYS); the
 * latest batch id is carried here too, so expiring the ingestion snapshots behind a rewrite leaves the
 * newest batch recognisable (DESIGN.md, "Commit protocol").
 */
import { BATCH_ID_KEY, findInAncestry } from './source-offsets.js';
import type { TableMetadata } from '../spec/types.js';

/** Marks the snapshot a compaction run committed, so a retried commit step recognises its own work. */
export const MAINTENANCE_RUN_KEY = 'floe.maintenance-run';

/**
 * `floe.batch-id` as of the table's current snapshot (walking back past snapshots that lack it), for the
 * summary of a snapshot maintenance adds on top. Empty when no ancestor has one. Never throws.
 */
export function carriedFloeSummary(metadata: TableMetadata): Record<string, string> {
  const batch = findInAncestry(metadata, BATCH_ID_KEY);
  return batch === undefined ? {} : { [BATCH_ID_KEY]: batch };
}
