/**
 * Source offsets carried in every snapshot floe writes (`floe.committed-offsets`), so a replayed
 * Kafka batch takes effect once, and expiring old snapshots never loses them: each snapshot carries
 * the offsets of every topic-partition the table has seen, not just its own batch's.
 */
import { createHash } from 'node:crypto';
import { ancestors } from '../spec/metadata.js';
import type { SnapshotId, TableMetadata } from '../spec/types.js';

export const OFFSETS_KEY = 'floe.committed-offsets';
export const BATCH_ID_KEY = 'floe.batch-id';
/** Dead letters already redriven into the table (topic → partition → offset ranges). */
export const REDRIVEN_KEY = 'floe.redriven-offsets';

/**
 * Summary properties every snapshot carries forward from its parent unless it sets them itself, so
 * expiring older snapshots (or a commit by maintenance or another engine) never loses them.
 */
export const CARRIED_SUMMARY_KEYS = [OFFSETS_KEY, REDRIVEN_KEY] as const;

/** The newest value of a summary property in the table's ancestry (external writers may omit it). */
export function findInAncestry(metadata: TableMetadata, key: string): string | undefined {
  for (const snapshot of ancestors(metadata)) {
    const text = snapshot.summary[key];
    if (text !== undefined) return text;
  }
  return undefined;
}

/** topic → partition → last committed offset (inclusive). */
export type SourceOffsets = Map<string, Map<number, bigint>>;

export function encodeOffsets(offsets: SourceOffsets): string {
  const out: Record<string, Record<string, string>> = {};
  for (const topic of [...offsets.keys()].sort()) {
    const parts = offsets.get(topic)!;
    out[topic] = {};
    for (const p of [...parts.keys()].sort((a, b) => a - b)) out[topic][String(p)] = parts.get(p)!.toString();
  }
  return JSON.stringify(out);
}

export function decodeOffsets(text: string): SourceOffsets {
  const parsed = JSON.parse(text) as Record<string, Record<string, string>>;
  const out: SourceOffsets = new Map();
  for (const [topic, parts] of Object.entries(parsed)) {
    const m = new Map<number, bigint>();
    for (const [p, o] of Object.entries(parts)) m.set(Number(p), BigInt(o));
    out.set(topic, m);
  }
  return out;
}

/**
 * The committed offsets as of the table's current snapshot. When the newest snapshot lacks them (an
 * external writer, or maintenance by another engine), walks back the ancestry to the newest one that has them.
 */
export function readCommittedOffsets(metadata: TableMetadata): SourceOffsets {
  const text = findInAncestry(metadata, OFFSETS_KEY);
  return text === undefined ? new Map() : decodeOffsets(text);
}

/** Offsets after a batch: the table's, raised by the batch's (never lowered). */
export function mergeOffsets(base: SourceOffsets, batch: SourceOffsets): SourceOffsets {
  const out: SourceOffsets = new Map([...base].map(([t, m]) => [t, new Map(m)]));
  for (const [topic, parts] of batch) {
    const m = out.get(topic) ?? new Map<number, bigint>();
    for (const [p, o] of parts) if ((m.get(p) ?? -1n) < o) m.set(p, o);
    out.set(topic, m);
  }
  return out;
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
