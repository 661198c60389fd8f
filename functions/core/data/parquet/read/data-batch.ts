/**
 * Rows of a data file as Arrow columns by Iceberg field id (a read's batches, whichever decoder made
 * them), and the row objects built from them for a schema.
 */
import type * as arrow from 'apache-arrow';
import type { Row, StructType, Value } from '../../../spec/types.js';
import { getArrowFieldId } from '../../arrow/arrow-schema.js';
import type { FfiBatch } from '../../arrow/arrow-ffi.js';
import { readColumnValues } from '../../arrow/arrow-to-values.js';

/** Rows per Arrow batch a read hands over, from either decoder; larger batches mean fewer conversions to set up. */
export const READ_BATCH_ROWS = 65_536;

/** Some rows of a file as Arrow columns, by Iceberg field id (a field the file lacks has none). */
export interface DataBatch {
  length: number;
  columns: Map<number, arrow.Data>;
}

/** Batches parquet-wasm handed over through the Arrow C Data Interface (arrow-ffi.ts), columns by field id. */
export function ffiBatchesOf(batches: FfiBatch[]): DataBatch[] {
  return batches.map((batch) => {
    const columns = new Map<number, arrow.Data>();
    batch.fields.forEach((f, k) => {
      const id = getArrowFieldId(f);
      if (id !== undefined) columns.set(id, batch.columns[k]);
    });
    return { length: batch.length, columns };
  });
}

/** An Arrow table's batches (floe's own decoder's, or parquet-wasm's IPC route), columns by field id. */
export function batchesOf(table: arrow.Table): DataBatch[] {
  const ids: (number | undefined)[] = table.schema.fields.map((f) => getArrowFieldId(f));
  return table.batches.map((batch) => {
    const columns = new Map<number, arrow.Data>();
    ids.forEach((id, k) => {
      if (id !== undefined) columns.set(id, batch.data.children[k]);
    });
    return { length: batch.numRows, columns };
  });
}

/**
 * Rows of a batch projected onto `schema` by field id (null for a field the file lacks): every row,
 * or only the rows at `positions` (ascending, within the batch), so a filtered read builds objects only
 * for what it returns.
 * @throws ValidationError when a column cannot be read as its field's type
 */
export function batchRows(schema: StructType, batch: DataBatch, positions?: Int32Array): Row[] {
  const fields = schema.fields;
  const n = positions ? positions.length : batch.length;
  const columns: (Value[] | undefined)[] = fields.map((f) => {
    const data = batch.columns.get(f.id);
    return data === undefined ? undefined : readColumnValues(f.type, data, f.name, positions);
  });
  const rows: Row[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const row: Row = {};
    for (let j = 0; j < fields.length; j++) {
      const column = columns[j];
      row[fields[j].name] = column === undefined ? null : column[i];
    }
    rows[i] = row;
  }
  return rows;
}
