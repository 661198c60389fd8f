/**
 * Which rows of a data file its deletes remove, as a mask over the file's positions — the deletes
 * planning attached to the file's task (scan/delete-index.ts decides which apply), evaluated on the
 * file's Arrow columns. The rule is read-scan.ts's: a deletion vector (v3) or a position delete names a
 * position of this file's path; an equality delete compares its `equality_ids` columns (null equals null, NaN equals NaN,
 * -0 differs from 0 — value-key.ts), each column read as the table's current schema types it, or, for
 * a column dropped since, as the newest older schema that has it did; a null struct on the way makes
 * the column null.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { type ArrowFile, readArrowFile, readFieldValues } from '../data/parquet/read/read-arrow-columns.js';
import { ValidationError } from '../errors.js';
import type { DeletionVector } from '../deletes/deletion-vector.js';
import { isDeletionVector } from '../manifest/manifest-entry-codec.js';
import { POSITION_DELETE_FILE_PATH_ID, POSITION_DELETE_POS_ID } from '../scan/delete-index.js';
import { loadDeletionVector } from '../scan/deletion-vectors.js';
import type { FileScanTask } from '../scan/scan-plan.js';
import { tupleKey } from '../scan/value-key.js';
import { currentSchema } from '../spec/metadata.js';
import { findField } from '../spec/schema-index.js';
import type { DataFile, IcebergType, StructType, TableMetadata, Value } from '../spec/types.js';

/** An equality key column: the field ids leading to it through structs, its type and dotted name. */
interface KeyColumn {
  ids: number[];
  type: IcebergType;
  path: string;
}

interface EqualityDeletes {
  columns: KeyColumn[];
  keys: Set<string>;
}

/** Reads each delete file once for a whole group (a delete file usually applies to many data files). */
export class DeleteMasks {
  private readonly positions = new LoadOnce<Map<string, number[]>>();
  private readonly equality = new LoadOnce<EqualityDeletes>();
  private readonly vectors = new LoadOnce<DeletionVector>();

  constructor(private readonly table: LoadedTable) {}

  /**
   * 1 at every position of `file` (the task's data file, read whole) that a delete removes; undefined
   * when no delete applies.
   * @throws ValidationError for a malformed delete file or a key column in no schema of the table;
   *   CorruptDeletionVectorError / CorruptPuffinError for a deletion vector that does not read;
   *   whatever reading the delete files throws (NotFoundError, TransientIOError, ...)
   */
  async maskOf(task: FileScanTask, file: ArrowFile): Promise<Uint8Array | undefined> {
    if (task.deletes.length === 0) return undefined;
    const mask = new Uint8Array(file.rowCount);
    for (const ref of task.deletes) {
      if (ref.file.content !== 1) continue;
      if (isDeletionVector(ref.file)) {
        const key = `${ref.file.file_path}@${ref.file.content_offset}`;
        const vector = await this.vectors.get(key, () => loadDeletionVector(this.table.io, ref.file));
        const rows = BigInt(mask.length);
        // Ascending: a position past the file's rows ends the walk.
        for (const position of vector.positions()) {
          if (position >= rows) break;
          mask[Number(position)] = 1;
        }
        continue;
      }
      const byPath = await this.positions.get(ref.file.file_path, () => this.readPositions(ref.file));
      for (const pos of byPath.get(task.file.file_path) ?? [])
        if (pos >= 0 && pos < mask.length) mask[pos] = 1;
    }
    for (const ref of task.deletes) {
      if (ref.file.content !== 2) continue;
      const deletes = await this.equality.get(ref.file.file_path, () => this.readEquality(ref.file));
      const columns = deletes.columns.map((c) => readFieldValues(file, c.ids, c.type, c.path));
      const tuple: Value[] = new Array(columns.length);
      for (let i = 0; i < mask.length; i++) {
        if (mask[i] === 1) continue;
        for (let c = 0; c < columns.length; c++) tuple[c] = columns[c][i];
        if (deletes.keys.has(tupleKey(tuple))) mask[i] = 1;
      }
    }
    return mask;
  }

  /** A position delete file as data file path → deleted positions. */
  private async readPositions(file: DataFile): Promise<Map<string, number[]>> {
    const deletes = await readArrowFile(this.table.io, file.file_path);
    const paths = readFieldValues(deletes, [POSITION_DELETE_FILE_PATH_ID], 'string', 'file_path');
    const positions = readFieldValues(deletes, [POSITION_DELETE_POS_ID], 'long', 'pos');
    const byPath = new Map<string, number[]>();
    for (let i = 0; i < paths.length; i++) {
      const path = paths[i];
      const pos = positions[i];
      if (typeof path !== 'string' || typeof pos !== 'bigint') {
        throw new ValidationError(
          `position delete file ${file.file_path} has a row without file_path or pos`,
        );
      }
      const list = byPath.get(path);
      if (list) list.push(Number(pos));
      else byPath.set(path, [Number(pos)]);
    }
    return byPath;
  }

  /** An equality delete file as its key columns and the set of deleted key tuples. */
  private async readEquality(file: DataFile): Promise<EqualityDeletes> {
    if (!file.equality_ids || file.equality_ids.length === 0) {
      throw new ValidationError(`equality delete file ${file.file_path} has no equality_ids`);
    }
    const columns = file.equality_ids.map((id) => locateKeyColumn(this.table.metadata, id));
    const deletes = await readArrowFile(this.table.io, file.file_path);
    const values = columns.map((c) => readFieldValues(deletes, c.ids, c.type, c.path));
    const keys = new Set<string>();
    const tuple: Value[] = new Array(columns.length);
    for (let i = 0; i < deletes.rowCount; i++) {
      for (let c = 0; c < columns.length; c++) tuple[c] = values[c][i];
      keys.add(tupleKey(tuple));
    }
    return { columns, keys };
  }
}

/** Each key's value loaded once: a second ask gets the first load's promise. */
class LoadOnce<T> {
  private readonly loads = new Map<string, Promise<T>>();

  get(key: string, load: () => Promise<T>): Promise<T> {
    const known = this.loads.get(key);
    if (known) return known;
    const loading = load();
    this.loads.set(key, loading);
    return loading;
  }
}

/**
 * Where an equality column is: in the current schema, else in the newest older schema holding it.
 * @throws ValidationError when no schema has it, or it sits inside a list or map
 */
function locateKeyColumn(metadata: TableMetadata, id: number): KeyColumn {
  const current = currentSchema(metadata);
  const schemas = [current, ...[...metadata.schemas].reverse()];
  const owner = schemas.find((s) => findField(s, id) !== undefined);
  if (!owner) throw new ValidationError(`field id ${id} is in no schema of the table`);
  const column = structPath(owner, id);
  if (!column) throw new ValidationError(`equality delete column ${id} is not a struct field of the table`);
  return column;
}

function structPath(
  struct: StructType,
  id: number,
  ids: number[] = [],
  names: string[] = [],
): KeyColumn | undefined {
  for (const f of struct.fields) {
    if (f.id === id) return { ids: [...ids, f.id], type: f.type, path: [...names, f.name].join('.') };
    if (typeof f.type !== 'string' && f.type.type === 'struct') {
      const found = structPath(f.type, id, [...ids, f.id], [...names, f.name]);
      if (found) return found;
    }
  }
  return undefined;
}
