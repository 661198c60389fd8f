/**
 * Reads a Parquet data file back into rows, resolving columns by Iceberg field id (Iceberg's rule:
 * names may have changed since the file was written; ids never do).
 */
import * as arrow from 'apache-arrow';
import type { ParquetFile } from 'parquet-wasm';
import { LakeError, ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import type { Row, StructType, Value } from '../spec/types.js';
import { getArrowFieldId } from './arrow-schema.js';
import { readColumnValues } from './arrow-to-values.js';
import { loadParquetWasm } from './parquet-wasm.js';

/** Rows per Arrow batch parquet-wasm hands over; larger batches mean fewer conversions to set up. */
const READ_BATCH_ROWS = 65_536;

/**
 * Rows of a Parquet file in file order (row index = position, for position deletes), projected onto
 * `schema` by field id: a column renamed in the table schema still maps, a field missing from the file
 * is null, an int column read as long gives bigint, float read as double gives number. Values are in
 * the Iceberg `Value` representation.
 * @throws NotFoundError / TransientIOError from `io.read`; ValidationError when the file is not Parquet,
 *   carries no field ids (name mapping is not supported), or holds a column that cannot be read as the
 *   requested type
 */
export async function readDataFile(io: FileIO, location: string, schema: StructType): Promise<Row[]> {
  const bytes = await io.read(location);
  let file: ParquetFile;
  try {
    const { ParquetFile } = await loadParquetWasm();
    file = await ParquetFile.fromFile(new Blob([bytes]));
  } catch (error) {
    throw new ValidationError(`${location} is not a readable Parquet file: ${String(error)}`, {
      cause: error,
    });
  }
  try {
    const fileSchema = arrow.tableFromIPC(file.schema().intoIPCStream()).schema;
    if (!hasAnyFieldId(fileSchema.fields)) {
      throw new ValidationError(`${location} has no Parquet field ids; reading it needs a name mapping`);
    }
    const byId = new Map<number, string>();
    for (const f of fileSchema.fields) {
      const id = getArrowFieldId(f);
      if (id !== undefined) byId.set(id, f.name);
    }
    const wanted = schema.fields.filter((f) => byId.has(f.id));
    const rowCount = Number(file.metadata().fileMetadata().numRows());
    if (wanted.length === 0) return Array.from({ length: rowCount }, () => nullRow(schema));

    const columns = [...new Set(wanted.map((f) => byId.get(f.id)!))];
    const table = arrow.tableFromIPC(
      (await file.read({ columns, batchSize: READ_BATCH_ROWS })).intoIPCStream(),
    );
    return toRows(schema, table, location);
  } catch (error) {
    if (error instanceof LakeError) throw error;
    throw new ValidationError(`cannot read ${location}: ${String(error)}`, { cause: error });
  } finally {
    file.free();
  }
}

function hasAnyFieldId(fields: arrow.Field[]): boolean {
  return fields.some((f) => getArrowFieldId(f) !== undefined || hasAnyFieldId(f.type.children ?? []));
}

function nullRow(schema: StructType): Row {
  const row: Row = {};
  for (const f of schema.fields) row[f.name] = null;
  return row;
}

function toRows(schema: StructType, table: arrow.Table, location: string): Row[] {
  const indexById = new Map<number, number>();
  table.schema.fields.forEach((f, k) => {
    const id = getArrowFieldId(f);
    if (id !== undefined) indexById.set(id, k);
  });
  const fields = schema.fields;
  const rows: Row[] = new Array(table.numRows);
  let base = 0;
  for (const batch of table.batches) {
    const columns: (Value[] | undefined)[] = fields.map((f) => {
      const k = indexById.get(f.id);
      return k === undefined ? undefined : readColumnValues(f.type, batch.data.children[k], f.name);
    });
    for (let i = 0; i < batch.numRows; i++) {
      const row: Row = {};
      for (let j = 0; j < fields.length; j++) {
        const column = columns[j];
        row[fields[j].name] = column === undefined ? null : column[i];
      }
      rows[base + i] = row;
    }
    base += batch.numRows;
  }
  if (base !== rows.length)
    throw new ValidationError(`${location}: batches hold ${base} of ${rows.length} rows`);
  return rows;
}
