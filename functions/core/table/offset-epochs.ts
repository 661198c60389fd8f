/**
 * Offset epochs: when a topic's history changes under a table (recreated, a new cluster, a failover),
 * its offsets start a new sequence that the committed ranges of the old one must not be checked against.
 * `floe rebase-offsets` closes the current epoch of a topic (or some of its partitions): their committed
 * ranges and marks move to `floe.offset-epochs`, and the committed state for them starts empty, so later
 * batches are checked against the new epoch only. A partition never rebased is in epoch 1.
 *
 * Summary text (`floe.offset-epochs`, carried forward like the ranges): JSON, topic → partition → the
 * closed epochs in order, each with its ranges and marks in their own summary formats, the last snapshot
 * of the epoch (rows of snapshots up to it belong to it) and when it was closed:
 *
 *     {"ev3":{"0":[{"epoch":1,"ranges":"0-4233","marks":"0:…,4233:…,…","closed-after":"5120…","closed-at-ms":1764…}]}}
 */
import { createHash } from 'node:crypto';
import { ValidationError } from '../errors.js';
import type { SnapshotId } from '../spec/types.js';
import { encodeOffsetMarks, type OffsetMarks, type RangeMarks } from './offset-marks.js';
import {
  decodeByTopicPartition,
  decodeOffsetRanges,
  encodeOffsetRanges,
  type OffsetRange,
  type OffsetRanges,
} from './offset-ranges.js';

/** One closed epoch of a topic-partition. */
export interface ClosedEpoch {
  epoch: number;
  /** The ranges and marks the epoch committed, in their summary texts (a partition's value). */
  ranges: string;
  marks: string;
  /** The table's last snapshot in the epoch (null: the table had none). */
  closedAfter: string | null;
  closedAtMs: number;
}

/** topic → partition → closed epochs, oldest first. */
export type OffsetEpochs = Map<string, Map<number, ClosedEpoch[]>>;

/** The epoch a topic-partition's offsets are in now (1 until it is first rebased). */
export function currentEpoch(epochs: OffsetEpochs, topic: string, partition: number): number {
  const closed = epochs.get(topic)?.get(partition);
  return closed === undefined || closed.length === 0 ? 1 : closed[closed.length - 1].epoch + 1;
}

/**
 * What a batch id gains when some of the batch's topic-partitions are past epoch 1: '' otherwise. A
 * batch id names a batch by its offsets, so the same offsets of a new epoch must not be taken for the
 * old epoch's batch (the commit loop recognises a landed batch by its id).
 */
export function epochSuffix(epochs: OffsetEpochs, batch: OffsetRanges): string {
  if (epochs.size === 0) return '';
  const tags: string[] = [];
  for (const [topic, parts] of batch) {
    for (const partition of parts.keys()) {
      const epoch = currentEpoch(epochs, topic, partition);
      if (epoch > 1) tags.push(`${topic}\u0000${partition}\u0000${epoch}`);
    }
  }
  if (tags.length === 0) return '';
  return `-e${createHash('sha256').update(tags.sort().join('\n')).digest('hex').slice(0, 12)}`;
}

/** The committed state after a rebase, and the epochs closed by it. */
export interface Rebased {
  offsets: OffsetRanges;
  marks: OffsetMarks;
  epochs: OffsetEpochs;
  /** topic-partitions whose epoch was closed, with the epoch they are in now. */
  closed: { partition: number; epoch: number; ranges: readonly OffsetRange[] }[];
}

/**
 * Closes the current epoch of `topic`'s partitions (all it has committed ranges for, or `partitions`):
 * their ranges and marks move to the epochs, and the committed state keeps none for them. A partition
 * with nothing committed has no epoch to close and is left out.
 */
export function rebaseEpochs(
  state: { offsets: OffsetRanges; marks: OffsetMarks; epochs: OffsetEpochs },
  topic: string,
  partitions: readonly number[] | undefined,
  closedAfter: SnapshotId | undefined,
  nowMs: number,
): Rebased {
  const ranges = state.offsets.get(topic) ?? new Map<number, OffsetRange[]>();
  const chosen = (partitions ?? [...ranges.keys()]).filter((p) => (ranges.get(p)?.length ?? 0) > 0);
  const offsets: OffsetRanges = new Map(state.offsets);
  const marks: OffsetMarks = new Map(state.marks);
  const epochs: OffsetEpochs = new Map([...state.epochs].map(([t, parts]) => [t, new Map(parts)]));
  const keptRanges = new Map(ranges);
  const keptMarks = new Map(state.marks.get(topic) ?? []);
  const topicEpochs = epochs.get(topic) ?? new Map<number, ClosedEpoch[]>();
  const closed: Rebased['closed'] = [];
  for (const p of [...chosen].sort((a, b) => a - b)) {
    const partRanges = ranges.get(p)!;
    const partMarks: RangeMarks[] = state.marks.get(topic)?.get(p) ?? [];
    const epoch = currentEpoch(state.epochs, topic, p);
    topicEpochs.set(p, [
      ...(topicEpochs.get(p) ?? []),
      {
        epoch,
        ranges: partitionText(encodeOffsetRanges(new Map([[topic, new Map([[p, partRanges]])]])), topic, p),
        marks: partitionText(encodeOffsetMarks(new Map([[topic, new Map([[p, partMarks]])]])), topic, p),
        closedAfter: closedAfter === undefined ? null : String(closedAfter),
        closedAtMs: nowMs,
      },
    ]);
    keptRanges.delete(p);
    keptMarks.delete(p);
    closed.push({ partition: p, epoch: epoch + 1, ranges: partRanges });
  }
  offsets.set(topic, keptRanges);
  marks.set(topic, keptMarks);
  if (topicEpochs.size > 0) epochs.set(topic, topicEpochs);
  return { offsets, marks, epochs, closed };
}

