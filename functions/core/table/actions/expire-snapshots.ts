/**
 * Expire snapshots (Iceberg's ExpireSnapshots, iceberg-rust's transaction/expire_snapshots.rs): removes
 * the chosen snapshots and refs from the table's metadata, on the condition that `main` has not moved
 * since they were chosen. Nothing chosen is a noop, as iceberg-rust's empty ActionCommit. Which
 * snapshots expire (history.expire.*) and which files only they reached are maintenance's
 * (maintenance/expire-selection.ts, maintenance/expire-snapshots.ts): files go only after this landed.
 */
import type { TableRequirement, TableUpdate } from '../../catalog/requirements-updates.js';
import { currentSnapshot } from '../../spec/metadata.js';
import type { Snapshot, TableMetadata } from '../../spec/types.js';
import type { Noop, Prepared } from './table-action.js';

export interface ExpiredSnapshots {
  expire: readonly Snapshot[];
  /** Names of the refs (tags, branches) that expire with them. */
  expiredRefs: readonly string[];
}

/** The change that removes `expired` from a table at `metadata`, or noop when nothing expires. Never throws. */
export function removeSnapshots(
  metadata: TableMetadata,
  expired: ExpiredSnapshots,
): Prepared<Noop<'nothing-to-expire'>> {
  if (expired.expire.length === 0 && expired.expiredRefs.length === 0) {
    return { kind: 'noop', reason: 'nothing-to-expire' };
  }
  const main = currentSnapshot(metadata);
  const requirements: TableRequirement[] = [
    { type: 'assert-table-uuid', uuid: metadata['table-uuid'] },
    { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': main ? main['snapshot-id'] : null },
  ];
  const updates: TableUpdate[] = expired.expiredRefs.map((name) => ({
    action: 'remove-snapshot-ref' as const,
    'ref-name': name,
  }));
  if (expired.expire.length > 0) {
    updates.push({ action: 'remove-snapshots', 'snapshot-ids': expired.expire.map((s) => s['snapshot-id']) });
  }
  return { kind: 'change', change: { requirements, updates } };
}
