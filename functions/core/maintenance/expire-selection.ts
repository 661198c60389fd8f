/**
 * Which snapshots (and refs) expire, as Iceberg Java's RemoveSnapshots decides:
 *
 * - a ref other than main whose snapshot is older than its `max-ref-age-ms` (or the table's
 *   `history.expire.max-ref-age-ms`) is removed, and retains nothing;
 * - a branch retains its newest ancestors while fewer than `min-snapshots-to-keep` are kept or they are
 *   younger than `max-snapshot-age-ms` (the ref's own values first, then the run's settings), stopping at
 *   the first that is neither;
 * - a tag retains its snapshot;
 * - a snapshot in no branch's history and not tagged is retained while younger than the max age.
 *
 * One floe rule on top: the main branch keeps its history back to the newest snapshot carrying
 * `floe.committed-offsets`, since readers find the offsets by walking back the ancestry and an expired
 * link would end the walk before them (the snapshot maintenance commits carry the offsets, so normally
 * that is the current snapshot itself).
 */
import { ancestors } from '../spec/metadata.js';
import type { Snapshot, SnapshotId, TableMetadata } from '../spec/types.js';
import { OFFSETS_KEY } from '../table/source-offsets.js';
import type { MaintenanceSettings } from './maintenance-settings.js';

export interface ExpireSelection {
  /** Snapshots to remove, oldest first. */
  expire: Snapshot[];
  /** Refs to remove (never main). */
  expiredRefs: string[];
}

type Retention = Pick<MaintenanceSettings, 'maxSnapshotAgeMs' | 'minSnapshotsToKeep' | 'maxRefAgeMs'>;

/** Chooses what to expire at `nowMs`. Never throws for valid metadata. */
export function selectExpiredSnapshots(
  md: TableMetadata,
  settings: Retention,
  nowMs: number,
): ExpireSelection {
  const byId = new Map(md.snapshots.map((s) => [s['snapshot-id'], s]));
  const refs = { ...md.refs };
  const current = md['current-snapshot-id'];
  if (!refs.main && current !== undefined && current !== null && current !== -1n) {
    refs.main = { 'snapshot-id': current, type: 'branch' };
  }
  const retained = new Set<SnapshotId>();
  const inBranches = new Set<SnapshotId>();
  const expiredRefs: string[] = [];
  const cutoff = nowMs - settings.maxSnapshotAgeMs;

  for (const [name, ref] of Object.entries(refs)) {
    const snapshot = byId.get(ref['snapshot-id']);
    if (!snapshot) continue;
    const maxRefAge = ref['max-ref-age-ms'] ?? settings.maxRefAgeMs;
    if (name !== 'main' && nowMs - snapshot['timestamp-ms'] > maxRefAge) {
      expiredRefs.push(name);
      continue;
    }
    if (ref.type === 'tag') {
      retained.add(snapshot['snapshot-id']);
      continue;
    }
    const minKeep = ref['min-snapshots-to-keep'] ?? settings.minSnapshotsToKeep;
    const refCutoff = ref['max-snapshot-age-ms'] === undefined ? cutoff : nowMs - ref['max-snapshot-age-ms'];
    let kept = 0;
    let keeping = true;
    for (const ancestor of ancestors(md, snapshot['snapshot-id'])) {
      inBranches.add(ancestor['snapshot-id']);
      if (keeping && (kept < minKeep || ancestor['timestamp-ms'] >= refCutoff)) {
        retained.add(ancestor['snapshot-id']);
        kept++;
      } else {
        keeping = false;
      }
    }
  }

  const mainHistory = refs.main ? ancestors(md, refs.main['snapshot-id']) : [];
  const withOffsets = mainHistory.findIndex((s) => s.summary[OFFSETS_KEY] !== undefined);
  for (const s of mainHistory.slice(0, withOffsets + 1)) retained.add(s['snapshot-id']);

  const tagged = new Set(
    Object.entries(refs)
      .filter(([name, r]) => r.type === 'tag' && !expiredRefs.includes(name))
      .map(([, r]) => r['snapshot-id']),
  );
  for (const s of md.snapshots) {
    const id = s['snapshot-id'];
    if (!inBranches.has(id) && !tagged.has(id) && s['timestamp-ms'] >= cutoff) retained.add(id);
  }
  const expire = md.snapshots
    .filter((s) => !retained.has(s['snapshot-id']))
    .sort((a, b) => a['timestamp-ms'] - b['timestamp-ms']);
  return { expire, expiredRefs };
}
