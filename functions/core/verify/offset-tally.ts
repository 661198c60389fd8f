/**
 * The offsets the live rows of a table hold, per topic-partition: a RangeSet of the offsets seen and
 * one of those seen more than once (with how many extra rows), read from a stream of rows. Memory: two
 * range lists per topic-partition, so it grows with gaps and duplicates, not with rows, and a batch of
 * at most PENDING_AT_MOST offsets per topic-partition not merged yet.
 */
import type { Row, Value } from '../spec/types.js';
import { readPath } from '../scan/read-columns.js';
import { RangeSet } from './range-set.js';

/** Offsets a partition's tally gathers before merging them into its ranges (8 bytes each, and a sort). */
const PENDING_AT_MOST = 65_536;

/**
 * One topic-partition's tally. Offsets are gathered and merged in sorted batches: added one by one
 * into the ranges, offsets that arrive interleaved (a hash-partitioned table's files each hold every
 * n-th offset) cost a splice each, quadratic in the rows.
 */
export class PartitionTally {
  private readonly heldSet = new RangeSet();
  private readonly repeatedSet = new RangeSet();
  private extra = 0n;
  private pending: bigint[] = [];

  /** Offsets held by at least one live row. */
  get held(): RangeSet {
    this.flush();
    return this.heldSet;
  }

  /** Offsets held by more than one live row. */
  get repeated(): RangeSet {
    this.flush();
    return this.repeatedSet;
  }

  /** Rows beyond the first at a repeated offset. */
  get extraRows(): bigint {
    this.flush();
    return this.extra;
  }

  add(offset: bigint): void {
    this.pending.push(offset);
    if (this.pending.length >= PENDING_AT_MOST) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const sorted = this.pending.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    this.pending = [];
    const repeats: bigint[] = [];
    this.heldSet.addSorted(sorted, (offset) => repeats.push(offset));
    this.extra += BigInt(repeats.length);
    this.repeatedSet.addSorted(repeats, () => {});
  }
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
      tally = new PartitionTally();
      parts.set(partition, tally);
    }
    tally.add(offset);
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
