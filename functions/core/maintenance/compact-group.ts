/**
 * Compacts one rewrite group: reads the live rows of its files as of the run's starting snapshot (the
 * position and equality deletes live then are applied, none committed later: those keep applying to the
 * new files through their data sequence number), sorts them by the table's sort order, and writes them as
 * files of the target size in the same partition. Nothing is committed here; the DataFiles written go to
 * the group's result file for the commit step.
 *
 * The rows never become JS objects (compact-columns.ts): columns are read as Arrow, deletes masked,
 * the sort order applied as a permutation and the output gathered from the input columns. The row path
 * (readScanRows → sortRows → writeDataFiles) stays as the reference the columnar one is tested against.
 */
import { randomUUID } from 'node:crypto';
import type { LoadedTable } from '../catalog/catalog.js';
import { type WriteDataFilesOptions, writeDataFiles } from '../data/parquet/write/write-data-file.js';
import { ValidationError } from '../errors.js';
import { UnsupportedFeatureError } from '../spec/format-version.js';
import { joinLocation } from '../io/location.js';
import { planScan } from '../scan/plan-scan.js';
import { readScanRows } from '../scan/read-scan.js';
import { currentSchema, sortOrderById, specById } from '../spec/metadata.js';
import { partitionPath } from '../spec/transforms.js';
import type { DataFile } from '../spec/types.js';
import { compactColumns } from './compact-columns.js';
import { groupResultLocation, type RewritePlan, writeGroupResult } from './rewrite-run-files.js';
import { sortRows } from '../table/sort-rows.js';
import { readWriteProperties } from '../spec/table-properties.js';

export interface CompactGroupOptions {
  /**
   * Columnar compaction; false only to compare with the row path, which carries no row lineage and so
   * is refused on a format-version 3 table. @default true
   */
  columnar?: boolean;
}

export interface GroupOutcome {
  index: number;
  /** Whether the group's result file was written (not when every row of the group was deleted). */
  written: boolean;
  filesRemoved: number;
  bytesRemoved: number;
  recordsRemoved: number;
  filesAdded: number;
  bytesAdded: number;
  recordsWritten: number;
  /** Whether any delete applied to the group's files (the commit is then an `overwrite`). */
  deletesApplied: boolean;
}

/**
 * Rewrites group `index` of `plan`.
 * @throws ValidationError when the plan has no such group, or the starting snapshot no longer holds the
 *   group's files (it was expired, or the plan belongs to another table)
 * @throws UnsupportedFeatureError for the row path (`columnar: false`) on a format-version 3 table
 * @throws whatever reading and writing files throws (NotFoundError, TransientIOError, ...)
 */
export async function compactGroup(
  table: LoadedTable,
  plan: RewritePlan,
  index: number,
  options: CompactGroupOptions = {},
): Promise<GroupOutcome> {
  const group = plan.groups.find((g) => g.index === index);
  if (!group) throw new ValidationError(`the rewrite plan ${plan.runId} has no group ${index}`);
  const md = table.metadata;
  if (options.columnar === false && md['format-version'] >= 3) {
    throw new UnsupportedFeatureError(
      'the row path of compaction does not keep row lineage (_row_id): a format-version 3 table is compacted columnar',
    );
  }
  const scan = await planScan(table, { snapshotId: BigInt(plan.snapshotId) });
  const wanted = new Set(group.files);
  const tasks = scan.tasks.filter((t) => wanted.has(t.file.file_path));
  if (tasks.length !== wanted.size) {
    throw new ValidationError(
      `group ${index} of run ${plan.runId}: ${wanted.size - tasks.length} file(s) are not in snapshot ${plan.snapshotId}`,
    );
  }
  const schema = currentSchema(md);
  const order = sortOrderById(md, md['default-sort-order-id']);
  const spec = specById(md, group.specId);
  const partition = tasks[0].file.partition;
  const dir = joinLocation(
    md.location,
    'data',
    ...(spec.fields.length ? [partitionPath(spec, schema, partition)] : []),
  );
  const prefix = `rewrite-${plan.runId}-${index}-${randomUUID().slice(0, 8)}`;
  const sortOrderId = md['default-sort-order-id'];
  const written = readWriteProperties(md.properties);
  const opts: WriteDataFilesOptions = {
    io: table.io,
    schema,
    specId: spec['spec-id'],
    partition,
    nextLocation: (i) => joinLocation(dir, `${prefix}-${String(i).padStart(5, '0')}.parquet`),
    targetFileSizeBytes: plan.targetFileSizeBytes,
    codec: written.parquetCodec,
    pageRowLimit: written.pageRowLimit,
    ...(sortOrderId !== 0 ? { sortOrderId } : {}),
  };
  let files: DataFile[];
  let recordsWritten: number;
  if (options.columnar !== false) {
    ({ files, rows: recordsWritten } = await compactColumns(table, tasks, schema, order, opts));
  } else {
    const rows = sortRows(await readScanRows(table, { ...scan, tasks }), order, schema);
    files = await writeDataFiles(rows, opts);
    recordsWritten = rows.length;
  }
  if (files.length > 0) {
    await writeGroupResult(
      table.io,
      groupResultLocation(md.location, plan.runId, index),
      schema,
      spec,
      files,
    );
  }
  return {
    index,
    written: files.length > 0,
    filesRemoved: tasks.length,
    bytesRemoved: tasks.reduce((s, t) => s + Number(t.file.file_size_in_bytes), 0),
    recordsRemoved: tasks.reduce((s, t) => s + Number(t.file.record_count), 0),
    filesAdded: files.length,
    bytesAdded: files.reduce((s, f) => s + Number(f.file_size_in_bytes), 0),
    recordsWritten,
    deletesApplied: tasks.some((t) => t.deletes.length > 0),
  };
}
