/**
 * Whether the broker still holds the records the table committed. A topic deleted and recreated, a
 * cluster replaced or a failover to a mirror starts offsets again: the table's committed ranges then
 * name offsets whose records on the broker are other ones, and reading "outside the committed ranges"
 * would hide those records as if the table held them. For each partition whose committed ranges carry
 * marks (table/offset-marks.ts), one record is fetched — the last marked offset of the highest range
 * the broker still holds — and compared with its mark; a broker log shorter than a marked range's end
 * is a mismatch without a fetch. A partition without marks is trusted by its offsets, as before.
 */
import { type HotRange, type PartitionWatermarks, collectRanges } from '../kafka/read-range.js';
import type { KafkaConnection } from '../kafka/kafka-client.js';
import { type RangeMarks, type RecordMark, recordHash } from '../table/offset-marks.js';
import type { CommittedState } from '../table/source-offsets.js';
import { ESM_MAX_BATCH_SIZE, formEsmEvents } from '../kafka/esm-batch.js';
import { decodeEsmEvent } from '../records/esm-event.js';

/** A partition whose broker records are not those its committed ranges name, and why. */
export interface IdentityMismatch {
  topic: string;
  partition: number;
  reason: string;
}

/** The mark a partition is checked by, or a mismatch the watermarks already show. */
function probeOf(
  w: PartitionWatermarks,
  marks: readonly RangeMarks[],
): { mark: RecordMark } | { reason: string } | undefined {
  let probe: RecordMark | undefined;
  for (const m of marks) {
    if (m.last.offset >= w.high) {
      return { reason: `the broker's log ends at ${w.high}, the table committed up to ${m.last.offset}` };
    }
    // A range the broker's retention already dropped cannot be checked.
    if (m.last.offset >= w.low) probe = m.last;
  }
  return probe === undefined ? undefined : { mark: probe };
}

/**
 * The partitions of `watermarks` whose broker records contradict the table's marks (see the file
 * comment), in the order of `watermarks`.
 * @throws as collectRanges (LakeError, retryable, when Kafka does not answer in time)
 */
export async function checkIdentity(
  kafka: KafkaConnection,
  state: Pick<CommittedState, 'marks'>,
  watermarks: readonly PartitionWatermarks[],
  options: { timeoutMs?: number } = {},
): Promise<IdentityMismatch[]> {
  const out: IdentityMismatch[] = [];
  const probes: { w: PartitionWatermarks; mark: RecordMark }[] = [];
  for (const w of watermarks) {
    const marks = state.marks.get(w.topic)?.get(w.partition);
    if (marks === undefined || marks.length === 0) continue;
    const probe = probeOf(w, marks);
    if (probe === undefined) continue;
    if ('reason' in probe) out.push({ topic: w.topic, partition: w.partition, reason: probe.reason });
    else probes.push({ w, mark: probe.mark });
  }
  if (probes.length > 0) {
    const ranges: HotRange[] = probes.map(({ w, mark }) => ({
      topic: w.topic,
      partition: w.partition,
      from: mark.offset,
      toExclusive: mark.offset + 1n,
    }));
    const messages = await collectRanges(kafka, ranges, options);
    // Decoded as the ingest path decodes them, so a record hashes as it did when it was committed.
    const records = formEsmEvents('live', messages, { batchSize: ESM_MAX_BATCH_SIZE }).flatMap(
      (formed) => decodeEsmEvent(formed.event).records,
    );
    for (const { w, mark } of probes) {
      const r = records.find(
        (x) => x.topic === w.topic && x.partition === w.partition && x.offset === mark.offset,
      );
      // Absent: compacted away or an aborted transaction's offset; nothing says the history changed.
      if (r === undefined) continue;
      const hash = recordHash(r);
      if (r.timestamp === mark.timestamp && hash === mark.hash) continue;
      out.push({
        topic: w.topic,
        partition: w.partition,
        reason: `offset ${mark.offset} holds timestamp ${r.timestamp}, hash ${hash}; the table committed timestamp ${mark.timestamp}, hash ${mark.hash}`,
      });
    }
  }
  const order = (m: IdentityMismatch) =>
    watermarks.findIndex((w) => w.topic === m.topic && w.partition === m.partition);
  return out.sort((a, b) => order(a) - order(b));
}

/** The mismatched partitions as summary text, `{"t":[0,2]}`, stable. */
export function describeMismatches(mismatches: readonly IdentityMismatch[]): string {
  const out: Record<string, number[]> = {};
  for (const m of mismatches) {
    const parts = out[m.topic] ?? [];
    parts.push(m.partition);
    out[m.topic] = parts;
  }
  return JSON.stringify(out);
}
