/**
 * The loud failure when a batch holds records at offsets a table committed, but not the records it
 * committed there (classify-batch.ts): the topic was deleted and recreated, the cluster replaced, or
 * the source failed over to a mirror. Skipping them would lose them and appending them would mix two
 * histories under one set of offsets, so nothing is written and the batch fails until an operator says
 * which history the table follows from here (`floe rebase-offsets`).
 */
import { LakeError } from '../errors.js';
import type { IdentityConflict } from './classify-batch.js';

/** How many conflicting records a message details per partition (the rest are counted). */
const DETAILED = 2;

/** Records inside a table's committed offsets that are not the ones it holds. Retrying cannot help. */
export class OffsetIdentityError extends LakeError {
  /** topic → the partitions with conflicting records, in order (plain data: it is logged as JSON). */
  readonly partitions: Record<string, number[]>;

  constructor(
    readonly table: string,
    conflicts: readonly IdentityConflict[],
  ) {
    super(describeConflicts(table, conflicts), { retryable: false });
    const partitions: Record<string, number[]> = {};
    for (const { record } of conflicts) {
      partitions[record.topic] ??= [];
      const list = partitions[record.topic];
      if (!list.includes(record.partition)) list.push(record.partition);
      list.sort((a, b) => a - b);
    }
    this.partitions = partitions;
  }
}

function describeConflicts(table: string, conflicts: readonly IdentityConflict[]): string {
  const byPartition = new Map<string, IdentityConflict[]>();
  for (const c of conflicts) {
    const key = `${c.record.topic}/${c.record.partition}`;
    const list = byPartition.get(key) ?? [];
    list.push(c);
    byPartition.set(key, list);
  }
  const parts = [...byPartition].map(([key, list]) => {
    let low = list[0].record.offset;
    let high = low;
    for (const { record } of list) {
      if (record.offset < low) low = record.offset;
      if (record.offset > high) high = record.offset;
    }
    const details = list
      .slice(0, DETAILED)
      .map((c) => `offset ${c.record.offset}: expected ${c.expected}, found ${c.found}`)
      .join('; ');
    const more = list.length > DETAILED ? `; and ${list.length - DETAILED} more` : '';
    return `${key} offsets ${low}-${high} (${list.length} records; ${details}${more})`;
  });
  const topics = [...new Set(conflicts.map((c) => c.record.topic))];
  const rebase = topics
    .map((topic) => {
      const partitions = [
        ...new Set(conflicts.filter((c) => c.record.topic === topic).map((c) => c.record.partition)),
      ];
      return `floe rebase-offsets <catalog> --table ${table} --topic ${topic} --partitions ${partitions.sort((a, b) => a - b).join(',')}`;
    })
    .join(' / ');
  return (
    `${table}: records inside the table's committed offsets are not the records it committed there — ` +
    `the topic's history changed under the table (topic recreated, cluster replaced, failover): ` +
    `${parts.join('; ')}. Nothing was skipped or written and retrying cannot help. If the source now ` +
    `is a new history, start a new offset epoch (${rebase}) and deliver the records again; if it is ` +
    `not, point floe back at the cluster the table was fed from.`
  );
}
