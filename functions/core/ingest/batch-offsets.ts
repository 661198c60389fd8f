/**
 * A batch's records and offsets: the spans a batch commits, offsets held twice in one batch, and whether
 * a mapping still fits a new base. Which records are new is classify-batch.ts's to decide.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import type { SourceOffsets } from '../table/source-offsets.js';
import type { DeadLetter } from '../records/dead-letters.js';
import type { RawRecord } from '../records/esm-event.js';
import { offsetNumber } from '../records/record-columns.js';

/**
 * The lowest and highest offset of the records added, kept as doubles while they are exact (a
 * decoded batch's always are: no BigInt a record), as BigInts past that. Read once one was added.
 */
export class OffsetSpan {
  private low = Number.POSITIVE_INFINITY;
  private high = Number.NEGATIVE_INFINITY;
  private lowBig: bigint | undefined = undefined;
  private highBig: bigint | undefined = undefined;

  /** Adds a record whose offsetNumber is `n`. */
  add(n: number, record: RawRecord): void {
    if (Number.isNaN(n)) {
      const offset = record.offset;
      if (this.lowBig === undefined || offset < this.lowBig) this.lowBig = offset;
      if (this.highBig === undefined || offset > this.highBig) this.highBig = offset;
      return;
    }
    if (n < this.low) this.low = n;
    if (n > this.high) this.high = n;
  }

  get first(): bigint {
    const low = this.low === Number.POSITIVE_INFINITY ? undefined : BigInt(this.low);
    if (low === undefined) return this.lowBig as bigint;
    return this.lowBig !== undefined && this.lowBig < low ? this.lowBig : low;
  }

  get last(): bigint {
    const high = this.high === Number.NEGATIVE_INFINITY ? undefined : BigInt(this.high);
    if (high === undefined) return this.highBig as bigint;
    return this.highBig !== undefined && this.highBig > high ? this.highBig : high;
  }
}

/** Whether a record's offset (its offsetNumber `n`) is below 0: one that could not be read. */
export function unread(n: number, record: RawRecord): boolean {
  return Number.isNaN(n) ? record.offset < 0n : n < 0;
}

/**
 * The offsets a batch commits: per topic-partition, the span from its first to its last offset.
 * The span, not only the offsets the records hold: inside one delivered batch the consumer skipped
 * the missing offsets (transaction markers, aborted or compacted records), so no other batch can hold
 * them, and leaving them out would split the ranges at every marker. The span never covers another
 * batch's records: a consumer delivers a partition's records in order, so everything deliverable
 * between the first and the last offset is in this batch (the ESM, `floe run`, and the on-failure
 * records of a failed batch, which are that batch whole). Offsets that could not be read (-1) commit nothing.
 */
export function offsetsOf(records: readonly RawRecord[]): SourceOffsets {
  const spans = new Map<string, Map<number, OffsetSpan>>();
  // The span of the last record's topic-partition: a batch holds each one's records together.
  let last: OffsetSpan | undefined;
  let lastTopic = '';
  let lastPartition = -1;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const n = offsetNumber(r);
    if (unread(n, r)) continue;
    const topic = r.topic;
    const partition = r.partition;
    let span = last !== undefined && topic === lastTopic && partition === lastPartition ? last : undefined;
    if (span === undefined) {
      let parts = spans.get(topic);
      if (!parts) {
        parts = new Map<number, OffsetSpan>();
        spans.set(topic, parts);
      }
      span = parts.get(partition);
      if (!span) {
        span = new OffsetSpan();
        parts.set(partition, span);
      }
      last = span;
      lastTopic = topic;
      lastPartition = partition;
    }
    span.add(n, r);
  }
  return new Map(
    [...spans].map(([t, parts]) => [
      t,
      new Map([...parts].map(([p, span]) => [p, [[span.first, span.last]]])),
    ]),
  );
}

/**
 * Splits off the records that repeat an offset already held earlier in the batch (same topic,
 * partition and offset: a hand-made or concatenated event). The first occurrence is the record;
 * each later one becomes a dead letter saying so, so nothing is dropped silently and the offset
 * is written once.
 */
export function splitDuplicates(records: RawRecord[]): { unique: RawRecord[]; duplicates: DeadLetter[] } {
  return holdsNoRepeat(records) ? { unique: records, duplicates: [] } : splitDuplicatesByKey(records);
}

/** splitDuplicates record by record, a key each (the order check aside: what it falls back to). */
export function splitDuplicatesByKey(records: RawRecord[]): {
  unique: RawRecord[];
  duplicates: DeadLetter[];
} {
  const seen = new Set<string>();
  const unique: RawRecord[] = [];
  const duplicates: DeadLetter[] = [];
  for (const r of records) {
    const key = `${r.topic}\u0000${r.partition}\u0000${r.offset}`;
    if (r.offset < 0n || !seen.has(key)) {
      seen.add(key);
      unique.push(r);
    } else {
      duplicates.push({
        record: r,
        stage: 'duplicate',
        error: `offset ${r.offset} of ${r.topic}/${r.partition} is held twice in the batch; the first is kept`,
      });
    }
  }
  return { unique, duplicates };
}

/**
 * Whether no offset can repeat, checked without a key per record: each topic-partition's records
 * come together with rising offsets (as a decoded ESM event holds them). False also when that order
 * does not hold, which may still have no repeat (splitDuplicates then looks record by record).
 */
function holdsNoRepeat(records: readonly RawRecord[]): boolean {
  const groups = new Set<string>();
  let topic = '';
  let partition = -1;
  let offset = -1;
  let started = false;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const o = offsetNumber(r);
    if (Number.isNaN(o)) return false; // past 2^53: splitDuplicates looks record by record
    if (o < 0) continue; // never a repeat (no offset)
    const t = r.topic;
    const p = r.partition;
    if (started && t === topic && p === partition) {
      if (o <= offset) return false;
    } else {
      const group = `${t}\u0000${p}`;
      if (groups.has(group)) return false;
      groups.add(group);
      topic = t;
      partition = p;
      started = true;
    }
    offset = o;
  }
  return true;
}

/**
 * Whether what a batch was mapped for still holds in a commit round: the same records are unseen
 * and the schema is the one they were reconciled with (else the round maps them again).
 */
export function sameMappingBase(
  current: LoadedTable,
  mappedFor: LoadedTable,
  unseenRecords: readonly RawRecord[],
  fresh: readonly RawRecord[],
): boolean {
  return (
    unseenRecords.length === fresh.length &&
    current.metadata['current-schema-id'] === mappedFor.metadata['current-schema-id'] &&
    current.metadata['last-column-id'] === mappedFor.metadata['last-column-id']
  );
}

export { overlaps, unseen } from './classify-batch.js';
