/**
 * The live rows of a planned scan left as Arrow batches: the same files, filter and deletes as
 * readScan, but no row objects, for readers that take a few columns straight from the batches
 * (kafka-serve builds record batches from `_kafka`'s columns). Row objects are built only where a
 * delete or the filter needs them: the key columns of a task with equality deletes, the filter's
 * columns on a read that did not apply it exactly.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { batchRows, type DataBatch } from '../data/parquet/read/data-batch.js';
import type { StructType } from '../spec/types.js';
import { evaluateRow } from './evaluate-row.js';
import { pruneStruct } from './read-columns.js';
import { type ReadScanOptions, scanRead, taskDeletesOf } from './read-scan.js';
import { readTaskBatches } from './read-task-rows.js';
import type { FileScanTask, ScanPlan } from './scan-plan.js';

/** Some live rows of a task, as one batch and which of its rows are live. */
export interface LiveBatch {
  task: FileScanTask;
  /**
   * The struct the batch was read with: the projection's fields first (`projected` of them; a v3
   * `unknown` field is left out, so it reads as absent), then the columns the filter and the deletes
   * needed.
   */
  struct: StructType;
  projected: number;
  batch: DataBatch;
  /** The live rows of the batch, ascending, in file order. */
  rows: Int32Array;
}

/**
 * Streams the live rows of a plan as batches, task by task, in file order (readScan's rows, the same
 * ones in the same order, not yet turned into objects).
 * @throws as readScan
 */
export async function* readScanBatches(
  table: LoadedTable,
  plan: ScanPlan,
  options: ReadScanOptions = {},
): AsyncGenerator<LiveBatch> {
  const { projection, filter, readStruct: struct } = scanRead(table, plan, options);
  const deletesOf = taskDeletesOf(table, struct);
  const projected = projection.fields.length;
  for (const task of plan.tasks) {
    const { parts, positions, filtered } = await readTaskBatches(
      table.io,
      task.file.file_path,
      struct,
      filter,
      options.pruneInFiles !== false,
      Number(task.file.file_size_in_bytes),
    );
    const deletes = await deletesOf(task);
    const keyStruct =
      deletes.equalityIds.length > 0 ? pruneStruct(struct, new Set(deletes.equalityIds)) : undefined;
    const residual = filter && !filtered ? filter : undefined;
    let at = 0; // the kept row's index over the task's parts (positions are listed that way)
    for (const { batch, rows } of parts) {
      const n = rows ? rows.length : batch.length;
      const keyRows = keyStruct && batchRows(keyStruct, batch, rows);
      const filterRows = residual && batchRows(struct, batch, rows);
      const live = new Int32Array(n);
      let k = 0;
      for (let j = 0; j < n; j++, at++) {
        if (deletes.positions.has(positions === undefined ? at : positions[at])) continue;
        if (keyRows && deletes.equalityDeleted(keyRows[j])) continue;
        if (residual && filterRows && !evaluateRow(residual, filterRows[j])) continue;
        live[k++] = rows ? rows[j] : j;
      }
      if (k > 0) yield { task, struct, projected, batch, rows: live.subarray(0, k) };
    }
  }
}
