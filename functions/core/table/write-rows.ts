/**
 * Rows → DataFiles for a table: split by the default partition spec, sorted by the default sort order
 * (so file stats prune well), one or more Parquet files per partition (rolled at
 * `write.target-file-size-bytes`), under `<location>/data/<partition path>/`.
 */
import { randomUUID } from 'node:crypto';
import type { LoadedTable } from '../catalog/catalog.js';
import type { GatheredRows } from '../data/gathered-rows.js';
import { writeDataFiles } from '../data/write-data-file.js';
import { joinLocation } from '../io/location.js';
import { currentSchema, defaultSpec, sortOrderById } from '../spec/metadata.js';
import { partitionPath } from '../spec/transforms.js';
import type { DataFile, Row, Schema, TableMetadata } from '../spec/types.js';
import { partitionRows } from './partition-rows.js';
import { sortRows } from './sort-rows.js';

export interface WriteRowsOptions {
  /** Prefix for file names (e.g. the batch id), so files can be traced to the batch that wrote them. */
  filePrefix?: string;
  schema?: Schema;
}

/**
 * Whether gathered columns are written as they are: the default spec has no fields and the default sort
 * order none (otherwise writeRows turns them back into rows to split and sort them).
 */
export function writesColumns(md: TableMetadata): boolean {
  const order = sortOrderById(md, md['default-sort-order-id']);
  return defaultSpec(md).fields.length === 0 && !(order !== undefined && order.fields.length > 0);
}

/** File names under `<location>/data/<partition path>/`: `<prefix>-<uuid>-<index>.parquet`. */
function fileLocations(location: string, path: string[], filePrefix?: string): (index: number) => string {
  const dir = joinLocation(location, 'data', ...path);
  const prefix = filePrefix ? `${filePrefix.slice(0, 12)}-` : '';
  const id = randomUUID();
  return (i) => joinLocation(dir, `${prefix}${id}-${String(i).padStart(5, '0')}.parquet`);
}

/** Writes rows (objects, or gathered as columns) as DataFiles of the table's default spec. Nothing is committed. */
export async function writeRows(
  table: LoadedTable,
  input: Row[] | GatheredRows,
  options: WriteRowsOptions = {},
): Promise<DataFile[]> {
  const md = table.metadata;
  const schema = options.schema ?? currentSchema(md);
  const spec = defaultSpec(md);
  const order = sortOrderById(md, md['default-sort-order-id']);
  const sorted = order !== undefined && order.fields.length > 0;
  const props = md.properties ?? {};
  const target = Number(props['write.target-file-size-bytes'] ?? 512 * 1024 * 1024);
  const codec = (props['write.parquet.compression-codec'] ?? 'zstd').toLowerCase() as
    | 'zstd'
    | 'snappy'
    | 'gzip'
    | 'uncompressed';
  // Gathered columns go straight to the file unless rows must be split by partition or sorted.
  if (!Array.isArray(input) && writesColumns(md)) {
    return writeDataFiles(input, {
      io: table.io,
      schema,
      specId: spec['spec-id'],
      partition: {},
      nextLocation: fileLocations(md.location, [], options.filePrefix),
      targetFileSizeBytes: target,
      codec,
      sortOrderId: order?.['order-id'],
    });
  }
  const rows = Array.isArray(input) ? input : input.toRows();
  const files: DataFile[] = [];
  for (const group of partitionRows(rows, schema, spec)) {
    const path = spec.fields.length ? [partitionPath(spec, schema, group.partition)] : [];
    files.push(
      ...(await writeDataFiles(sorted ? sortRows(group.rows, order, schema) : group.rows, {
        io: table.io,
        schema,
        specId: spec['spec-id'],
        partition: group.partition,
        nextLocation: fileLocations(md.location, path, options.filePrefix),
        targetFileSizeBytes: target,
        codec,
        sortOrderId: order?.['order-id'],
      })),
    );
  }
  return files;
}
