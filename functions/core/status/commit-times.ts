/**
 * Since when the table has held an offset: the commit time (`timestamp-ms`) of the oldest snapshot,
 * walking back from the current one, whose committed offsets (`floe.committed-offsets` of its own
 * summary) still hold it. That dates a partition's last advance (its last committed offset) and a gap
 * (the first offset after the hole: the batch after it committed while the hole's batch did not).
 * Reads snapshot summaries only.
 *
 * History is only as long as the snapshots kept: when the oldest snapshot kept already holds the offset,
 * the time is that snapshot's and `atLeast` says the real age may be more (expired snapshots), unless
 * that snapshot is the table's first.
 */
import { ancestors } from '../spec/metadata.js';
import type { TableMetadata } from '../spec/types.js';
import { decodeOffsets, OFFSETS_KEY } from '../table/source-offsets.js';
import { containsOffset, type OffsetRanges } from '../table/offset-ranges.js';

/** An offset of one topic-partition to date. */
export interface OffsetProbe {
  topic: string;
  partition: number;
  offset: bigint;
}

/** When the table first held a probed offset (in its current, unbroken run of snapshots). */
export interface HeldSince {
  /** `timestamp-ms` of the oldest snapshot of the run; null when no snapshot names the offset. */
  sinceMs: number | null;
  /** The run reaches the oldest snapshot kept (or one whose summary cannot be read): maybe older. */
  atLeast: boolean;
}

function readable(text: string): OffsetRanges | undefined {
  try {
    return decodeOffsets(text);
  } catch {
    // A summary that does not read ends the walk there: what is newer is still dated (as `atLeast`).
    return undefined;
  }
}

/**
 * For each probe, since when the current snapshot's ancestry holds it (see the file comment). Snapshots
 * without committed offsets in their summary (an external writer's, maintenance by another engine) are
 * passed over. Never throws.
 */
export function heldSince(metadata: TableMetadata, probes: readonly OffsetProbe[]): HeldSince[] {
  const out: HeldSince[] = probes.map(() => ({ sinceMs: null, atLeast: false }));
  const open = new Set(probes.map((_, i) => i));
  let first = true; // whether the walk reached the table's first snapshot (no parent): then exact
  for (const snapshot of ancestors(metadata)) {
    first = snapshot['parent-snapshot-id'] === undefined || snapshot['parent-snapshot-id'] === null;
    if (open.size === 0) break;
    const text = snapshot.summary[OFFSETS_KEY];
    if (text === undefined) continue;
    const offsets = readable(text);
    if (offsets === undefined) {
      for (const i of open) out[i].atLeast = out[i].sinceMs !== null;
      return out;
    }
    for (const i of [...open]) {
      const p = probes[i];
      if (containsOffset(offsets, p.topic, p.partition, p.offset)) out[i].sinceMs = snapshot['timestamp-ms'];
      else open.delete(i);
    }
  }
  // Still open: the oldest snapshot kept held it; unless that is the table's first, the offset may be
  // older than the history shows.
  for (const i of open) out[i].atLeast = out[i].sinceMs !== null && !first;
  return out;
}
