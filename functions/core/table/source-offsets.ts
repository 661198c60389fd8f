/**
 * Source offsets carried in every snapshot floe writes (`floe.committed-offsets`), so a replayed
 * Kafka batch takes effect once, and expiring old snapshots never loses them: each snapshot carries
 * the offsets of every topic-partition the table has seen, not just its own batch's. They are the set
 * of committed offset ranges (offset-ranges.ts has the format), not a high-water mark: batches of one
 * partition can commit out of order, and a record is a replay only if its offset is in the set.
 */
import { createHash } from 'node:crypto';
import { ancestors } from '../spec/metadata.js';
import type { SnapshotId, TableMetadata } from '../spec/types.js';
import { decodeOffsetEpochs, type OffsetEpochs } from './offset-epochs.js';
import { decodeOffsetMarks, encodeOffsetMarks, mergeMarks, type OffsetMarks } from './offset-marks.js';
import { decodeOffsetRanges, encodeOffsetRanges, type OffsetRanges, unionOffsets } from './offset-ranges.js';

export const OFFSETS_KEY = 'floe.committed-offsets';
export const BATCH_ID_KEY = 'floe.batch-id';
/** What the table keeps of the records behind its committed ranges (offset-marks.ts). */
export const MARKS_KEY = 'floe.offset-marks';
/** Committed ranges and marks of earlier offset epochs, moved aside by `floe rebase-offsets` (offset-epochs.ts). */
export const EPOCHS_KEY = 'floe.offset-epochs';
/** Dead letters already redriven into the table (topic → partition → offset ranges). */
export const REDRIVEN_KEY = 'floe.redriven-offsets';

/**
 * Summary properties every snapshot carries forward from its parent unless it sets them itself, so
 * expiring older snapshots (or a commit by maintenance or another engine) never loses them.
 */
export const CARRIED_SUMMARY_KEYS = [
  OFFSETS_KEY,
  MARKS_KEY,
  EPOCHS_KEY,
  REDRIVEN_KEY,
  // An aggregate table's per-partition event times and watermark (aggregate/watermark.ts): losing
  // them to expiry would reopen closed windows.
  'floe.aggregate.event-times',
  'floe.aggregate.watermark',
] as const;

/** The newest value of a summary property in the table's ancestry (external writers may omit it). */
export function findInAncestry(metadata: TableMetadata, key: string): string | undefined {
  for (const snapshot of ancestors(metadata)) {
    const text = snapshot.summary[key];
    if (text !== undefined) return text;
  }
  return undefined;
}

/** topic → partition → committed offset ranges (sorted, merged, inclusive). */
export type SourceOffsets = OffsetRanges;

/** The summary text of committed offsets (offset-ranges.ts). */
export function encodeOffsets(offsets: SourceOffsets): string {
  return encodeOffsetRanges(offsets);
}

/**
 * Reads committed offsets in any format floe wrote (an old single offset `o` reads as `[0, o]`).
 * @throws ValidationError for text floe did not write
 */
export function decodeOffsets(text: string): SourceOffsets {
  return decodeOffsetRanges(text, OFFSETS_KEY);
}

/**
 * The committed offsets as of the table's current snapshot. When the newest snapshot lacks them (an
 * external writer, or maintenance by another engine), walks back the ancestry to the newest one that has them.
 * @throws ValidationError when the summary holds text floe did not write
 */
export function readCommittedOffsets(metadata: TableMetadata): SourceOffsets {
  const text = findInAncestry(metadata, OFFSETS_KEY);
  return text === undefined ? new Map() : decodeOffsets(text);
}

/** A table's committed offsets and what it keeps of the records behind them. */
export interface CommittedState {
  offsets: SourceOffsets;
  /** Empty for ranges committed before marks existed: those are checked by offsets alone. */
  marks: OffsetMarks;
  /** The closed offset epochs (offset-epochs.ts); empty for a table never rebased. */
  epochs: OffsetEpochs;
}

/**
 * The committed offsets, their marks and the closed epochs as of the table's current snapshot (each walked back like
 * readCommittedOffsets).
 * @throws ValidationError when the summary holds text floe did not write
 */
export function readCommittedState(metadata: TableMetadata): CommittedState {
  const marks = findInAncestry(metadata, MARKS_KEY);
  const epochs = findInAncestry(metadata, EPOCHS_KEY);
  return {
    offsets: readCommittedOffsets(metadata),
    marks: marks === undefined ? new Map() : decodeOffsetMarks(marks, MARKS_KEY),
    epochs: epochs === undefined ? new Map() : decodeOffsetEpochs(epochs, EPOCHS_KEY),
  };
}

/**
 * The summary properties of the state after a batch: the ranges merged, the marks merged as their ranges.
 */
export function committedSummary(
  base: CommittedState,
  batch: SourceOffsets,
  batchMarks: OffsetMarks,
): Record<string, string> {
  const offsets = mergeOffsets(base.offsets, batch);
  return {
    [OFFSETS_KEY]: encodeOffsets(offsets),
    [MARKS_KEY]: encodeOffsetMarks(mergeMarks(offsets, base.marks, batchMarks)),
  };
}

/** Offsets after a batch: the table's ranges and the batch's, merged (a batch can only add offsets). */
export function mergeOffsets(base: SourceOffsets, batch: SourceOffsets): SourceOffsets {
  return unionOffsets(base, batch);
}

/** A batch id that is the same on every retry and replay of the same records. */
export function computeBatchId(
  ranges: { topic: string; partition: number; first: bigint; last: bigint }[],
): string {
  const text = ranges
    .map((r) => `${r.topic}\u0000${r.partition}\u0000${r.first}\u0000${r.last}`)
    .sort()
    .join('\n');
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/** Whether any snapshot still in the table's history was committed by this batch. */
export function findBatch(metadata: TableMetadata, batchId: string): SnapshotId | undefined {
  return metadata.snapshots.find((s) => s.summary[BATCH_ID_KEY] === batchId)?.['snapshot-id'];
}
