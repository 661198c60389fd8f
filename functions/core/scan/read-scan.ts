/**
 * Reads the rows of a planned scan: each task's data file, minus the rows its deletion vector or its
 * position delete files name (planning attaches one or the other), minus the rows matching any of its
 * equality deletes, then filtered by the row filter (the residual that partition and metrics pruning
 * could not decide). v3 `unknown` columns read as null without touching the files; `variant`,
 * `geometry` and `geography` columns are refused when read.
 *
 * Equality deletes compare on the delete file's `equality_ids` columns; a null in a delete row
 * matches a null in the data row (spec: "equivalent to col IS NULL"), and a null struct on the path
 * to a column makes the column null.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { readDataFile } from '../data/parquet/read/read-data-file.js';
import type { DeletionVector } from '../deletes/deletion-vector.js';
import { ValidationError } from '../errors.js';
import { currentSchema } from '../spec/metadata.js';
import type { DataFile, Row, StructType } from '../spec/types.js';
import { bindExpression } from './bind-expression.js';
import { isDeletionVector } from '../manifest/manifest-entry-codec.js';
import { POSITION_DELETE_FILE_PATH_ID, POSITION_DELETE_POS_ID } from './delete-index.js';
import { loadDeletionVector } from './deletion-vectors.js';
import { evaluateRow } from './evaluate-row.js';
import type { BoundExpression, Expression } from './expression.js';
import { collectFieldIds } from './expression-helpers.js';
import {
  buildReadStruct,
  type FieldPaths,
  indexPaths,
  projectRow,
  pruneStruct,
  readPath,
  refuseUnreadableColumns,
  withoutUnknownFields,
} from './read-columns.js';
import { readTaskRows } from './read-task-rows.js';
import type { FileScanTask, ScanPlan } from './scan-plan.js';
import { tupleKey } from './value-key.js';

export interface ReadScanOptions {
  /**
   * Row filter applied to every row read (bound against the current schema). Pass the filter the
   * plan was made with: planning only skips files, it does not filter rows. @default none
   */
  filter?: Expression;
  /** Columns to return: top-level fields of the current schema, by id. @default the current schema */
  schema?: StructType;
  /**
   * Skip row groups and pages whose statistics rule the filter out, and decode the other columns only
   * for rows the filter keeps (read-task-rows.ts). Off only to compare with the plain path. @default true
   */
  pruneInFiles?: boolean;
}

const POSITION_DELETE_STRUCT: StructType = {
  type: 'struct',
  fields: [
    { id: POSITION_DELETE_FILE_PATH_ID, name: 'file_path', required: true, type: 'string' },
    { id: POSITION_DELETE_POS_ID, name: 'pos', required: true, type: 'long' },
  ],
};

/** Equality-delete rows of one delete file: the column ids compared, and the tuples deleted. */
interface EqualityDeletes {
  ids: number[];
  keys: Set<string>;
}

/** One task's rows read, and which of them are live (indexes into `rows`). */
interface LiveTaskRows {
  task: FileScanTask;
  rows: Row[];
  positions: number[] | undefined;
  live: number[];
}

/** A live row with where it is: its data file and its position there (position deletes name both). */
export interface LocatedRow {
  row: Row;
  /** The data file the row is in (its spec id and partition scope a position delete). */
  file: DataFile;
  specId: number;
  pos: number;
}

/**
 * Streams the live rows of a plan, task by task, rows in file order.
 * @throws ValidationError when the filter does not bind, or a delete column is in no schema
 * @throws UnsupportedFeatureError when a column read is a v3 variant, geometry or geography
 * @throws CorruptDeletionVectorError / CorruptPuffinError for a deletion vector that does not read
 * @throws whatever readDataFile throws (NotFoundError, TransientIOError, ValidationError)
 */
export async function* readScan(
  table: LoadedTable,
  plan: ScanPlan,
  options: ReadScanOptions = {},
): AsyncGenerator<Row> {
  const { project, tasks } = scanTasks(table, plan, options);
  for await (const t of tasks) for (const i of t.live) yield project(t.rows[i]);
}

/**
 * Streams the live rows of a plan with their data file and row position (as readScan, which it is).
 * @throws as readScan
 */
export async function* readScanLocated(
  table: LoadedTable,
  plan: ScanPlan,
  options: ReadScanOptions = {},
): AsyncGenerator<LocatedRow> {
  const { project, tasks } = scanTasks(table, plan, options);
  for await (const t of tasks) {
    for (const i of t.live) {
      const pos = t.positions === undefined ? i : t.positions[i];
      yield { row: project(t.rows[i]), file: t.task.file, specId: t.task.specId, pos };
    }
  }
}

