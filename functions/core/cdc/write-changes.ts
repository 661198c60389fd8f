/**
 * A collapsed CDC batch → files: DataFiles for the keys' final rows (split by the default spec, like
 * appends), and either position deletes naming the located live rows of every key the batch
 * replaces or deletes (a table's default, `floe.delete-mode=position`: delete-positions.ts — Parquet
 * position delete files on v2, deletion vectors on v3), or
 * equality DeleteFiles (content 2, `equality_ids` = the key's field ids) holding the
 * key of every row the batch replaces or deletes, one file per partition of the delete scope. When
 * the table has `_kafka` lineage, each delete row also carries the deleting change's `_kafka` topic,
 * partition and offset (change-version.ts): the key's version once no row holds it. By position, a key
 * the batch leaves deleted keeps its version in a key-versions file on v2 (position delete rows naming
 * no data file), and on v3 in a version carrier: a data file of such rows whose every row a deletion
 * vector of the same commit deletes (version-carriers.ts says why every reader then skips it).
 * All go into one snapshot; an equality delete reaches only strictly older data, so the new rows
 * survive the deletes written beside them. Nothing is committed here.
 */
import { randomUUID } from 'node:crypto';
import type { LoadedTable } from '../catalog/catalog.js';
import { writeDataFiles } from '../data/parquet/write/write-data-file.js';
import { ValidationError } from '../errors.js';
import { joinLocation } from '../io/location.js';
import { KAFKA_FIELD } from '../records/kafka-lineage.js';
import { currentSchema } from '../spec/metadata.js';
import { partitionPath } from '../spec/transforms.js';
import type { DataFile, Row, Schema, StructField, StructType, Value } from '../spec/types.js';
import { partitionRows } from '../table/partition-rows.js';
import { writeRows } from '../table/write-rows.js';
import { lineageFields, lineageIds, versionValue } from './change-version.js';
import type { KeyState } from './collapse-changes.js';
import type { DeleteScope } from './delete-scope.js';
import type { KeyColumn } from '../routing/table-mode.js';
import { readWriteProperties } from '../spec/table-properties.js';
import type { RowLocation } from './locate-rows.js';
import { KEY_VERSIONS_NAME } from '../scan/delete-index.js';
import { carrierLineage, writeVersionCarriers } from './version-carriers.js';
import { deletePositions } from './delete-positions.js';
import { POSITION_DELETE_SCHEMA, WHOLE_BOUNDS } from './write-position-deletes.js';

export interface WrittenChanges {
  dataFiles: DataFile[];
  deleteFiles: DataFile[];
  /** Deletion vectors of the base that `deleteFiles` replace (v3): removed in the same commit. */
  replacedDeleteFiles: DataFile[];
  /** Rows in the data files (a v3 version carrier's rows are not counted: its vector deletes them). */
  rows: number;
  /** Keys in the equality delete files. */
  equalityDeletes: number;
  /** Rows named by the position delete files. */
  positionDeletes: number;
}

/** The schema cut down to the key columns and the structs holding them (as the table declares them). */
export function keySchema(schema: Schema, ids: ReadonlySet<number>): Schema {
  const prune = (struct: StructType): StructField[] =>
    struct.fields.flatMap((f): StructField[] => {
      if (ids.has(f.id)) return [f];
      if (typeof f.type !== 'string' && f.type.type === 'struct') {
        const inner = prune(f.type);
        return inner.length > 0 ? [{ ...f, type: { ...f.type, fields: inner } }] : [];
      }
      return [];
    });
  return { type: 'struct', 'schema-id': schema['schema-id'], fields: prune(schema) };
}

/** A row holding only the key columns, at their paths. */
export function keyRow(columns: readonly KeyColumn[], values: readonly Value[]): Row {
  const row: Row = {};
  columns.forEach((c, i) => {
    let target = row;
    for (const p of c.path.slice(0, -1)) {
      target[p] ??= {};
      target = target[p] as Row;
    }
    target[c.path[c.path.length - 1]] = values[i];
  });
  return row;
}

async function writeDeleteFiles(
  table: LoadedTable,
  keyRows: Row[],
  columns: readonly KeyColumn[],
  scope: DeleteScope,
  prefix: string,
  schema: Schema,
  kind: 'equality' | 'versions' = 'equality',
): Promise<DataFile[]> {
  const md = table.metadata;
  const ids = columns.map((c) => c.id);
  const lineage = lineageFields(schema);
  // Extra columns beside the key: equality_ids stays the key's, so readers compare only the key.
  const keyed = keySchema(schema, new Set([...ids, ...(lineage ? lineageIds(lineage) : [])]));
  const versions = kind === 'versions';
  const deleteSchema: Schema = versions
    ? { ...keyed, fields: [...POSITION_DELETE_SCHEMA.fields, ...keyed.fields] }
    : keyed;
  const rows = versions ? keyRows.map((r) => ({ ...r, file_path: versionsPath(table), pos: 0n })) : keyRows;
  const written = readWriteProperties(md.properties);
  const files: DataFile[] = [];
  // The key rows carry the partition source columns whenever the scope is partitioned (the key decides it).
  for (const group of partitionRows(rows, schema, scope.spec)) {
    const dir = joinLocation(
      md.location,
      'data',
      ...(scope.spec.fields.length ? [partitionPath(scope.spec, schema, group.partition)] : []),
    );
    const id = randomUUID();
    files.push(
      ...(await writeDataFiles(group.rows, {
        io: table.io,
        schema: deleteSchema,
        specId: scope.spec['spec-id'],
        partition: group.partition,
        content: versions ? 1 : 2,
        equalityIds: versions ? undefined : ids,
        nextLocation: (i) =>
          joinLocation(
            dir,
            `${prefix}${versions ? 'key-versions' : 'eq-deletes'}-${id}-${String(i).padStart(5, '0')}.parquet`,
          ),
        targetFileSizeBytes: written.targetFileSizeBytes,
        codec: written.parquetCodec,
        pageRowLimit: written.pageRowLimit,
        // key-versions files are found by their file_path bounds (key-versions.ts): whole, not truncated.
        ...(versions ? { metricsTruncateLength: WHOLE_BOUNDS } : {}),
      })),
    );
  }
  return files;
}

