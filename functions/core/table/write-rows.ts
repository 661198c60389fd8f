/**
 * Rows → DataFiles for a table: split by the default partition spec, sorted by the default sort order
 * (so file stats prune well), one or more Parquet files per partition (rolled at
 * `write.target-file-size-bytes`), under `<location>/data/<partition path>/`.
 */
import { randomUUID } from 'node:crypto';
import type { LoadedTable } from '../catalog/catalog.js';
import type { GatheredRows } from '../data/arrow/gathered-rows.js';
import { writeDataFiles } from '../data/parquet/write/write-data-file.js';
import { joinLocation } from '../io/location.js';
import { currentSchema, defaultSpec, sortOrderById } from '../spec/metadata.js';
import { partitionPath } from '../spec/transforms.js';
import type { DataFile, PartitionValues, Row, Schema } from '../spec/types.js';
import { partitionIndices } from './partition-rows.js';
import { type ReadPath, readPath, sortIndices } from './sort-rows.js';
import { readWriteProperties } from '../spec/table-properties.js';

export interface WriteRowsOptions {
  /** Prefix for file names (e.g. the batch id), so files can be traced to the batch that wrote them. */
  filePrefix?: string;
  schema?: Schema;
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
  const {
    targetFileSizeBytes: target,
    parquetCodec: codec,
    pageRowLimit,
  } = readWriteProperties(md.properties);
  // Rows are split and sorted by index, whether they are objects or gathered columns.
  const read: ReadPath = Array.isArray(input)
    ? (i, path) => readPath(input[i], path)
    : (i, path) => input.valueAt(i, path);
  const write = (rows: Row[] | GatheredRows, partition: PartitionValues, path: string[]) =>
    writeDataFiles(rows, {
      io: table.io,
      schema,
      specId: spec['spec-id'],
      partition,
      nextLocation: fileLocations(md.location, path, options.filePrefix),
      targetFileSizeBytes: target,
      codec,
      pageRowLimit,
      sortOrderId: order?.['order-id'],
    });
  // Unpartitioned and unsorted: the rows as they are (no index per row to build and compare).
  if (spec.fields.length === 0 && !sorted) return input.length === 0 ? [] : write(input, {}, []);
  const files: DataFile[] = [];
  for (const group of partitionIndices(input.length, read, schema, spec)) {
    const path = spec.fields.length ? [partitionPath(spec, schema, group.partition)] : [];
    const indices = sorted ? sortIndices(group.indices, read, order, schema) : group.indices;
    const whole = indices.length === input.length && indices.every((v, i) => v === i);
    const rows = whole ? input : Array.isArray(input) ? indices.map((i) => input[i]) : input.take(indices);
    files.push(...(await write(rows, group.partition, path)));
  }
  return files;
}