/** What a scan reads with: the columns returned, the bound filter, and the struct the files are read with. */
export interface ScanRead {
  /** The columns returned (a v3 `unknown` field left out: it reads as absent). */
  projection: StructType;
  /** The `unknown` fields of the requested schema, returned as null. */
  nullNames: string[];
  filter: BoundExpression | undefined;
  /** The projection's fields first, then the columns the filter and the equality deletes need. */
  readStruct: StructType;
}

/**
 * The read of `plan` with `options`, for readScan and readers that keep rows as columns
 * (read-scan-batches.ts).
 * @throws ValidationError when the filter does not bind, or an equality delete has no equality_ids
 * @throws UnsupportedFeatureError when a column read is a v3 variant, geometry or geography
 */
export function scanRead(table: LoadedTable, plan: ScanPlan, options: ReadScanOptions): ScanRead {
  const schema = currentSchema(table.metadata);
  const { struct: projection, nullNames } = withoutUnknownFields(options.schema ?? schema);
  const filter = options.filter ? bindExpression(options.filter, schema) : undefined;
  const extraIds = new Set<number>(filter ? collectFieldIds(filter) : []);
  for (const task of plan.tasks) {
    for (const ref of task.deletes) for (const id of equalityIds(ref.file)) extraIds.add(id);
  }
  const readStruct = buildReadStruct(projection, extraIds, schema, table.metadata);
  refuseUnreadableColumns(readStruct);
  return { projection, nullNames, filter, readStruct };
}

/** The read of a plan, one task at a time (one object per task, not per row: readScan is hot). */
function scanTasks(
  table: LoadedTable,
  plan: ScanPlan,
  options: ReadScanOptions,
): { project: (row: Row) => Row; tasks: AsyncGenerator<LiveTaskRows> } {
  const { projection, nullNames, filter, readStruct } = scanRead(table, plan, options);
  const outputNames = projection.fields.map((f) => f.name);
  const deletesOf = taskDeletesOf(table, readStruct);

  async function* tasks(): AsyncGenerator<LiveTaskRows> {
    for (const task of plan.tasks) {
      const { rows, positions, filtered } = await readTaskRows(
        table.io,
        task.file.file_path,
        readStruct,
        filter,
        options.pruneInFiles !== false,
        Number(task.file.file_size_in_bytes),
      );
      const deletes = await deletesOf(task);
      const live: number[] = [];
      for (let i = 0; i < rows.length; i++) {
        if (deletes.positions.has(positions === undefined ? i : positions[i])) continue;
        const row = rows[i];
        if (deletes.equalityDeleted(row)) continue;
        if (filter && !filtered && !evaluateRow(filter, row)) continue;
        live.push(i);
      }
      yield { task, rows, positions, live };
    }
  }
  return {
    // Every row goes through project: the unknown-column pass only where there are unknown columns.
    project:
      nullNames.length === 0
        ? (row) => projectRow(row, outputNames, readStruct.fields.length)
        : (row) => {
            const out = projectRow(row, outputNames, readStruct.fields.length);
            for (const name of nullNames) out[name] = null;
            return out;
          },
    tasks: tasks(),
  };
}

/**
 * All live rows of a plan as one array (see readScan).
 * @throws as readScan
 */
export async function readScanRows(
  table: LoadedTable,
  plan: ScanPlan,
  options: ReadScanOptions = {},
): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const row of readScan(table, plan, options)) rows.push(row);
  return rows;
}

function equalityIds(file: DataFile): number[] {
  if (file.content !== 2) return [];
  if (!file.equality_ids || file.equality_ids.length === 0) {
    throw new ValidationError(`equality delete file ${file.file_path} has no equality_ids`);
  }
  return file.equality_ids;
}

/** @throws ValidationError for an equality column inside a list or map (the spec forbids those) */
function pathOf(paths: FieldPaths, id: number): string[] {
  const path = paths.get(id);
  if (!path) throw new ValidationError(`equality delete column ${id} is not a struct field of the table`);
  return path;
}

function cached<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let value = cache.get(key);
  if (!value) {
    value = load();
    cache.set(key, value);
  }
  return value;
}

