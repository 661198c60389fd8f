/**
 * Whether the broker still holds the records the table committed. A topic deleted and recreated, a
 * cluster replaced or a failover to a mirror starts offsets again: the table's committed ranges then
 * name offsets whose records on the broker are other ones, and reading "outside the committed ranges"
 * would hide those records as if the table held them. For each partition whose committed ranges carry
 * marks (table/offset-marks.ts), one record is read with the tail — the last marked offset of the
 * highest range the broker still holds — and compared with its mark; a broker log shorter than a
 * marked range is a mismatch without a read. A partition found mismatched is read whole, as the tail.
 * A partition without marks is trusted by its offsets, as before marks existed.
 */
import { ESM_MAX_BATCH_SIZE, formEsmEvents } from '../kafka/esm-batch.js';
import type { KafkaConnection } from '../kafka/kafka-client.js';
import { type HotRange, type PartitionWatermarks, collectRanges } from '../kafka/read-range.js';
import { decodeEsmEvent, type RawRecord } from '../records/esm-event.js';
import { type RangeMarks, type RecordMark, recordHash } from '../table/offset-marks.js';
import type { OffsetRanges } from '../table/offset-ranges.js';
import type { CommittedState } from '../table/source-offsets.js';
import { planHotRanges } from './hot-ranges.js';

/** A partition whose broker records are not those its committed ranges name, and why. */
export interface IdentityMismatch {
  topic: string;
  partition: number;
  reason: string;
}

interface Probe {
  topic: string;
  partition: number;
  mark: RecordMark;
}

/** What the tail read gives: the records outside the ranges the table holds on this broker. */
export interface UncommittedRead {
  ranges: HotRange[];
  records: RawRecord[];
  mismatches: IdentityMismatch[];
}

/** The mark a partition is checked by, or a mismatch the watermarks already show. */
function probeOf(w: PartitionWatermarks, marks: readonly RangeMarks[]): RecordMark | string | undefined {
  let probe: RecordMark | undefined;
  for (const m of marks) {
    if (m.last.offset >= w.high) {
      return `the broker's log ends at ${w.high}, the table committed up to ${m.last.offset}`;
    }
    // A range the broker's retention already dropped cannot be checked.
    if (m.last.offset >= w.low) probe = m.last;
  }
  return probe;
}

/** The consumed records as the ingest path decodes them, so a record hashes as when it was committed. */
function decode(messages: Parameters<typeof formEsmEvents>[1]): RawRecord[] {
  return formEsmEvents('live', messages, { batchSize: ESM_MAX_BATCH_SIZE }).flatMap(
    (formed) => decodeEsmEvent(formed.event).records,
  );
}

function withoutPartitions(offsets: OffsetRanges, drop: readonly IdentityMismatch[]): OffsetRanges {
  if (drop.length === 0) return offsets;
  const out: OffsetRanges = new Map();
  for (const [topic, parts] of offsets) {
    const kept = new Map(parts);
    for (const d of drop) if (d.topic === topic) kept.delete(d.partition);
    out.set(topic, kept);
  }
  return out;
}

const keyOf = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/**
 * Reads every record of `watermarks` the table does not hold: outside its committed ranges, or all a
 * partition has when its records contradict the table's marks (see the file comment). One read when
 * nothing contradicts them, a second for the partitions that do.
 * @throws as collectRanges (LakeError, retryable, when Kafka does not answer in time)
 */
export async function readUncommitted(
  kafka: KafkaConnection,
  state: Pick<CommittedState, 'offsets' | 'marks'>,
  watermarks: readonly PartitionWatermarks[],
  options: { timeoutMs?: number } = {},
): Promise<UncommittedRead> {
  const mismatches: IdentityMismatch[] = [];
  const probes = new Map<string, Probe>();
  for (const w of watermarks) {
    const marks = state.marks.get(w.topic)?.get(w.partition);
    if (marks === undefined || marks.length === 0) continue;
    const probe = probeOf(w, marks);
    if (typeof probe === 'string') mismatches.push({ topic: w.topic, partition: w.partition, reason: probe });
    else if (probe !== undefined)
      probes.set(keyOf(w.topic, w.partition), { topic: w.topic, partition: w.partition, mark: probe });
  }
  const planned = planHotRanges(withoutPartitions(state.offsets, mismatches), watermarks);
  const probeRanges = [...probes.values()].map((p) => ({
    topic: p.topic,
    partition: p.partition,
    from: p.mark.offset,
    toExclusive: p.mark.offset + 1n,
  }));
  const read = decode(await collectRanges(kafka, [...planned, ...probeRanges], options));
  const isProbe = (r: RawRecord) => probes.get(keyOf(r.topic, r.partition))?.mark.offset === r.offset;
  const found: IdentityMismatch[] = [];
  for (const r of read) {
    if (!isProbe(r)) continue;
    const mark = probes.get(keyOf(r.topic, r.partition))!.mark;
    const hash = recordHash(r);
    if (r.timestamp === mark.timestamp && hash === mark.hash) continue;
    found.push({
      topic: r.topic,
      partition: r.partition,
      reason: `offset ${mark.offset} holds timestamp ${r.timestamp}, hash ${hash}; the table committed timestamp ${mark.timestamp}, hash ${mark.hash}`,
    });
  }
  // A probed offset the broker did not return (compacted away, an aborted transaction's) says nothing.
  let records = read.filter((r) => !isProbe(r));
  let ranges = planned;
  if (found.length > 0) {
    const again = new Set(found.map((m) => keyOf(m.topic, m.partition)));
    ranges = planHotRanges(withoutPartitions(state.offsets, [...mismatches, ...found]), watermarks);
    const whole = ranges.filter((r) => again.has(keyOf(r.topic, r.partition)));
    const rest = records.filter((r) => !again.has(keyOf(r.topic, r.partition)));
    records = [...rest, ...decode(await collectRanges(kafka, whole, options))];
  }
  const order = new Map(watermarks.map((w, i) => [keyOf(w.topic, w.partition), i]));
  const rank = (t: { topic: string; partition: number }) => order.get(keyOf(t.topic, t.partition)) ?? 0;
  // Stable: each partition's records stay in offset order.
  records.sort((a, b) => rank(a) - rank(b));
  return { ranges, records, mismatches: [...mismatches, ...found].sort((a, b) => rank(a) - rank(b)) };
}

/** The mismatched partitions as summary text, `{"t":[0,2]}`. */
export function describeMismatches(mismatches: readonly IdentityMismatch[]): string {
  const out: Record<string, number[]> = {};
  for (const m of mismatches) {
    const parts = out[m.topic] ?? [];
    parts.push(m.partition);
    out[m.topic] = parts;
  }
  return JSON.stringify(out);
}
