/**
 * A v3 table's row lineage as DuckDB reads it, with the spec's rules written in SQL and TypeScript here
 * rather than floe's: a live row's `_row_id` is the file's physical `_row_id` when non-null, else the
 * file's `first_row_id` + the row's position; its `_last_updated_sequence_number` is the physical value
 * when non-null, else the file's data sequence number. Rows are found live by duckdbLiveRows (deletion
 * vectors decoded by roaring-wasm).
 */
import type { LoadedTable } from '../../functions/core/catalog/catalog.js';
import { duckdbLiveRows, duckdbQuery, liveEntries, sqlString } from './readers.js';

export interface RowLineage {
  rowId: bigint | null;
  lastUpdated: bigint;
}

const local = (uri: string) => uri.replace(/^file:\/\//, '');

/** Each live row's lineage, by the value of its `key` column (as text). */
export async function duckdbRowLineage(table: LoadedTable, key: string): Promise<Map<string, RowLineage>> {
  const entries = await liveEntries(table);
  const data = entries.filter((e) => e.data_file.content === 0);
  if (data.length === 0) return new Map();
  const firstRowIds = new Map(data.map((e) => [e.data_file.file_path, e.data_file.first_row_id ?? null]));
  const files = data.map((e) => sqlString(local(e.data_file.file_path))).join(', ');
  const physical = await duckdbQuery(
    `select distinct name from parquet_schema([${files}]) where name in ('_row_id', '_last_updated_sequence_number')`,
  );
  const has = new Set(physical.map((r) => r.name));
  const columns = [
    `${key}::varchar as k`,
    'file_row_number',
    'uri',
    'seq::bigint as seq',
    has.has('_row_id') ? '_row_id' : 'null::bigint as _row_id',
    has.has('_last_updated_sequence_number')
      ? '_last_updated_sequence_number'
      : 'null::bigint as _last_updated_sequence_number',
  ];
  const rows = await duckdbLiveRows(table, columns, [key]);
  const out = new Map<string, RowLineage>();
  for (const r of rows) {
    const first = firstRowIds.get(String(r.uri));
    if (first === undefined) throw new Error(`row of ${String(r.uri)}, not a live data file`);
    const rowId =
      r._row_id !== null
        ? BigInt(r._row_id as bigint)
        : first === null
          ? null
          : first + BigInt(r.file_row_number as bigint);
    const lastUpdated =
      r._last_updated_sequence_number !== null
        ? BigInt(r._last_updated_sequence_number as bigint)
        : BigInt(r.seq as bigint);
    if (out.has(String(r.k))) throw new Error(`key ${String(r.k)} has two live rows`);
    out.set(String(r.k), { rowId, lastUpdated });
  }
  return out;
}
