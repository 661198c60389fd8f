/**
 * Whether a gap between committed ranges holds records at all. A Lambda's ESM batches commit the span
 * from their first to their last record (ingest/batch-offsets.ts), so on a transactional topic the
 * commit marker after each batch's last record, and on a compacted one a record compacted away at a
 * batch boundary, is a hole no batch will ever fill: nothing a consumer is handed lies there. Counted as
 * missing records, such holes would keep the lag above 0 and call every marker a stale gap.
 *
 * With a Kafka connection, status reads the gaps' offsets (read-committed, like the ESM and floe run;
 * gaps already past retention are not read) and counts the records they deliver: a gap that delivers
 * none is empty, neither lag nor stale. At most MAX_PROBED_GAPS offsets are read per status, the
 * smallest gaps first (markers are one offset each); gaps left unread keep `records` null.
 */
import type { KafkaConnection } from '../kafka/kafka-client.js';
import { readRanges } from '../kafka/read-ranges.js';
import type { OffsetGap, PartitionLag } from './offset-lag.js';

/** Offsets read in all per status: enough for thousands of marker holes, little against a real backlog. */
export const MAX_PROBED_OFFSETS = 100_000n;
/** How long the read may take before status gives up on it (the gaps stay unknown). */
const PROBE_TIMEOUT_MS = 15_000;

/** What reading the gaps found: the records delivered per gap (null when not read), and any trouble. */
export interface GapProbe {
  records: (number | null)[];
  warning?: string;
}

/**
 * Each gap as far as a read can still reach it: from its partition's log start on, when retention has
 * dropped its first offsets. Read from below the log start, the broker answers "offset out of range",
 * which fails the read of every gap. Never throws.
 */
export function readableParts(
  gaps: readonly OffsetGap[],
  lags: readonly Pick<PartitionLag, 'topic' | 'partition' | 'logStart'>[],
): OffsetGap[] {
  const logStarts = new Map(lags.map((l) => [`${l.topic}\u0000${l.partition}`, l.logStart]));
  return gaps.map((g) => {
    const low = logStarts.get(`${g.topic}\u0000${g.partition}`) ?? null;
    return low !== null && g.first < low && low <= g.last ? { ...g, first: low } : g;
  });
}

/** The gaps to read, smallest first, within the offsets allowed. Never throws. */
export function chooseGaps(gaps: readonly OffsetGap[], maxOffsets = MAX_PROBED_OFFSETS): number[] {
  const order = gaps
    .map((g, i) => ({ i, size: g.last - g.first + 1n }))
    .filter(({ i }) => gaps[i].expired !== true)
    .sort((a, b) => (a.size < b.size ? -1 : a.size > b.size ? 1 : a.i - b.i));
  const chosen: number[] = [];
  let budget = maxOffsets;
  for (const { i, size } of order) {
    if (size > budget) break;
    budget -= size;
    chosen.push(i);
  }
  return chosen.sort((a, b) => a - b);
}

/** The gap (of `indices`, in offset order, disjoint) holding `offset`, by binary search. Never throws. */
function gapHolding(
  gaps: readonly OffsetGap[],
  indices: readonly number[],
  offset: bigint,
): number | undefined {
  let lo = 0;
  let hi = indices.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const g = gaps[indices[mid]];
    if (offset < g.first) hi = mid - 1;
    else if (offset > g.last) lo = mid + 1;
    else return indices[mid];
  }
  return undefined;
}

/**
 * Counts the records each chosen gap delivers (see the file comment). A read that fails or times out
 * leaves every gap unknown and says why in `warning`. Never throws.
 */
export async function probeGaps(kafka: KafkaConnection, gaps: readonly OffsetGap[]): Promise<GapProbe> {
  const records: (number | null)[] = gaps.map(() => null);
  const chosen = chooseGaps(gaps);
  if (chosen.length === 0) return { records };
  const byPartition = new Map<string, number[]>();
  for (const i of chosen) {
    const key = `${gaps[i].topic}\u0000${gaps[i].partition}`;
    byPartition.set(key, [...(byPartition.get(key) ?? []), i]);
  }
  const counts = new Map<number, number>(chosen.map((i) => [i, 0]));
  try {
    // Counted as the batches come, never kept: the gaps may hold up to MAX_PROBED_OFFSETS large records.
    await readRanges({
      kafka,
      ranges: chosen.map((i) => ({
        topic: gaps[i].topic,
        partition: gaps[i].partition,
        start: gaps[i].first,
        end: gaps[i].last + 1n,
      })),
      timeoutMs: PROBE_TIMEOUT_MS,
      onRecords: async (batch) => {
        for (const m of batch) {
          const i = gapHolding(gaps, byPartition.get(`${m.topic}\u0000${m.partition}`) ?? [], m.offset);
          if (i !== undefined) counts.set(i, (counts.get(i) ?? 0) + 1);
        }
      },
    });
    for (const [i, n] of counts) records[i] = n;
    return { records };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { records: gaps.map(() => null), warning: `the gaps' records could not be read: ${why}` };
  }
}
