/**
 * A table's rows as the records they came from, per source partition and offset range: the scan is
 * filtered on `_kafka.partition` and `_kafka.offset` so files outside the range are pruned by their
 * column statistics (the lower-bound ordering is replay/read-in-offset-order.ts's, which this folder
 * cannot import: replay imports kafka), and the same filter prunes row groups and pages inside each
 * file. The rows stay Arrow batches (read-scan-batches.ts) and records are taken from their `_kafka`
 * columns (cold-records.ts). Nothing is cached here: cold-batches.ts keeps the encoded batches, which are
 * what fetches reuse.
 *
 * A record's value is its original bytes when the row kept them (`_kafka.value`, a route's `kafkaValue`),
 * else the row's value columns re-encoded (the value encoder: exact JSON). A null `_kafka.value` is a row written before
 * the table kept values (a record with a null value leaves no row: append routes dead-letter it, keyed
 * ones delete). With dead letters, the DLQ table's records of a range are merged in at their offsets
 * (withLetters); an offset both hold (a letter redriven into the table) is served from the table.
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import { loadDecoders } from '../../data/parquet/read/read-data-file.js';
import { KAFKA_FIELD, offsetFieldId, offsetLowerBound } from '../../records/kafka-lineage.js';
import type { Expression } from '../../scan/expression.js';
import { planScan } from '../../scan/plan-scan.js';
import { readScanBatches } from '../../scan/read-scan-batches.js';
import type { FileScanTask, ScanPlan } from '../../scan/scan-plan.js';
import { currentSchema, currentSnapshot } from '../../spec/metadata.js';
import { decodeValue } from '../../spec/conversions.js';
import type { DataFile } from '../../spec/types.js';
import { appendColdRecords, type ValueEncoder } from './cold-records.js';
import type { DeadLetterRecords } from './dead-letter-records.js';
import type { ColdRecord } from './record-batches.js';

/** A data file of a plan with the `_kafka.offset` bounds its statistics give (0 / none when absent). */
export interface OffsetTask {
  task: FileScanTask;
  lower: bigint;
  /** undefined when the file has no upper bound: it may hold any offset from `lower` on. */
  upper: bigint | undefined;
}

/** The files a read of a partition's offsets [from, to] opens, in the order of their lower bounds. */
export interface OffsetPlan {
  plan: ScanPlan;
  files: OffsetTask[];
}

export class TableRecords {
  /**
   * @param valueEncoder the record value of a table's row without `_kafka.value`, given the row's value
   *   columns (every column but `_kafka`) and its `_kafka.schema_id` (value-encoding.ts: the frame that
   *   registry schema gives, else JSON); a promise while a schema is fetched
   * @param deadLetters where the table's dead letters are read from; without it, they are not served
   */
  constructor(
    private readonly valueEncoder: (table: LoadedTable) => ValueEncoder,
    private readonly deadLetters?: DeadLetterRecords,
  ) {}

  /**
   * Loads the Parquet decoders, so that the first fetch does not wait while they compile.
   * @throws Error when parquet-wasm cannot be loaded (an installation fault)
   */
  async prepare(): Promise<void> {
    await loadDecoders();
  }

  /**
   * The dead letters of `topic`/`partition` in [from, to], in offset order (none without a DLQ reader).
   * @throws ValidationError / TransientIOError from loading, planning and reading the DLQ table
   */
  async letters(
    table: LoadedTable,
    topic: string,
    partition: number,
    from: bigint,
    to: bigint,
  ): Promise<ColdRecord[]> {
    return this.deadLetters ? this.deadLetters.read(table, topic, partition, from, to) : [];
  }

  /**
   * The files that may hold offsets [from, to] of `topic`/`partition` at the table's current snapshot,
   * pruned by their `_kafka` statistics; undefined when the table has no snapshot. `filter` narrows
   * the range filter further (a time lookup adds `_kafka.timestamp`).
   * @throws ValidationError / TransientIOError / NotFoundError from planning the scan
   */
  async plan(
    table: LoadedTable,
    topic: string,
    partition: number,
    from: bigint,
    to: bigint,
    filter: Expression = rangeFilter(topic, partition, from, to),
  ): Promise<OffsetPlan | undefined> {
    const snapshot = currentSnapshot(table.metadata);
    if (!snapshot) return undefined;
    const plan = await planScan(table, {
      filter,
      snapshotId: snapshot['snapshot-id'],
    });
    const offsetId = offsetFieldId(currentSchema(table.metadata));
    const files = plan.tasks
      .map((task) => ({
        task,
        lower: offsetLowerBound(task.file, offsetId),
        upper: offsetUpperBound(task.file, offsetId),
      }))
      .sort((a, b) => (a.lower < b.lower ? -1 : a.lower > b.lower ? 1 : 0));
    return { plan, files };
  }

