/**
 * Position delete files (content 1) for located rows: Iceberg's `file_path` (2147483546) and `pos`
 * (2147483545), rows sorted by path then position as the spec requires, one file per spec and partition
 * of the data files named (a position delete applies only to data files of its own spec and partition).
 * The `file_path` bounds are written whole, never truncated: a delete file naming one data file then has
 * lower = upper = that path, and readers (floe's delete index, Iceberg Java) scope it to that file alone.
 */
import { randomUUID } from 'node:crypto';
import type { LoadedTable } from '../catalog/catalog.js';
import { writeDataFiles } from '../data/parquet/write/write-data-file.js';
import { joinLocation } from '../io/location.js';
import { partitionKey, POSITION_DELETE_FILE_PATH_ID, POSITION_DELETE_POS_ID } from '../scan/delete-index.js';
import { currentSchema, specById } from '../spec/metadata.js';
import { readWriteProperties } from '../spec/table-properties.js';
import { partitionPath } from '../spec/transforms.js';
import type { DataFile, Row, Schema } from '../spec/types.js';
import type { RowLocation } from './locate-rows.js';

/** Iceberg's position delete columns. */
export const POSITION_DELETE_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: POSITION_DELETE_FILE_PATH_ID, name: 'file_path', required: true, type: 'string' },
    { id: POSITION_DELETE_POS_ID, name: 'pos', required: true, type: 'long' },
  ],
};

/** Bounds as long as any path: a truncated upper bound would no longer equal the one path named. */
export const WHOLE_BOUNDS = 1 << 20;

function comparePlaces(a: RowLocation, b: RowLocation): number {
  if (a.file.file_path !== b.file.file_path) return a.file.file_path < b.file.file_path ? -1 : 1;
  return a.pos - b.pos;
}

/**
 * Writes position delete files for `rows` (each place once), named with `prefix`; none for no rows.
 * On failure, the files this call wrote are deleted (best effort) before the error is thrown.
 * @throws ValidationError for a spec the table lacks or a partition tuple that does not fit it;
 *   whatever writeDataFiles throws (TransientIOError, LakeError)
 */
export async function writePositionDeletes(
  table: LoadedTable,
  rows: readonly RowLocation[],
  prefix: string,
): Promise<DataFile[]> {
  const md = table.metadata;
  const groups = new Map<string, RowLocation[]>();
  for (const row of rows) {
    const key = partitionKey(specById(md, row.specId), row.file);
    const group = groups.get(key);
    if (group) group.push(row);
    else groups.set(key, [row]);
  }
  const written = readWriteProperties(md.properties);
  const schema = currentSchema(md);
  const files: DataFile[] = [];
  try {
    for (const group of groups.values()) {
      const { specId, file } = group[0];
      const spec = specById(md, specId);
      const sorted = [...group].sort(comparePlaces);
      const unique = sorted.filter((r, i) => i === 0 || comparePlaces(sorted[i - 1], r) !== 0);
      const deleteRows: Row[] = unique.map((r) => ({ file_path: r.file.file_path, pos: BigInt(r.pos) }));
      const dir = joinLocation(
        md.location,
        'data',
        ...(spec.fields.length ? [partitionPath(spec, schema, file.partition)] : []),
      );
      const id = randomUUID();
      files.push(
        ...(await writeDataFiles(deleteRows, {
          io: table.io,
          schema: POSITION_DELETE_SCHEMA,
          specId,
          partition: file.partition,
          content: 1,
          nextLocation: (i) =>
            joinLocation(dir, `${prefix}pos-deletes-${id}-${String(i).padStart(5, '0')}.parquet`),
          targetFileSizeBytes: written.targetFileSizeBytes,
          codec: written.parquetCodec,
          pageRowLimit: written.pageRowLimit,
          metricsTruncateLength: WHOLE_BOUNDS,
        })),
      );
    }
    return files;
  } catch (error) {
    await Promise.all(files.map((f) => table.io.delete(f.file_path).catch(() => undefined)));
    throw error;
  }
}