/** The positions of the task's file its deletion vector or position delete files delete. */
async function deletedPositions(
  task: FileScanTask,
  load: (file: DataFile) => Promise<Map<string, number[]>>,
  loadVector: (file: DataFile) => Promise<DeletionVector>,
): Promise<{ has(position: number): boolean }> {
  const vector = task.deletes.find((ref) => isDeletionVector(ref.file));
  if (vector) return loadVector(vector.file);
  const deleted = new Set<number>();
  for (const ref of task.deletes) {
    if (ref.file.content !== 1) continue;
    const byPath = await load(ref.file);
    for (const pos of byPath.get(task.file.file_path) ?? []) deleted.add(pos);
  }
  return deleted;
}

/** A position delete file as data file path → deleted positions. */
async function readPositionDeletes(table: LoadedTable, file: DataFile): Promise<Map<string, number[]>> {
  const rows = await readDataFile(table.io, file.file_path, POSITION_DELETE_STRUCT);
  const byPath = new Map<string, number[]>();
  for (const row of rows) {
    const path = row.file_path;
    const pos = row.pos;
    if (typeof path !== 'string' || (typeof pos !== 'bigint' && typeof pos !== 'number')) {
      throw new ValidationError(`position delete file ${file.file_path} has a row without file_path or pos`);
    }
    let list = byPath.get(path);
    if (!list) {
      list = [];
      byPath.set(path, list);
    }
    list.push(Number(pos));
  }
  return byPath;
}

/** An equality delete file as the set of deleted key tuples over its equality_ids. */
async function readEqualityDeletes(
  table: LoadedTable,
  file: DataFile,
  readStruct: StructType,
  paths: FieldPaths,
): Promise<EqualityDeletes> {
  const ids = equalityIds(file);
  // Read the delete file with the data files' read struct cut down to the key columns, so both sides
  // decode them to the same representation and land at the same paths.
  const rows = await readDataFile(table.io, file.file_path, pruneStruct(readStruct, new Set(ids)));
  const keyPaths = ids.map((id) => pathOf(paths, id));
  const keys = new Set<string>();
  for (const row of rows) keys.add(tupleKey(keyPaths.map((p) => readPath(row, p))));
  return { ids, keys };
}

function isEqualityDeleted(row: Row, deletes: EqualityDeletes[], keyPaths: string[][][]): boolean {
  for (let i = 0; i < deletes.length; i++) {
    const key = tupleKey(keyPaths[i].map((p) => readPath(row, p)));
    if (deletes[i].keys.has(key)) return true;
  }
  return false;
}

/** What a task's deletes remove: positions (deletion vector, position deletes), and equality tuples. */
export interface TaskDeletes {
  positions: { has(position: number): boolean };
  /** Field ids the equality deletes compare on ([] when the task has none). */
  equalityIds: number[];
  /** Whether an equality delete matches the row (a row holding at least `equalityIds`). */
  equalityDeleted(row: Row): boolean;
}

/**
 * The deletes of each task of a scan read with `readStruct`, each delete file loaded once per scan
 * (readScan's, and read-scan-batches.ts's for readers that keep rows as columns).
 * @throws as readScan, from the returned function
 */
export function taskDeletesOf(
  table: LoadedTable,
  readStruct: StructType,
): (task: FileScanTask) => Promise<TaskDeletes> {
  const paths = indexPaths(readStruct);
  const positionCache = new Map<string, Promise<Map<string, number[]>>>();
  const equalityCache = new Map<string, Promise<EqualityDeletes>>();
  // Many vectors share one Puffin file: each is its blob's range of it.
  const vectorCache = new Map<string, Promise<DeletionVector>>();
  return async (task) => {
    const positions = await deletedPositions(
      task,
      (file) => cached(positionCache, file.file_path, () => readPositionDeletes(table, file)),
      (file) =>
        cached(vectorCache, `${file.file_path}@${file.content_offset}`, () =>
          loadDeletionVector(table.io, file),
        ),
    );
    const equality = await Promise.all(
      task.deletes
        .filter((ref) => ref.file.content === 2)
        .map((ref) =>
          cached(equalityCache, ref.file.file_path, () =>
            readEqualityDeletes(table, ref.file, readStruct, paths),
          ),
        ),
    );
    const keyPaths = equality.map((d) => d.ids.map((id) => pathOf(paths, id)));
    return {
      positions,
      equalityIds: [...new Set(equality.flatMap((d) => d.ids))],
      equalityDeleted: (row) => isEqualityDeleted(row, equality, keyPaths),
    };
  };
}