/** One partition's value out of a summary text of one topic-partition. */
function partitionText(json: string, topic: string, partition: number): string {
  const parsed = JSON.parse(json) as Record<string, Record<string, string>>;
  return parsed[topic]?.[String(partition)] ?? '';
}

/** The summary text of epochs (see the file comment). */
export function encodeOffsetEpochs(epochs: OffsetEpochs): string {
  const out: Record<string, Record<string, unknown[]>> = {};
  for (const topic of [...epochs.keys()].sort()) {
    const parts = epochs.get(topic)!;
    const text: Record<string, unknown[]> = {};
    for (const p of [...parts.keys()].sort((a, b) => a - b)) {
      text[String(p)] = parts.get(p)!.map((e) => ({
        epoch: e.epoch,
        ranges: e.ranges,
        marks: e.marks,
        'closed-after': e.closedAfter,
        'closed-at-ms': e.closedAtMs,
      }));
    }
    out[topic] = text;
  }
  return JSON.stringify(out);
}

function decodeEpoch(value: unknown, where: string): ClosedEpoch {
  const e = value as Record<string, unknown>;
  const ok =
    typeof e === 'object' &&
    e !== null &&
    Number.isSafeInteger(e.epoch) &&
    typeof e.ranges === 'string' &&
    typeof e.marks === 'string' &&
    (e['closed-after'] === null || typeof e['closed-after'] === 'string') &&
    typeof e['closed-at-ms'] === 'number';
  if (!ok) throw new ValidationError(`${where}: bad epoch ${JSON.stringify(value)}`);
  return {
    epoch: e.epoch as number,
    ranges: e.ranges as string,
    marks: e.marks as string,
    closedAfter: e['closed-after'] as string | null,
    closedAtMs: e['closed-at-ms'] as number,
  };
}

/**
 * Reads a summary's epochs.
 * @throws ValidationError for text floe did not write
 */
export function decodeOffsetEpochs(text: string, what = 'offset epochs'): OffsetEpochs {
  return decodeByTopicPartition(text, what, (list, where) => {
    if (!Array.isArray(list)) throw new ValidationError(`${where}: not a list of epochs`);
    return list.map((e) => decodeEpoch(e, where));
  });
}

/** A topic-partition whose offsets in a requested span belong to more than one epoch. */
export interface MixedEpochs {
  topic: string;
  partition: number;
  epochs: number[];
}

/**
 * The topic-partitions where the offsets `from` (inclusive) to `toExclusive` (per partition; open when
 * absent) meet committed ranges of more than one epoch: there the same offset can name two records, so
 * rows cannot be ordered or bounded by offset alone.
 * @throws ValidationError for epochs text floe did not write
 */
export function mixedEpochs(
  offsets: OffsetRanges,
  epochs: OffsetEpochs,
  from?: ReadonlyMap<number, bigint>,
  toExclusive?: ReadonlyMap<number, bigint>,
): MixedEpochs[] {
  const out: MixedEpochs[] = [];
  const meets = (ranges: readonly OffsetRange[], partition: number) => {
    const low = from?.get(partition) ?? 0n;
    const high = toExclusive?.get(partition);
    return ranges.some(([a, b]) => b >= low && (high === undefined || a < high));
  };
  for (const [topic, parts] of epochs) {
    for (const [partition, closed] of parts) {
      const met = closed
        .filter((e) =>
          meets(
            decodeOffsetRanges(`{"t":{"0":${JSON.stringify(e.ranges)}}}`)
              .get('t')
              ?.get(0) ?? [],
            partition,
          ),
        )
        .map((e) => e.epoch);
      if (meets(offsets.get(topic)?.get(partition) ?? [], partition))
        met.push(currentEpoch(epochs, topic, partition));
      if (met.length > 1) out.push({ topic, partition, epochs: met });
    }
  }
  return out;
}