/**
 * Writes the files for a collapsed batch with `options.schema` (the schema the batch commits; default
 * the table's current one). With `options.positions` (the live rows of the keys, located in the base
 * the batch commits on) the rows of every key that deletes existing rows get position deletes;
 * without, equality deletes (then `scope` is needed when any key has older rows to delete).
 * On failure, the files this call wrote are deleted (best effort) before the error is thrown.
 * @throws ValidationError without a scope for deletes; whatever writeRows / writeDataFiles throw
 *   (ValidationError, TransientIOError, LakeError)
 */
export async function writeChanges(
  table: LoadedTable,
  finals: readonly KeyState[],
  columns: readonly KeyColumn[],
  scope: DeleteScope | undefined,
  options: { filePrefix?: string; schema?: Schema; positions?: readonly RowLocation[] } = {},
): Promise<WrittenChanges> {
  const schema = options.schema ?? currentSchema(table.metadata);
  const prefix = options.filePrefix ? `${options.filePrefix.slice(0, 12)}-` : '';
  const rows = finals.flatMap((s) => (s.row ? [s.row] : []));
  if (options.positions) {
    return writeWithPositions(table, finals, rows, options.positions, prefix, {
      ...options,
      scope,
      columns,
      schema,
    });
  }
  const lineage = lineageFields(schema) !== undefined;
  const keyRows = finals
    .filter((s) => s.deleteExisting)
    .map((s) => {
      const row = keyRow(columns, s.key.values);
      if (lineage) row[KAFKA_FIELD] = s.record ? versionValue(s.record) : null;
      return row;
    });
  if (keyRows.length > 0 && !scope)
    throw new ValidationError('a batch with equality deletes needs a delete scope');
  const dataFiles = rows.length
    ? await writeRows(table, rows, { filePrefix: options.filePrefix, schema })
    : [];
  try {
    const deleteFiles =
      scope && keyRows.length ? await writeDeleteFiles(table, keyRows, columns, scope, prefix, schema) : [];
    return {
      dataFiles,
      deleteFiles,
      replacedDeleteFiles: [],
      rows: rows.length,
      equalityDeletes: keyRows.length,
      positionDeletes: 0,
    };
  } catch (error) {
    await Promise.all(dataFiles.map((f) => table.io.delete(f.file_path).catch(() => undefined)));
    throw error;
  }
}

/**
 * The position a key-versions row names: no data file is there, so the row deletes nothing; it only
 * carries a deleted key's version (change-version.ts), as equality delete rows do. Never throws.
 */
export function versionsPath(table: LoadedTable): string {
  return joinLocation(table.metadata.location, 'data', KEY_VERSIONS_NAME);
}

async function writeWithPositions(
  table: LoadedTable,
  finals: readonly KeyState[],
  rows: Row[],
  positions: readonly RowLocation[],
  prefix: string,
  options: {
    filePrefix?: string;
    schema: Schema;
    scope: DeleteScope | undefined;
    columns: readonly KeyColumn[];
  },
): Promise<WrittenChanges> {
  const replacing = new Set(finals.filter((s) => s.deleteExisting).map((s) => s.key.text));
  const places = positions.filter((p) => replacing.has(p.key));
  // A key left deleted has no row to carry its version: a key-versions row keeps it, so a late batch
  // cannot bring the key back (late-changes.ts).
  // v3 takes no new Parquet position delete file: the versions ride on a version carrier, a data
  // file whose rows the batch's deletion vectors delete whole (version-carriers.ts). It needs no scope.
  const carried = table.metadata['format-version'] >= 3;
  const lineage = lineageFields(options.schema);
  const versionRows = lineage
    ? finals
        .filter((s) => s.deleteExisting && s.row === null)
        .map((s) => ({
          ...keyRow(options.columns, s.key.values),
          [KAFKA_FIELD]: s.record ? (carried ? carrierLineage(s.record) : versionValue(s.record)) : null,
        }))
    : [];
  if (versionRows.length > 0 && !carried && !options.scope)
    throw new ValidationError('a batch with key versions needs a delete scope');
  const dataFiles = rows.length
    ? await writeRows(table, rows, { filePrefix: options.filePrefix, schema: options.schema })
    : [];
  const deleteFiles: DataFile[] = [];
  try {
    const carriers =
      carried && versionRows.length > 0
        ? await writeVersionCarriers(table, versionRows, options.schema, prefix)
        : [];
    dataFiles.push(...carriers);
    const byPosition = await deletePositions(table, places, prefix, carriers);
    deleteFiles.push(...byPosition.added);
    if (!carried && options.scope && versionRows.length > 0) {
      deleteFiles.push(
        ...(await writeDeleteFiles(
          table,
          versionRows,
          options.columns,
          options.scope,
          prefix,
          options.schema,
          'versions',
        )),
      );
    }
    return {
      dataFiles,
      deleteFiles,
      replacedDeleteFiles: byPosition.replaced,
      rows: rows.length,
      equalityDeletes: 0,
      positionDeletes: places.length,
    };
  } catch (error) {
    await Promise.all(
      [...dataFiles, ...deleteFiles].map((f) => table.io.delete(f.file_path).catch(() => undefined)),
    );
    throw error;
  }
}
