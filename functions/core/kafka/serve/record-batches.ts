/**
 * Magic-v2 record batches built from table rows, with the records' original offsets: a batch's base
 * offset is its first row's offset and each record's offset delta the distance from it, so offsets a
 * table does not hold (dead letters, filtered records, compaction) are simply absent, as after log
 * compaction. Producer fields say "not idempotent, not transactional" (id -1, epoch -1, sequence -1).
 * The bytes are batch-encoder.ts's; headers keep their order, repeated and interleaved names included.
 */
import { type BatchRecord, encodeBatch } from './batch-encoder.js';

/** A record served from the table; its timestamp is -1 when the row has none (as Kafka writes for no timestamp). */
export interface ColdRecord extends BatchRecord {
  headers: { key: string; value: Buffer | null }[];
}

/** Records per batch at most: small enough that a partition's max bytes can cut between batches. */
export const MAX_BATCH_RECORDS = 200;
/** A batch stops growing past this many bytes of records (a single larger record still gets one). */
export const MAX_BATCH_BYTES = 64 * 1024;

/** One batch of records in offset order (at least one). @throws RangeError when offsets do not ascend */
export async function buildBatch(records: ColdRecord[]): Promise<Buffer> {
  const base = records[0].offset;
  const firstTimestamp = records[0].timestampMs;
  let maxTimestamp = firstTimestamp;
  let previous = base - 1n;
  for (const r of records) {
    if (r.offset <= previous) throw new RangeError(`offset ${r.offset} after ${previous}: not ascending`);
    previous = r.offset;
    if (r.timestampMs > maxTimestamp) maxTimestamp = r.timestampMs;
  }
  return encodeBatch(
    {
      baseOffset: base,
      baseTimestamp: firstTimestamp,
      maxTimestamp,
      // -1: no leader epoch, so a client never validates these offsets against the live log's epochs.
      partitionLeaderEpoch: -1,
      lastOffsetDelta: Number(previous - base),
      producerId: -1n,
      producerEpoch: -1,
      baseSequence: -1,
    },
    records,
  );
}

/** Splits records (offset order) into batches by MAX_BATCH_RECORDS and MAX_BATCH_BYTES. */
export function groupIntoBatches(records: ColdRecord[]): ColdRecord[][] {
  const groups: ColdRecord[][] = [];
  let current: ColdRecord[] = [];
  let bytes = 0;
  for (const r of records) {
    const size =
      (r.key?.length ?? 0) +
      (r.value?.length ?? 0) +
      r.headers.reduce((n, h) => n + h.key.length + (h.value?.length ?? 0), 0);
    if (current.length > 0 && (current.length >= MAX_BATCH_RECORDS || bytes + size > MAX_BATCH_BYTES)) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(r);
    bytes += size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}
