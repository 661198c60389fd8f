/**
 * A batch's records against a table's committed offsets: the spans a batch commits, the records not
 * yet committed, offsets held twice in one batch, and whether a mapping still fits a new base.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { containsOffset, inRanges, type OffsetRange } from '../table/offset-ranges.js';
import type { SourceOffsets } from '../table/source-offsets.js';
import type { DeadLetter } from '../records/dead-letters.js';
import type { RawRecord } from '../records/esm-event.js';

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
  const spans = new Map<string, Map<number, [bigint, bigint]>>();
  // The span of the last record's topic-partition: a batch holds each one's records together.
  let last: [bigint, bigint] | undefined;
  let lastTopic = '';
  let lastPartition = -1;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const offset = r.offset;
    if (offset < 0n) continue;
    const topic = r.topic;
    const partition = r.partition;
    let span = last !== undefined && topic === lastTopic && partition === lastPartition ? last : undefined;
    if (span === undefined) {
      let parts = spans.get(topic);
      if (!parts) {
        parts = new Map<number, [bigint, bigint]>();
        spans.set(topic, parts);
      }
      span = parts.get(partition);
      if (!span) {
        span = [offset, offset];
        parts.set(partition, span);
      }
      last = span;
      lastTopic = topic;
      lastPartition = partition;
    }
    if (offset < span[0]) span[0] = offset;
    else if (offset > span[1]) span[1] = offset;
  }
  return new Map([...spans].map(([t, parts]) => [t, new Map([...parts].map(([p, span]) => [p, [span]]))]));
}

/** Whether a record's offset is in the committed ranges of its topic-partition. */
function isCommitted(r: RawRecord, committed: SourceOffsets): boolean {
  return r.offset >= 0n && containsOffset(committed, r.topic, r.partition, r.offset);
}

/** The records whose offsets are outside the committed ranges of their topic-partition. */
export function unseen(records: RawRecord[], committed: SourceOffsets): RawRecord[] {
  // A record whose offset could not be read (-1) always carries a decode error: it is never "seen"
  // by offsets, so it reaches the DLQ; a replay of the same batch is recognised by its batch id.
  let out: RawRecord[] | undefined;
  // The committed ranges of the last record's topic-partition (a batch holds its records together).
  let topic: string | undefined;
  let partition = -1;
  let ranges: readonly OffsetRange[] | undefined;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const offset = r.offset;
    if (offset >= 0n) {
      if (r.topic !== topic || r.partition !== partition) {
        topic = r.topic;
        partition = r.partition;
        ranges = committed.get(topic)?.get(partition);
      }
      if (inRanges(ranges, offset)) {
        // The first committed one: the records before it are all unseen.
        out ??= records.slice(0, i);
        continue;
      }
    }
    out?.push(r);
  }
  return out ?? records.slice();
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
  let offset = -1n;
  let started = false;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const o = r.offset;
    if (o < 0n) continue; // never a repeat (no offset)
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

export function overlaps(records: RawRecord[], committed: SourceOffsets): boolean {
  return records.some((r) => isCommitted(r, committed));
}
