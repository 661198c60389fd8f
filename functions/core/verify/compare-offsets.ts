/**
 * The offsets the live rows hold against the offsets the table committed (`floe.committed-offsets`,
 * their marks, and the dead-letter table's letters). The rules, and why they are sound, are in
 * functions/core/verify/README.md ("Offsets"); in short:
 *
 * - an offset held by two live rows is a finding (a record applied twice), in every kind of table;
 * - a live row at an offset outside the committed ranges is a finding (the table does not know it
 *   holds the record, so a redelivery writes it again);
 * - committed offsets past the last record their range's marks name are a finding: a batch commits
 *   the span of its records and marks its last one, so nothing past that mark was ever delivered;
 * - any other offset in a committed range with no live row and no dead letter is a hole. In an append
 *   table it is a finding unless `allowHoles` (topics with transactions, compaction, or routes whose
 *   `when` sends records elsewhere, where the source itself has holes); in a keyed table replaced and
 *   deleted versions leave holes by design, and a dead-letter table holds only the failed records of
 *   ranges it shares with its table: there holes are counted in a note.
 *
 * Topic-partitions that were rebased (`floe rebase-offsets`) hold rows of several offset epochs whose
 * offsets may repeat; rows do not say their epoch, so those partitions are left out, with a note.
 */
import { formatIdentifier } from '../catalog/catalog.js';
import { marksByRange } from '../table/offset-marks.js';
import type { OffsetRange } from '../table/offset-ranges.js';
import type { CommittedState } from '../table/source-offsets.js';
import type { TableIdentifier } from '../spec/types.js';
import type { FindingList } from './findings.js';
import type { OffsetTally } from './offset-tally.js';
import { countOffsets, describeRanges, subtractRanges } from './range-set.js';

/** How holes are judged: see the file comment. */
export type TableKind = 'append' | 'keyed' | 'dead-letters';

export interface CompareOffsetsInput {
  table: TableIdentifier;
  kind: TableKind;
  committed: CommittedState;
  /** The live rows' offsets. */
  rows: OffsetTally;
  /** The offsets of this table's dead letters (undefined: the table has no dead-letter table). */
  deadLetters?: OffsetTally;
  allowHoles: boolean;
}

function topicPartitions(input: CompareOffsetsInput): [string, number][] {
  const keys = new Map<string, [string, number]>();
  for (const source of [input.committed.offsets, input.rows.partitions]) {
    for (const [topic, parts] of source) {
      for (const partition of parts.keys()) keys.set(`${topic}\u0000${partition}`, [topic, partition]);
    }
  }
  return [...keys.values()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
}

/** The part of each committed range past its last marked record (ranges without marks: none). */
function pastLastMarks(committed: CommittedState, topic: string, ranges: readonly OffsetRange[], p: number) {
  const marks = marksByRange(ranges, committed.marks.get(topic)?.get(p));
  const tails: OffsetRange[] = [];
  ranges.forEach(([, last], k) => {
    const mark = marks[k];
    if (mark !== undefined && mark.last.offset < last) tails.push([mark.last.offset + 1n, last]);
  });
  return tails;
}

/**
 * Compares, per topic-partition, and adds findings and notes. Never throws.
 */
export function compareOffsets(input: CompareOffsetsInput, findings: FindingList, notes: string[]): void {
  const { committed, rows, kind } = input;
  const name = formatIdentifier(input.table);
  let noteHoles = 0n;
  let noteHoleRanges = 0;
  const rebased: string[] = [];
  for (const [topic, p] of topicPartitions(input)) {
    const where = `${topic}/${p}`;
    if ((committed.epochs.get(topic)?.get(p)?.length ?? 0) > 0) {
      rebased.push(where);
      continue;
    }
    const tally = rows.partitions.get(topic)?.get(p);
    if (tally !== undefined && tally.repeated.size > 0) {
      const repeated = tally.repeated.toRanges();
      findings.add({
        check: 'duplicate-offset',
        what: `${countOffsets(repeated)} offset(s) held by more than one live row of ${name} (${tally.extraRows} extra row(s))`,
        where: `${where} offsets ${describeRanges(repeated)}`,
        count: tally.extraRows,
      });
    }
    const held = tally?.held.toRanges() ?? [];
    const ranges = committed.offsets.get(topic)?.get(p) ?? [];
    const outside = subtractRanges(held, ranges);
    if (outside.length > 0) {
      findings.add({
        check: 'uncommitted-row',
        what: `live rows at offsets the table's committed ranges do not hold (a redelivery would write them again)`,
        where: `${where} offsets ${describeRanges(outside)}`,
        count: countOffsets(outside),
      });
    }
    if (kind === 'dead-letters') continue;
    let holes = subtractRanges(ranges, held);
    const letters = input.deadLetters?.heldRanges(topic, p) ?? [];
    if (letters.length > 0) holes = subtractRanges(holes, letters);
    const tails = pastLastMarks(committed, topic, ranges, p);
    const uncovered = tails.length === 0 ? [] : subtractRanges(holes, subtractRanges(holes, tails));
    if (uncovered.length > 0) {
      findings.add({
        check: 'uncovered-range',
        what: 'committed offsets past the last record their batch marked: no batch delivered them (a widened range)',
        where: `${where} offsets ${describeRanges(uncovered)}`,
        count: countOffsets(uncovered),
      });
      holes = subtractRanges(holes, uncovered);
    }
    if (holes.length === 0) continue;
    if (kind === 'append' && !input.allowHoles) {
      findings.add({
        check: 'missing-offsets',
        what: 'committed offsets with no live row and no dead letter (rows lost, or the topic has transaction markers, compaction or records routed elsewhere: --allow-holes)',
        where: `${where} offsets ${describeRanges(holes)}`,
        count: countOffsets(holes),
      });
    } else {
      noteHoles += countOffsets(holes);
      noteHoleRanges += holes.length;
    }
  }
  if (noteHoles > 0n) {
    const why =
      kind === 'keyed'
        ? 'replaced or deleted versions, tombstones'
        : kind === 'append'
          ? '--allow-holes: transaction markers, compacted or filtered records'
          : 'offsets of records that did not fail';
    notes.push(
      `${noteHoles} committed offset(s) in ${noteHoleRanges} gap(s) hold no live row (${why}): not findings`,
    );
  }
  if (rebased.length > 0) {
    notes.push(
      `rebased topic-partitions (rows of several offset epochs, whose offsets may repeat) not checked by offset: ${rebased.join(', ')}`,
    );
  }
  if (rows.rowsWithoutLineage > 0n) {
    notes.push(`${rows.rowsWithoutLineage} live row(s) without _kafka lineage: not checked by offset`);
  }
}
