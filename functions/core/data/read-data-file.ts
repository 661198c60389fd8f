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

/** Rows [from, to) of a file, in file order (positions, as position deletes count them). */
export interface RowSpan {
  from: number;
  to: number;
}

/**
 * An opened data file: its bytes (for readers of its footer and page index) and reads of some of its
 * columns over some of its rows. Call `close` when done (parquet-wasm holds WASM memory).
 */
export interface OpenDataFile {
  readonly location: string;
  readonly bytes: Uint8Array;
  readonly rowCount: number;
  /**
   * Rows of `spans` (all rows when omitted) projected onto `schema`, in file order.
   * @throws ValidationError as readDataFile
   */
  read(schema: StructType, spans?: readonly RowSpan[]): Promise<Row[]>;
  close(): void;
}

/**
 * Opens a data file for one or more reads.
 * @throws NotFoundError / TransientIOError from `io.read`; ValidationError when the file is not Parquet
 *   or carries no field ids (name mapping is not supported)
 */
export async function openDataFile(io: FileIO, location: string): Promise<OpenDataFile> {
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
    const metadata = file.metadata();
    const rowCount = Number(metadata.fileMetadata().numRows());
    const groupRows = metadata.rowGroups().map((g) => g.numRows());
    return new WasmDataFile(location, bytes, file, byId, rowCount, groupRows);
  } catch (error) {
    file.free();
    if (error instanceof LakeError) throw error;
    throw new ValidationError(`cannot read ${location}: ${String(error)}`, { cause: error });
  }
}

class WasmDataFile implements OpenDataFile {
  constructor(
    readonly location: string,
    readonly bytes: Uint8Array,
    private readonly file: ParquetFile,
    private readonly byId: Map<number, string>,
    readonly rowCount: number,
    private readonly groupRows: number[],
  ) {}

  async read(schema: StructType, spans?: readonly RowSpan[]): Promise<Row[]> {
    const wanted = schema.fields.filter((f) => this.byId.has(f.id));
    const total = spans ? spans.reduce((n, s) => n + s.to - s.from, 0) : this.rowCount;
    if (wanted.length === 0) return Array.from({ length: total }, () => nullRow(schema));
    const columns = [...new Set(wanted.map((f) => this.byId.get(f.id) as string))];
    try {
      if (!spans) return toRows(schema, await this.readTable(columns), this.location, total);
      const rows: Row[] = [];
      for (const span of spans) {
        for (const row of toRows(
          schema,
          await this.readTable(columns, span),
          this.location,
          span.to - span.from,
        ))
          rows.push(row);
      }
      return rows;
    } catch (error) {
      if (error instanceof LakeError) throw error;
      throw new ValidationError(`cannot read ${this.location}: ${String(error)}`, { cause: error });
    }
  }

  /** Only the row groups a span touches are decoded: offset and limit count from the first of them. */
  private async readTable(columns: string[], span?: RowSpan): Promise<arrow.Table> {
    if (!span) {
      return arrow.tableFromIPC(
        (await this.file.read({ columns, batchSize: READ_BATCH_ROWS })).intoIPCStream(),
      );
    }
    const rowGroups: number[] = [];
    let start = 0;
    let first = -1;
    this.groupRows.forEach((n, g) => {
      if (start < span.to && start + n > span.from) {
        if (first < 0) first = start;
        rowGroups.push(g);
      }
      start += n;
    });
    const read = await this.file.read({
      columns,
      rowGroups,
      offset: span.from - first,
      limit: span.to - span.from,
      batchSize: READ_BATCH_ROWS,
    });
    return arrow.tableFromIPC(read.intoIPCStream());
  }

  close(): void {
    this.file.free();
  }
}

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
  const file = await openDataFile(io, location);
  try {
    return await file.read(schema);
  } finally {
    file.close();
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

function toRows(schema: StructType, table: arrow.Table, location: string, expected: number): Row[] {
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
  if (base !== rows.length || base !== expected)
    throw new ValidationError(`${location}: batches hold ${base} of ${expected} rows`);
  return rows;
}
