/**
 * A CDC batch older than changes the table already has for its partition (a redriven on-failure
 * batch, a backfill under the live tail): committed offsets are ranges, so it is ingested, not taken
 * for a replay. A key's change from it is applied only if the table holds nothing newer for the key
 * from the same topic-partition (its version, change-version.ts); otherwise the table already has
 * the newer state and the change is dropped (counted, not dead-lettered: it is not bad input).
 * Kafka orders records only within a partition, so a key whose version comes from another partition
 * takes the late change as before, with a warning; so does every key of a table without lineage.
 */
import type { RawRecord } from '../records/esm-event.js';
import type { SourceOffsets } from '../table/source-offsets.js';
import { type KeyVersions, partitionOf } from './change-version.js';
import type { KeyState } from './collapse-changes.js';

/** What applying a late batch's changes left out or could not decide. */
export interface LateOutcome {
  /** The changes to apply. */
  finals: KeyState[];
  /** Keys whose change was older than the version the table holds in the same partition. */
  dropped: number;
  /** Keys whose only versions come from other partitions (applied; order undefined). */
  otherPartition: number;
}

/**
 * The topic-partitions (`topic/partition` → the newest offset committed) whose records in `records`
 * are older than changes the table already has. Never throws.
 */
export function latePartitions(records: readonly RawRecord[], committed: SourceOffsets): Map<string, bigint> {
  const late = new Map<string, bigint>();
  for (const r of records) {
    const ranges = committed.get(r.topic)?.get(r.partition);
    const newest = ranges?.[ranges.length - 1]?.[1];
    if (r.offset >= 0n && newest !== undefined && r.offset < newest)
      late.set(partitionOf(r.topic, r.partition), newest);
  }
  return late;
}

/**
 * The topic-partitions whose records in `records` follow a gap in the committed offsets (offsets
 * below the batch's first that are not committed, after some that are): a batch not ingested yet
 * may sit there, holding an older delete of a key this batch creates, so a create cannot trust that
 * the table holds no row of its key. Never throws.
 */
export function partitionsAfterGap(records: readonly RawRecord[], committed: SourceOffsets): Set<string> {
  const first = new Map<string, RawRecord>();
  for (const r of records) {
    const where = partitionOf(r.topic, r.partition);
    const seen = first.get(where);
    if (r.offset >= 0n && (!seen || r.offset < seen.offset)) first.set(where, r);
  }
  const gapped = new Set<string>();
  for (const [where, r] of first) {
    const below = (committed.get(r.topic)?.get(r.partition) ?? []).filter(([from]) => from < r.offset);
    if (below.length > 1 || (below.length === 1 && below[0][1] + 1n < r.offset)) gapped.add(where);
  }
  return gapped;
}

/** The changes, with every key last changed on one of `partitions` replacing its rows. Never throws. */
export function replaceRowsOn(finals: readonly KeyState[], partitions: ReadonlySet<string>): KeyState[] {
  if (partitions.size === 0) return [...finals];
  return finals.map((f) =>
    !f.deleteExisting && f.record && partitions.has(partitionOf(f.record.topic, f.record.partition))
      ? { ...f, deleteExisting: true }
      : f,
  );
}

/** Whether `a` and `b` commit the same offsets for every partition of `late`. Never throws. */
export function sameLateOffsets(
  late: ReadonlyMap<string, bigint>,
  a: SourceOffsets,
  b: SourceOffsets,
): boolean {
  const text = (offsets: SourceOffsets, tp: string) => {
    const cut = tp.lastIndexOf('/');
    const ranges = offsets.get(tp.slice(0, cut))?.get(Number(tp.slice(cut + 1))) ?? [];
    return ranges.map(([first, last]) => `${first}-${last}`).join(',');
  };
  return [...late.keys()].every((tp) => text(a, tp) === text(b, tp));
}

/** The keys whose last change in the batch is from a late partition: the ones to look up. Never throws. */
export function lateKeys(finals: readonly KeyState[], late: ReadonlyMap<string, bigint>): KeyState[] {
  return finals.filter((f) => f.record && late.has(partitionOf(f.record.topic, f.record.partition)));
}

/**
 * Drops each change the table holds a newer version of in the same partition; every other change
 * replaces the key's rows (the newer changes may have written any key). Never throws.
 */
export function applyLate(
  finals: readonly KeyState[],
  versions: ReadonlyMap<string, KeyVersions>,
): LateOutcome {
  const kept: KeyState[] = [];
  let dropped = 0;
  let otherPartition = 0;
  for (const f of finals) {
    const held = versions.get(f.key.text);
    const where = f.record && partitionOf(f.record.topic, f.record.partition);
    const newest = where === undefined ? undefined : held?.get(where);
    if (f.record && newest !== undefined && newest > f.record.offset) {
      dropped++;
      continue;
    }
    if (held && newest === undefined && held.size > 0) otherPartition++;
    kept.push({ ...f, deleteExisting: true });
  }
  return { finals: kept, dropped, otherPartition };
}

/** The report's warnings for a committed late batch (`outcome` undefined: the table has no lineage). */
export function lateWarnings(late: ReadonlyMap<string, bigint>, outcome: LateOutcome | undefined): string[] {
  if (late.size === 0) return [];
  const where = [...late].map(([tp, newest]) => `${tp} older than offset ${newest}`).join(', ');
  if (!outcome) {
    return [...late].map(
      ([tp, newest]) =>
        `changes of ${tp} older than offset ${newest}, which the table already has, were applied after it: ` +
        'a key both touched now shows the older change (deliver a partition’s CDC batches in order, ' +
        'or keep the route’s _kafka lineage so floe can tell which change is newer)',
    );
  }
  const warnings = [
    `changes of ${where}, which the table already has, were applied only to keys the table holds ` +
      `nothing newer of: ${outcome.dropped} older change(s) dropped`,
  ];
  if (outcome.otherPartition > 0) {
    warnings.push(
      `${outcome.otherPartition} key(s) of a late batch were last written from another Kafka partition, ` +
        'so which change is newer is undefined; the late change was applied. Key the topic by the primary key.',
    );
  }
  return warnings;
}
