/**
 * A table's rows as the records they came from, per source partition and offset range: the scan is
 * filtered on `_kafka.partition` and `_kafka.offset` so files outside the range are pruned by their
 * column statistics (the lower-bound ordering is replay/read-in-offset-order.ts's, which this folder
 * cannot import: replay imports kafka). A file's records of one partition are cached per (snapshot, file, partition) in
 * a bounded LRU: a consumer reading from the start walks the same files fetch after fetch.
 *
 * A record's value is its original bytes when the row kept them (`_kafka.value`, a route's `kafkaValue`),
 * else the row re-encoded (the value encoder: exact JSON). A null `_kafka.value` is a row written before
 * the table kept values (a record with a null value leaves no row: append routes dead-letter it, keyed
 * ones delete). With dead letters, the DLQ table's records of the same range are merged in at their
 * offsets; an offset both hold (a letter redriven into the table) is served from the table.
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import {
  KAFKA_FIELD,
  KAFKA_VALUE_FIELD,
  offsetFieldId,
  offsetLowerBound,
} from '../../records/kafka-lineage.js';
import { lineageOf } from '../../records/replay-records.js';
import type { Expression } from '../../scan/expression.js';
import { planScan } from '../../scan/plan-scan.js';
import { readScan } from '../../scan/read-scan.js';
import type { FileScanTask, ScanPlan } from '../../scan/scan-plan.js';
import { currentSchema, currentSnapshot } from '../../spec/metadata.js';
import type { Row } from '../../spec/types.js';
import type { DeadLetterRecords } from './dead-letter-records.js';
import type { ColdRecord } from './record-batches.js';

/** The cache holds at most this many records over all files (a few hundred MB for small rows). */
export const CACHED_RECORDS = 200_000;

export class TableRecords {
  private readonly cache = new Map<string, ColdRecord[]>();
  private cached = 0;

  /**
   * @param valueEncoder the record value of a table's row without `_kafka.value` (the row without `_kafka`, as JSON)
   * @param deadLetters where the table's dead letters are read from; without it, they are not served
   */
  constructor(
    private readonly valueEncoder: (table: LoadedTable) => (row: Row) => Buffer,
    private readonly maxCached = CACHED_RECORDS,
    private readonly deadLetters?: DeadLetterRecords,
  ) {}

  /**
   * Records of `topic`/`partition` with offsets in [from, to] at the table's current snapshot, in
   * offset order, each offset once. Files are read in the order of their `_kafka.offset` lower bounds
   * and reading stops once the records below the next file's bound reach `enoughBytes`: no unread
   * file can hold an offset below that bound, so what is returned has no holes. Dead letters up to
   * the same bound are merged in.
   * @throws ValidationError / TransientIOError / NotFoundError from planning and reading the scan
   */
  async read(
    table: LoadedTable,
    topic: string,
    partition: number,
    from: bigint,
    to: bigint,
    enoughBytes = Number.POSITIVE_INFINITY,
  ): Promise<ColdRecord[]> {
    const filter: Expression = {
      op: 'and',
      left: {
        op: 'and',
        left: { op: 'eq', term: `${KAFKA_FIELD}.topic`, value: topic },
        right: { op: 'eq', term: `${KAFKA_FIELD}.partition`, value: partition },
      },
      right: {
        op: 'and',
        left: { op: 'gt-eq', term: `${KAFKA_FIELD}.offset`, value: from },
        right: { op: 'lt-eq', term: `${KAFKA_FIELD}.offset`, value: to },
      },
    };
    const snapshot = currentSnapshot(table.metadata);
    if (!snapshot) return [];
    const plan = await planScan(table, { filter, snapshotId: snapshot['snapshot-id'] });
    const offsetId = offsetFieldId(currentSchema(table.metadata));
    const ordered = plan.tasks
      .map((task) => ({ task, lower: offsetLowerBound(task.file, offsetId) }))
      .sort((a, b) => (a.lower < b.lower ? -1 : a.lower > b.lower ? 1 : 0));
    let out: ColdRecord[] = [];
    let through = to;
    for (let i = 0; i < ordered.length; i++) {
      const records = await this.fileRecords(table, plan, ordered[i].task, topic, partition);
      for (const r of records) if (r.offset >= from && r.offset <= to) out.push(r);
      const next = ordered[i + 1]?.lower;
      if (next === undefined) break;
      const complete = out.filter((r) => r.offset < next);
      if (complete.reduce((n, r) => n + sizeOf(r), 0) >= enoughBytes) {
        out = complete;
        through = next - 1n;
        break;
      }
    }
    if (this.deadLetters)
      for (const letter of await this.deadLetters.read(table, topic, partition, from, through))
        out.push(letter);
    // Stable: of one offset, the table's row (pushed first) is kept and a redriven letter dropped.
    out.sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
    // A table holding one record twice (written by another engine) serves it once.
    return out.filter((r, i) => i === 0 || r.offset !== out[i - 1].offset);
  }

  private async fileRecords(
    table: LoadedTable,
    plan: ScanPlan,
    task: FileScanTask,
    topic: string,
    partition: number,
  ): Promise<ColdRecord[]> {
    // Deletes apply per snapshot, so the snapshot is part of the key, not just the file.
    const key = `${plan.snapshotId}\u0000${task.file.file_path}\u0000${topic}\u0000${partition}`;
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const filter: Expression = {
      op: 'and',
      left: { op: 'eq', term: `${KAFKA_FIELD}.topic`, value: topic },
      right: { op: 'eq', term: `${KAFKA_FIELD}.partition`, value: partition },
    };
    const records: ColdRecord[] = [];
    const encodeValue = this.valueEncoder(table);
    for await (const row of readScan(table, { ...plan, tasks: [task] }, { filter })) {
      records.push(toRecord(row, encodeValue));
    }
    this.cache.set(key, records);
    this.cached += records.length;
    for (const [k, v] of this.cache) {
      if (this.cached <= this.maxCached || k === key) break;
      this.cache.delete(k);
      this.cached -= v.length;
    }
    return records;
  }
}

function sizeOf(r: ColdRecord): number {
  return (r.key?.length ?? 0) + (r.value?.length ?? 0) + 16;
}

/** `_kafka.value`: the record's bytes as produced, when the table kept them. */
function originalValue(row: Row): Buffer | undefined {
  const value = (row[KAFKA_FIELD] as Row | null | undefined)?.[KAFKA_VALUE_FIELD];
  return value instanceof Uint8Array ? Buffer.from(value) : undefined;
}

function toRecord(row: Row, encodeValue: (row: Row) => Buffer): ColdRecord {
  const lineage = lineageOf(row);
  return {
    offset: lineage.offset,
    timestampMs: lineage.timestampMs === undefined ? -1n : BigInt(lineage.timestampMs),
    key: lineage.key === null ? null : Buffer.from(lineage.key),
    value: originalValue(row) ?? encodeValue(row),
    headers: lineage.headers.map((h) => ({
      key: h.key,
      value: h.value === null ? null : Buffer.from(h.value),
    })),
  };
}