  /**
   * Records of `topic`/`partition` with offsets in [from, to] in `files`, in offset order, each offset
   * once. Only the row groups and pages whose statistics may hold the range are read.
   * @throws ValidationError / TransientIOError / NotFoundError from reading the files
   */
  async readFiles(
    table: LoadedTable,
    plan: ScanPlan,
    files: readonly OffsetTask[],
    topic: string,
    partition: number,
    from: bigint,
    to: bigint,
  ): Promise<ColdRecord[]> {
    const out: ColdRecord[] = [];
    if (files.length === 0) return out;
    const encodeValue = this.valueEncoder(table);
    const tasks = files.map((f) => f.task);
    const filter = rangeFilter(topic, partition, from, to);
    for await (const live of readScanBatches(table, { ...plan, tasks }, { filter }))
      await appendColdRecords(live, encodeValue, out);
    out.sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
    // A table holding one record twice (written by another engine) serves it once.
    return out.filter((r, i) => i === 0 || r.offset !== out[i - 1].offset);
  }

  /**
   * Records of `topic`/`partition` with offsets in [from, to] at the table's current snapshot, in
   * offset order, each offset once. Files are read in the order of their `_kafka.offset` lower bounds
   * and reading stops once the records below the next file's bound reach `enoughBytes`: no unread
   * file can hold an offset below that bound, so what is returned has no holes.
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
    const planned = await this.plan(table, topic, partition, from, to);
    if (!planned) return this.letters(table, topic, partition, from, to);
    const { plan, files } = planned;
    let out: ColdRecord[] = [];
    let through = to;
    for (let i = 0; i < files.length; i++) {
      const next = files[i + 1]?.lower;
      out = out.concat(await this.readFiles(table, plan, [files[i]], topic, partition, from, to));
      if (next === undefined) break;
      const complete = out.filter((r) => r.offset < next);
      if (complete.reduce((n, r) => n + sizeOf(r), 0) >= enoughBytes) {
        out = complete;
        through = next - 1n;
        break;
      }
    }
    return withLetters(out, await this.letters(table, topic, partition, from, through));
  }
}

/**
 * The table's records and the dead letters of the same range as one offset-ordered list, each offset
 * once: of one offset, the table's record (listed first; the sort is stable) is kept and a redriven
 * letter dropped; a table holding one record twice (written by another engine) serves it once.
 */
export function withLetters(records: readonly ColdRecord[], letters: readonly ColdRecord[]): ColdRecord[] {
  const out = [...records, ...letters];
  out.sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
  return out.filter((r, i) => i === 0 || r.offset !== out[i - 1].offset);
}

/**
 * `topic = topic AND partition = partition AND from <= offset <= to` over the columns under `prefix`:
 * `_kafka.` for a table's rows, none for the DLQ table's (dead-letter-records.ts).
 */
export function rangeFilter(
  topic: string,
  partition: number,
  from: bigint,
  to: bigint,
  prefix = `${KAFKA_FIELD}.`,
): Expression {
  return {
    op: 'and',
    left: {
      op: 'and',
      left: { op: 'eq', term: `${prefix}topic`, value: topic },
      right: { op: 'eq', term: `${prefix}partition`, value: partition },
    },
    right: {
      op: 'and',
      left: { op: 'gt-eq', term: `${prefix}offset`, value: from },
      right: { op: 'lt-eq', term: `${prefix}offset`, value: to },
    },
  };
}

/** A data file's highest `_kafka.offset`, or undefined without the statistic. Never throws. */
function offsetUpperBound(file: DataFile, fieldId: number | undefined): bigint | undefined {
  const bytes = fieldId === undefined ? undefined : file.upper_bounds?.get(fieldId);
  if (!bytes) return undefined;
  try {
    return BigInt(decodeValue('long', bytes) as bigint);
  } catch {
    return undefined;
  }
}

function sizeOf(r: ColdRecord): number {
  return (r.key?.length ?? 0) + (r.value?.length ?? 0) + 16;
}
