/**
 * A data file read as Arrow columns, not rows: a file floe's writer wrote is decoded in TypeScript
 * (native/), any other by parquet-wasm in one synchronous call (about a fifth cheaper than its
 * async file reader on small files), to the same Arrow types, and the columns are then resolved by
 * Iceberg field id (read-data-file.ts's rule) and projected onto a schema in the writer's layout
 * (project-arrow.ts), or read as values for the few columns that need them (equality-delete keys).
 */
import * as arrow from 'apache-arrow';
import { LakeError, ValidationError } from '../../../errors.js';
import type { FileIO } from '../../../io/file-io.js';
import type { IcebergType, StructType, Value } from '../../../spec/types.js';
import { getArrowFieldId } from '../../arrow/arrow-schema.js';
import { readColumnValues } from '../../arrow/arrow-to-values.js';
import { exportedBatches } from '../../arrow/arrow-ffi.js';
import { READ_BATCH_ROWS } from './data-batch.js';
import { tryDecodeFloeParquet } from './native/read-floe-parquet.js';
import { loadParquetWasm, type ParquetWasm } from '../parquet-wasm.js';
import { childById, projectData } from '../../arrow/project-arrow.js';

/** A data file's columns as parquet-wasm reads them, batch by batch, in file order. */
export interface ArrowFile {
  readonly location: string;
  readonly table: arrow.Table;
  readonly rowCount: number;
  /** Which decoder read it: floe's own (native/) or parquet-wasm. */
  readonly decoder: 'native' | 'parquet-wasm';
}

/**
 * Reads every column of a Parquet data file.
 * @throws NotFoundError / TransientIOError from `io.read`; ValidationError when the file is not Parquet
 *   or carries no field ids (name mapping is not supported)
 */
export async function readArrowFile(io: FileIO, location: string): Promise<ArrowFile> {
  const bytes = await io.read(location);
  const native = tryDecodeFloeParquet(bytes, READ_BATCH_ROWS);
  const table = native ?? (await readWithParquetWasm(bytes, location));
  if (!hasAnyFieldId(table.schema.fields)) {
    throw new ValidationError(`${location} has no Parquet field ids; reading it needs a name mapping`);
  }
  return { location, table, rowCount: table.numRows, decoder: native ? 'native' : 'parquet-wasm' };
}

/**
 * A Parquet file's table as parquet-wasm decodes it (every file floe's own reader declines), in
 * batches of `batchRows`.
 * @throws ValidationError when parquet-wasm cannot read it
 */
export async function readWithParquetWasm(
  bytes: Uint8Array,
  location: string,
  batchRows = READ_BATCH_ROWS,
): Promise<arrow.Table> {
  const wasm = await loadParquetWasm();
  try {
    return (
      tableViaFfi(wasm, bytes, batchRows) ??
      arrow.tableFromIPC(wasm.readParquet(bytes, { batchSize: batchRows }).intoIPCStream())
    );
  } catch (error) {
    throw new ValidationError(`${location} is not a readable Parquet file: ${String(error)}`, {
      cause: error,
    });
  }
}

/**
 * The file's batches copied out of WASM memory through the Arrow C Data Interface (arrow-ffi.ts: no IPC
 * stream written and parsed, ~0.7 ms a small file); undefined for a format that reader does not know or
 * a file without batches (its schema then comes from the IPC route).
 */
function tableViaFfi(wasm: ParquetWasm, bytes: Uint8Array, batchRows: number): arrow.Table | undefined {
  const batches = exportedBatches(wasm.wasmMemory(), wasm.readParquet(bytes, { batchSize: batchRows }));
  if (batches === undefined || batches.length === 0) return undefined;
  const { schema, type } = schemaOf(batches[0]!.fields);
  return new arrow.Table(
    schema,
    batches.map(
      (b) =>
        new arrow.RecordBatch(
          schema,
          arrow.makeData({ type, length: b.length, nullCount: 0, children: b.columns }),
        ),
    ),
  );
}

/** The Schema and struct type of Fields arrow-ffi.ts handed over: the same Fields, the same objects. */
const schemas = new WeakMap<arrow.Field[], { schema: arrow.Schema; type: arrow.Struct }>();

function schemaOf(fields: arrow.Field[]): { schema: arrow.Schema; type: arrow.Struct } {
  let known = schemas.get(fields);
  if (!known) {
    const schema = new arrow.Schema(fields);
    known = { schema, type: new arrow.Struct(schema.fields) };
    schemas.set(fields, known);
  }
  return known;
}

function hasAnyFieldId(fields: arrow.Field[]): boolean {
  return fields.some((f) => getArrowFieldId(f) !== undefined || hasAnyFieldId(f.type.children ?? []));
}

/**
 * The file's rows as one struct Data per batch, projected onto `schema` (a field the file lacks is
 * null; renamed fields are found by id; allowed promotions applied).
 * @throws ValidationError when a column cannot be read as its schema type
 */
export function projectFile(file: ArrowFile, schema: StructType): arrow.Data[][] {
  try {
    return file.table.batches.map((batch) =>
      schema.fields.map((f) =>
        projectData(
          f.type,
          childById(file.table.schema.fields, batch.data.children, f.id),
          batch.numRows,
          f.name,
        ),
      ),
    );
  } catch (error) {
    if (error instanceof LakeError)
      throw new ValidationError(`${file.location}: ${error.message}`, { cause: error });
    throw new ValidationError(`cannot read ${file.location}: ${String(error)}`, { cause: error });
  }
}

/**
 * Values (the row path's `Value` representation) of the field reached through structs by `ids` (top
 * level first), read as `type`; null where the file lacks it or a struct on the way is null.
 * @throws ValidationError when the column cannot be read as `type`
 */
export function readFieldValues(
  file: ArrowFile,
  ids: readonly number[],
  type: IcebergType,
  path: string,
): Value[] {
  const out: Value[] = new Array(file.rowCount).fill(null);
  let base = 0;
  for (const batch of file.table.batches) {
    let fields: readonly arrow.Field[] = file.table.schema.fields;
    let data: arrow.Data | undefined = batch.data;
    const parents: arrow.Data[] = [];
    for (let s = 0; s < ids.length && data !== undefined; s++) {
      const k = fields.findIndex((f) => getArrowFieldId(f) === ids[s]);
      if (s > 0) {
        if (data.type.typeId !== arrow.Type.Struct) {
          throw new ValidationError(
            `column '${path}' holds ${String(data.type)} where a struct was expected`,
          );
        }
        parents.push(data);
      }
      data = k < 0 ? undefined : data.children[k];
      fields = k < 0 ? [] : (fields[k].type.children ?? []);
    }
    if (data !== undefined) {
      const values = readColumnValues(type, data, path);
      for (let i = 0; i < batch.numRows; i++) {
        if (parents.every((p) => p.getValid(i))) out[base + i] = values[i];
      }
    }
    base += batch.numRows;
  }
  return out;
}
