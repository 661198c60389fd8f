/**
 * The DuckDB anchor of the keyed-deletes section: a full scan of a keyed table's live rows in plain
 * SQL over its Parquet files, with the Iceberg spec's delete rules written out (DuckDB has no Iceberg
 * planning here: the file lists and sequence numbers come from floe's plan, outside the timed query,
 * as the scan section gives DuckDB its file list).
 *
 * - A position delete (file_path, pos) removes the row at `file_row_number` of the data file it names
 *   when the delete's data sequence number is ≥ the data file's.
 * - An equality delete removes the data rows with the same key when its data sequence number is
 *   strictly greater than the data file's (a batch's new rows survive the deletes committed beside them).
 *
 * The table must be unpartitioned (every delete is then global in its kind; the bench's table is):
 * partition scoping is left out of the SQL, so a partitioned table is refused rather than read wrong.
 * The rows are materialised into a temporary table (every column decoded, as floe's reader builds
 * every row), then counted.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { LoadedTable } from '../../functions/core/catalog/catalog.js';
import { fromFileUri } from '../../functions/core/io/location.js';
import { currentSchema, specById } from '../../functions/core/spec/metadata.js';
import type { ScanPlan } from '../../functions/core/scan/scan-plan.js';

const sql = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** One file of the scan with the data sequence number that scopes its deletes. */
interface SequencedFile {
  uri: string;
  seq: bigint;
}

/** The live files of a plan by kind (a delete file applying to many data files counted once). */
export interface ScanFiles {
  data: SequencedFile[];
  positionDeletes: SequencedFile[];
  equalityDeletes: SequencedFile[];
  /** The key's column names (of the equality delete files' `equality_ids`). */
  keyColumns: string[];
}

/**
 * The files of a planned full scan, sorted into data, position and equality deletes.
 * @throws Error for a partitioned table (the SQL does not scope deletes by partition), or equality
 *   deletes on other columns than one top-level key
 */
export function scanFiles(table: LoadedTable, plan: ScanPlan): ScanFiles {
  const schema = currentSchema(table.metadata);
  const data: SequencedFile[] = [];
  const deletes = new Map<string, SequencedFile & { content: number; ids: number[] }>();
  for (const task of plan.tasks) {
    if (specById(table.metadata, task.specId).fields.length > 0)
      throw new Error('keyed-deletes SQL: the table is partitioned');
    data.push({ uri: task.file.file_path, seq: task.dataSequenceNumber });
    for (const d of task.deletes) {
      deletes.set(d.file.file_path, {
        uri: d.file.file_path,
        seq: d.dataSequenceNumber,
        content: d.file.content,
        ids: d.file.equality_ids ?? [],
      });
    }
  }
  const all = [...deletes.values()];
  const equality = all.filter((d) => d.content === 2);
  const ids = new Set(equality.flatMap((d) => d.ids));
  const keyColumns = [...ids].map((id) => {
    const field = schema.fields.find((f) => f.id === id);
    if (!field) throw new Error(`keyed-deletes SQL: equality id ${id} is not a top-level column`);
    return field.name;
  });
  if (equality.some((d) => d.ids.length !== keyColumns.length))
    throw new Error('keyed-deletes SQL: equality deletes on different columns');
  return {
    data,
    positionDeletes: all.filter((d) => d.content === 1),
    equalityDeletes: equality,
    keyColumns,
  };
}

/** `(path DuckDB reads, URI the deletes name, file number, seq)` rows of a VALUES list. */
function fileValues(files: SequencedFile[]): string {
  return files.map((f, i) => `(${sql(fromFileUri(f.uri))}, ${sql(f.uri)}, ${i}, ${f.seq})`).join(', ');
}

const paths = (files: SequencedFile[]) => files.map((f) => sql(fromFileUri(f.uri))).join(', ');

/**
 * The query materialising the live rows of `files` (columns: every top-level column of the table).
 * Position deletes name their data file by URI: the (small) delete side maps it to the data file's
 * number, so the anti-join probes every data row with two integers, not a path string.
 */
export function liveRowsSql(files: ScanFiles, columns: readonly string[]): string {
  const dataFiles = `(values ${fileValues(files.data)}) f(path, uri, id, seq)`;
  const ctes = [
    `data as (
       select d.*, f.id, f.seq
       from read_parquet([${paths(files.data)}], filename = true, file_row_number = true) d
       join ${dataFiles} on d.filename = f.path)`,
  ];
  const conditions: string[] = [];
  if (files.positionDeletes.length > 0) {
    // Key-versions files carry the key and `_kafka` beside file_path/pos (union_by_name reads both
    // shapes); their rows name no data file, so the join to the data files drops them.
    ctes.push(`pdels as (
       select f.id, p.pos, g.seq
       from read_parquet([${paths(files.positionDeletes)}], filename = true, union_by_name = true) p
       join (values ${fileValues(files.positionDeletes)}) g(path, uri, id, seq) on p.filename = g.path
       join ${dataFiles} on p.file_path = f.uri)`);
    conditions.push(`not exists (
       select 1 from pdels
       where pdels.id = data.id and pdels.pos = data.file_row_number and pdels.seq >= data.seq)`);
  }
  if (files.equalityDeletes.length > 0) {
    const key = files.keyColumns;
    ctes.push(`edels as (
       select ${key.map((k) => `e.${k}`).join(', ')}, g.seq
       from read_parquet([${paths(files.equalityDeletes)}], filename = true, union_by_name = true) e
       join (values ${fileValues(files.equalityDeletes)}) g(path, uri, id, seq) on e.filename = g.path)`);
    conditions.push(`not exists (
       select 1 from edels
       where ${key.map((k) => `edels.${k} = data.${k}`).join(' and ')} and edels.seq > data.seq)`);
  }
  return `with ${ctes.join(',\n')}
     select ${columns.join(', ')} from data${conditions.length ? ` where ${conditions.join(' and ')}` : ''}`;
}

/**
 * Runs the scan: every live row materialised in a temporary table, then counted.
 * @throws whatever DuckDB throws for the query
 */
export async function duckdbLiveCount(duck: DuckDBConnection, query: string): Promise<number> {
  await duck.run(`create or replace temp table keyed_scan as ${query}`);
  const reader = await duck.runAndReadAll('select count(*) from keyed_scan');
  const count = Number(reader.getRows()[0][0]);
  await duck.run('drop table keyed_scan');
  return count;
}
