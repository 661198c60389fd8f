/**
 * The offsets the live rows of a table hold, per topic-partition: a RangeSet of the offsets seen and
 * one of those seen more than once (with how many extra rows), read from a stream of rows. Memory: two
 * range lists per topic-partition, so it grows with gaps and duplicates, not with rows.
 */
import type { Row, Value } from '../spec/types.js';
import { readPath } from '../scan/read-columns.js';
import { RangeSet } from './range-set.js';

/** One topic-partition's tally. */
export interface PartitionTally {
  held: RangeSet;
  /** Offsets held by more than one live row. */
  repeated: RangeSet;
  /** Rows beyond the first at a repeated offset. */
  extraRows: bigint;
}

/** Where the lineage columns sit in a read row. */
export interface LineagePaths {
  topic: readonly string[];
  partition: readonly string[];
  offset: readonly string[];
}

export class OffsetTally {
  readonly partitions = new Map<string, Map<number, PartitionTally>>();
  rows = 0n;
  /** Rows whose lineage is null or incomplete (written before the table had `_kafka`). */
  rowsWithoutLineage = 0n;

  constructor(private readonly paths: LineagePaths) {}

  /** Counts one row. Never throws. */
  addRow(row: Row): void {
    this.rows++;
    const topic = readPath(row, this.paths.topic);
    const partition = readPath(row, this.paths.partition);
    const offset = toOffset(readPath(row, this.paths.offset));
    if (typeof topic !== 'string' || typeof partition !== 'number' || offset === undefined) {
      this.rowsWithoutLineage++;
      return;
    }
    this.add(topic, partition, offset);
  }

  /** Counts one offset. Never throws. */
  add(topic: string, partition: number, offset: bigint): void {
    let parts = this.partitions.get(topic);
    if (parts === undefined) {
      parts = new Map();
      this.partitions.set(topic, parts);
    }
    let tally = parts.get(partition);
    if (tally === undefined) {
      tally = { held: new RangeSet(), repeated: new RangeSet(), extraRows: 0n };
      parts.set(partition, tally);
    }
    if (!tally.held.add(offset)) {
      tally.repeated.add(offset);
      tally.extraRows++;
    }
  }

  /** The ranges a topic-partition's rows hold (empty when none). Never throws. */
  heldRanges(topic: string, partition: number) {
    return this.partitions.get(topic)?.get(partition)?.held.toRanges() ?? [];
  }
}

function toOffset(value: Value): bigint | undefined {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  return undefined;
}
