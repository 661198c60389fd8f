/**
 * A table's rows per source partition in `_kafka.offset` order, streamed by file groups instead of
 * read whole: data files are read in the order of their `_kafka.offset` lower bounds (manifest
 * column stats), and after each file every buffered row whose offset is below the next file's lower
 * bound is released — no file still unread can hold a smaller offset, in any partition.
 *
 * Memory bound: the rows (selected and not yet replayed) whose offset is at or above the lower bound
 * of the next unread file. Files written by floe cover one batch's offsets, so for partitions that
 * advance together this is a few files' rows; a partition far ahead of the others (or a file without
 * offset stats, which sorts first and holds nothing back) keeps its rows until the smaller offsets of
 * the others are read — at worst the whole selection.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { offsetFieldId, offsetLowerBound } from '../records/kafka-lineage.js';
import type { Expression } from '../scan/expression.js';
import { readScan } from '../scan/read-scan.js';
import type { FileScanTask, ScanPlan } from '../scan/scan-plan.js';
import { currentSchema } from '../spec/metadata.js';
import type { Row } from '../spec/types.js';
import { orderBySource, type SourcePartitionRows } from '../records/replay-records.js';
import type { SourcePosition } from '../records/replay-source.js';

/** The plan's tasks in the order of their offset lower bounds, each with the bound. */
export function orderTasks(
  plan: ScanPlan,
  fieldId: number | undefined,
): { task: FileScanTask; lower: bigint }[] {
  return plan.tasks
    .map((task) => ({ task, lower: offsetLowerBound(task.file, fieldId) }))
    .sort((a, b) => (a.lower < b.lower ? -1 : a.lower > b.lower ? 1 : 0));
}

/**
 * Holds rows and releases, per source partition in offset order, those below a threshold. Pure: the
 * reader feeds it file by file.
 */
export class OffsetOrderBuffer<T extends { lineage: SourcePosition }> {
  private held: T[] = [];

  get size(): number {
    return this.held.length;
  }

  add(item: T): void {
    this.held.push(item);
  }

  /** Rows with offset below `threshold` (all with undefined), grouped and ordered. */
  release(threshold?: bigint): SourcePartitionRows<T>[] {
    const out: T[] = [];
    const keep: T[] = [];
    for (const item of this.held) {
      if (threshold === undefined || item.lineage.offset < threshold) out.push(item);
      else keep.push(item);
    }
    this.held = keep;
    return orderBySource(out);
  }
}

/**
 * Streams the plan's rows as released groups; `select` maps a row to what is kept (undefined drops it,
 * e.g. already replayed), so dropped rows never occupy memory.
 * @throws as readScan
 */
export async function* readInOffsetOrder<T extends { lineage: SourcePosition }>(
  table: LoadedTable,
  plan: ScanPlan,
  filter: Expression | undefined,
  select: (row: Row) => T | undefined,
): AsyncGenerator<SourcePartitionRows<T>[]> {
  const ordered = orderTasks(plan, offsetFieldId(currentSchema(table.metadata)));
  const buffer = new OffsetOrderBuffer<T>();
  for (let i = 0; i < ordered.length; i++) {
    for await (const row of readScan(table, { ...plan, tasks: [ordered[i].task] }, { filter })) {
      const item = select(row);
      if (item !== undefined) buffer.add(item);
    }
    const released = buffer.release(ordered[i + 1]?.lower);
    if (released.length > 0) yield released;
  }
}
