/**
 * A batch's changes collapsed to one final state per key, applied in Kafka offset order per
 * topic-partition: several updates of a key in one batch give one row, an insert then delete gives
 * nothing. Kafka orders records only within a partition, so a key seen on two partitions in one
 * batch has no defined order: that is reported as a warning (the producer is not keying records by
 * the primary key), and the changes are applied in topic-partition order.
 */
import type { RawRecord } from '../records/esm-event.js';
import type { Row } from '../spec/types.js';
import type { Change } from './extract-changes.js';
import { type ChangeKey, describeKey } from './record-key.js';
import type { KeyColumn } from '../routing/table-mode.js';

export interface KeyState {
  key: ChangeKey;
  /** The key's final row, or null when the batch leaves the key deleted. */
  row: Row | null;
  /** Whether rows of this key written before the batch must be deleted (equality delete). */
  deleteExisting: boolean;
  /**
   * The record of the key's last change in the batch: its `_kafka` partition and offset are the
   * version the batch leaves the key at (equality delete rows carry them). Absent for states not
   * collapsed from records.
   */
  record?: RawRecord;
}

export interface CollapsedChanges {
  /** One entry per key, in order of each key's first change. */
  finals: KeyState[];
  warnings: string[];
}

const EXAMPLES = 5;

function compareChanges(a: Change, b: Change): number {
  const ra = a.record;
  const rb = b.record;
  if (ra.topic !== rb.topic) return ra.topic < rb.topic ? -1 : 1;
  if (ra.partition !== rb.partition) return ra.partition - rb.partition;
  return ra.offset < rb.offset ? -1 : ra.offset > rb.offset ? 1 : 0;
}

/** Collapses changes per key (last change wins). Never throws. */
export function collapseChanges(changes: readonly Change[], columns: readonly KeyColumn[]): CollapsedChanges {
  // Stable sort: the changes of one record (an update that moved the key) keep their order.
  const ordered = [...changes].sort(compareChanges);
  const states = new Map<string, KeyState & { where: string }>();
  const crossPartition = new Map<string, Set<string>>();
  for (const change of ordered) {
    const where = `${change.record.topic}/${change.record.partition}`;
    const state = states.get(change.key.text);
    if (!state) {
      states.set(change.key.text, {
        key: change.key,
        row: change.row,
        deleteExisting: change.mayExist,
        record: change.record,
        where,
      });
      continue;
    }
    if (state.where !== where) {
      const seen = crossPartition.get(change.key.text) ?? new Set([state.where]);
      seen.add(where);
      crossPartition.set(change.key.text, seen);
    }
    state.row = change.row;
    state.deleteExisting ||= change.mayExist;
    state.record = change.record;
  }
  const warnings: string[] = [];
  if (crossPartition.size > 0) {
    const examples = [...crossPartition]
      .slice(0, EXAMPLES)
      .map(
        ([text, where]) => `${describeKey(columns, states.get(text)!.key)} on ${[...where].join(' and ')}`,
      );
    warnings.push(
      `${crossPartition.size} key(s) changed on more than one Kafka partition in one batch (${examples.join('; ')}${crossPartition.size > EXAMPLES ? '; ...' : ''}): ` +
        'Kafka orders records only within a partition, so the final row of such a key is undefined. ' +
        'Key the topic by the primary key (Debezium does by default).',
    );
  }
  return {
    finals: [...states.values()].map(({ key, row, deleteExisting, record }) => ({
      key,
      row,
      deleteExisting,
      record,
    })),
    warnings,
  };
}
