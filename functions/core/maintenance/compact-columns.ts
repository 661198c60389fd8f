/**
 * The columnar compaction of one group: each file's columns are read as Arrow and projected onto the
 * table's current schema (read-arrow-columns.ts), the rows its deletes remove are masked out
 * (delete-mask.ts), the rows kept are ordered by the sort order (sort-permutation.ts), and every output
 * file's batch is gathered from the input columns (arrow-take.ts) and written by floe's writer through
 * writeBatchSourceFiles — no row object exists. Only the group's decoded columns are held, plus the
 * batch of the file being written.
 */
import type * as arrow from 'apache-arrow';
import type { LoadedTable } from '../catalog/catalog.js';
import { RunBuilder, runsOf, takeData } from '../data/arrow/arrow-take.js';
import { collectBatchStats } from '../data/arrow/arrow-stats.js';
import { recordBatchOf } from '../data/arrow/nested-data.js';
import { type ArrowFile, projectFile, readArrowFile } from '../data/parquet/read/read-arrow-columns.js';
import type { RecordBatchSource } from '../data/arrow/record-batch-source.js';
import { type WriteDataFilesOptions, writeBatchSourceFiles } from '../data/parquet/write/write-data-file.js';
import type { FileScanTask } from '../scan/scan-plan.js';
import type { DataFile, Schema, SortOrder } from '../spec/types.js';
import { DeleteMasks } from './delete-mask.js';
import { fillLineage, withLineageFields } from './lineage-columns.js';
import { type GroupRows, sortGroupRows } from './sort-permutation.js';

/**
 * Reads the live rows of `tasks` (deletes applied), sorts them by `order` and writes them as `opts`
 * says; returns the files written and the rows they hold. A format-version 3 table's rows keep their
 * row lineage: the files are written with `_row_id` and `_last_updated_sequence_number` columns
 * (lineage-columns.ts).
 * @throws ValidationError for a file that cannot be read as the schema, a malformed delete file, a
 *   sort field that does not apply, or rows the writer refuses; whatever reading and writing throw
 */
export async function compactColumns(
  table: LoadedTable,
  tasks: readonly FileScanTask[],
  schema: Schema,
  order: SortOrder | undefined,
  opts: WriteDataFilesOptions,
): Promise<{ files: DataFile[]; rows: number }> {
  const lineage = table.metadata['format-version'] >= 3;
  const written = lineage ? withLineageFields(schema) : schema;
  const rows = sortGroupRows(await readGroupRows(table, tasks, written, lineage), order, schema);
  const files = await writeBatchSourceFiles(new GatheredFileRows(rows), { ...opts, schema: written });
  return { files, rows: rows.row.length };
}

/**
 * Every file's columns, batch by batch, and the rows no delete removes, in file order. With `lineage`,
 * the schema's last two columns are `_row_id` and `_last_updated_sequence_number`, inherited values
 * filled in from the row's own file and position (before any row is dropped or moved).
 */
async function readGroupRows(
  table: LoadedTable,
  tasks: readonly FileScanTask[],
  schema: Schema,
  lineage: boolean,
): Promise<GroupRows> {
  const masks = new DeleteMasks(table);
  const parts: arrow.Data[][] = schema.fields.map(() => []);
  const kept = new RunBuilder(tasks.length);
  let partCount = 0;
  const reads = new ReadAhead(table, tasks);
  for (let t = 0; t < tasks.length; t++) {
    const file = await reads.take(t);
    const mask = await masks.maskOf(tasks[t], file);
    let position = 0;
    for (const columns of projectFile(file, schema)) {
      const p = partCount++;
      if (lineage) {
        const at = columns.length - 2;
        const { file: data, dataSequenceNumber } = tasks[t];
        const source = { firstRowId: data.first_row_id, dataSequenceNumber, position };
        columns.splice(at, 2, ...fillLineage(columns[at], columns[at + 1], source));
      }
      for (let j = 0; j < columns.length; j++) parts[j].push(columns[j]);
      const length = columns[0]?.length ?? 0;
      if (!mask) kept.push(p, 0, length);
      else for (let r = 0; r < length; r++) if (mask[position + r] === 0) kept.push(p, r, 1);
      position += length;
    }
  }
  const runs = kept.finish();
  const part = new Int32Array(runs.rows);
  const row = new Int32Array(runs.rows);
  for (let r = 0, k = 0; r < runs.count; r++) {
    for (let i = 0; i < runs.len[r]; i++, k++) {
      part[k] = runs.part[r];
      row[k] = runs.from[r] + i;
    }
  }
  return { parts, part, row };
}

/** Files read ahead of the one being projected: at most this many... */
const READ_AHEAD_FILES = 8;
/** ...and at most this many bytes of them (file sizes as the manifests give them). */
const READ_AHEAD_BYTES = 64 << 20;

/**
 * The group's files read in order with a bounded window in flight, so storage latency (an S3 GET is
 * tens of milliseconds) overlaps the decoding and projecting of the files before. Decoded files are
 * held until the group is written anyway; the window bounds only the raw bytes read early.
 */
class ReadAhead {
  private readonly pending = new Map<number, Promise<ArrowFile>>();
  private next = 0;
  private bytes = 0;

  constructor(
    private readonly table: LoadedTable,
    private readonly tasks: readonly FileScanTask[],
  ) {}

  /** File `t`'s columns; files are taken in order, each once. */
  take(t: number): Promise<ArrowFile> {
    this.fill(t);
    const file = this.pending.get(t) as Promise<ArrowFile>;
    this.pending.delete(t);
    this.bytes -= sizeOf(this.tasks[t]);
    this.fill(t + 1);
    return file;
  }

  private fill(from: number): void {
    while (
      this.next < this.tasks.length &&
      (this.next <= from ||
        (this.pending.size < READ_AHEAD_FILES &&
          this.bytes + sizeOf(this.tasks[this.next]) <= READ_AHEAD_BYTES))
    ) {
      const read = readArrowFile(this.table.io, this.tasks[this.next].file.file_path);
      read.catch(() => undefined); // observed when taken; this only avoids an unhandled rejection
      this.pending.set(this.next, read);
      this.bytes += sizeOf(this.tasks[this.next]);
      this.next++;
    }
  }
}

function sizeOf(task: FileScanTask): number {
  return Number(task.file.file_size_in_bytes);
}

/** The group's rows, in write order, as the writer's batch source: each batch gathered on demand. */
class GatheredFileRows implements RecordBatchSource {
  constructor(private readonly rows: GroupRows) {}

  get length(): number {
    return this.rows.row.length;
  }

  readonly buildBatch: RecordBatchSource['buildBatch'] = (schema, arrowSchema, start, end, stats) => {
    const runs = runsOf(this.rows.part, this.rows.row, start, end);
    const children = arrowSchema.fields.map((f, j) => takeData(f.type, this.rows.parts[j], runs));
    const batch = recordBatchOf(arrowSchema, end - start, children);
    collectBatchStats(schema, batch, stats);
    return batch;
  };
}
