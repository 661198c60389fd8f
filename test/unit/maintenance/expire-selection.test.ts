import { describe, expect, it } from 'vitest';
import { selectExpiredSnapshots } from '../../../functions/core/maintenance/expire-selection.js';
import { newTableMetadata } from '../../../functions/core/spec/metadata.js';
import type { Snapshot, SnapshotRef, TableMetadata } from '../../../functions/core/spec/types.js';
import { OFFSETS_KEY } from '../../../functions/core/table/source-offsets.js';
import { SIMPLE_SCHEMA } from '../../support/tables.js';

const HOUR = 3_600_000;
const NOW = 1_800_000_000_000;

/** A chain of snapshots 1..n, one per hour, the newest at NOW; main at n. */
function history(
  n: number,
  extra: Partial<TableMetadata> = {},
  summary: (i: number) => Record<string, string> = () => ({}),
): TableMetadata {
  const md = newTableMetadata({ location: '/w/t', schema: SIMPLE_SCHEMA });
  const snapshots: Snapshot[] = [];
  for (let i = 1; i <= n; i++) {
    snapshots.push({
      'snapshot-id': BigInt(i),
      ...(i > 1 ? { 'parent-snapshot-id': BigInt(i - 1) } : {}),
      'sequence-number': i,
      'timestamp-ms': NOW - (n - i) * HOUR,
      'manifest-list': `/w/t/metadata/snap-${i}.avro`,
      summary: { operation: 'append', ...summary(i) },
    });
  }
  return {
    ...md,
    snapshots,
    'current-snapshot-id': BigInt(n),
    refs: { main: { 'snapshot-id': BigInt(n), type: 'branch' } },
    ...extra,
  };
}

const ids = (s: Snapshot[]) => s.map((x) => Number(x['snapshot-id']));
const retention = (maxAgeHours: number, minKeep: number) => ({
  maxSnapshotAgeMs: maxAgeHours * HOUR,
  minSnapshotsToKeep: minKeep,
  maxRefAgeMs: Number.POSITIVE_INFINITY,
});

describe('which snapshots expire', () => {
  it('keeps the main branch’s snapshots younger than the max age, and at least the minimum', () => {
    expect(ids(selectExpiredSnapshots(history(10), retention(3.5, 1), NOW).expire)).toEqual([
      1, 2, 3, 4, 5, 6,
    ]);
    expect(ids(selectExpiredSnapshots(history(10), retention(0, 6), NOW).expire)).toEqual([1, 2, 3, 4]);
    expect(ids(selectExpiredSnapshots(history(10), retention(0, 1), NOW).expire)).toHaveLength(9);
    expect(selectExpiredSnapshots(history(10), retention(100, 1), NOW).expire).toEqual([]);
  });

  it('never expires the current snapshot', () => {
    const result = selectExpiredSnapshots(history(3), retention(0, 1), NOW + 1000 * HOUR);
    expect(ids(result.expire)).toEqual([1, 2]);
  });

  it('lets a branch’s own retention win, keeps tagged snapshots and removes refs past their age', () => {
    // Prepare: tag on 2; branch 'audit' on 5 keeping 3 snapshots; an old tag on 1 with a max ref age
    const refs: Record<string, SnapshotRef> = {
      main: { 'snapshot-id': 10n, type: 'branch' },
      keep: { 'snapshot-id': 2n, type: 'tag' },
      audit: { 'snapshot-id': 5n, type: 'branch', 'min-snapshots-to-keep': 3 },
      stale: { 'snapshot-id': 1n, type: 'tag', 'max-ref-age-ms': HOUR },
    };
    // Act
    const result = selectExpiredSnapshots(history(10, { refs }), retention(0, 1), NOW);
    // Assess
    expect(result.expiredRefs).toEqual(['stale']);
    expect(ids(result.expire)).toEqual([1, 6, 7, 8, 9]);
  });

  it('expires an unreferenced snapshot (not in any branch) only once it is older than the max age', () => {
    // Prepare: 11 branched off 3, reachable from nothing
    const md = history(5);
    md.snapshots.push({
      ...md.snapshots[2],
      'snapshot-id': 11n,
      'parent-snapshot-id': 3n,
      'timestamp-ms': NOW - HOUR,
    });
    // Act / Assess
    expect(ids(selectExpiredSnapshots(md, retention(2, 1), NOW).expire)).toEqual([1, 2]);
    expect(ids(selectExpiredSnapshots(md, retention(0.5, 1), NOW).expire)).toEqual([1, 2, 3, 4, 11]);
  });

  it('keeps the main history back to the newest snapshot carrying floe’s offsets', () => {
    // Prepare: only snapshot 6 of 10 carries offsets (7..10 by another engine)
    const md = history(
      10,
      {},
      (i): Record<string, string> => (i === 6 ? { [OFFSETS_KEY]: '{"t":{"0":"5"}}' } : {}),
    );
    // Act
    const result = selectExpiredSnapshots(md, retention(0, 1), NOW);
    // Assess
    expect(ids(result.expire)).toEqual([1, 2, 3, 4, 5]);
  });
});
