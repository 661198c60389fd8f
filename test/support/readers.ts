/** Readers no one here wrote (DuckDB, icebird), wrapped for tests. */
import { DuckDBInstance } from '@duckdb/node-api';
import type { LoadedTable } from '../../functions/core/catalog/catalog.js';
import { readManifestEntries } from '../../functions/core/manifest/manifest-reader.js';
import { readManifestList } from '../../functions/core/manifest/manifest-list.js';
import { currentSnapshot } from '../../functions/core/spec/metadata.js';
import type { ManifestEntry } from '../../functions/core/spec/types.js';
import { positionsWithRoaring } from './roaring-dv.js';

/** Live manifest entries (data and deletes) of the table's current snapshot. */
export async function liveEntries(table: LoadedTable): Promise<ManifestEntry[]> {
  const snap = currentSnapshot(table.metadata);
  if (!snap) return [];
  const out: ManifestEntry[] = [];
  for (const m of await readManifestList(table.io, snap['manifest-list'])) {
    for (const e of await readManifestEntries(table.io, m)) if (e.status !== 2) out.push(e);
  }
  return out;
}

/** Runs SQL in a fresh single-threaded in-memory DuckDB; rows as plain objects (BigInts kept). */
export async function duckdbQuery(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(sql);
    return reader.getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** A SQL string literal. */
export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

const partitionText = (partition: Record<string, unknown>) =>
  JSON.stringify(partition, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));

/**
 * The live rows of a table by DuckDB, with the spec's delete rules written in SQL over the live files:
 * a position delete (file_path, pos) removes the row at `file_row_number` of the data file it names
 * when the delete's data sequence number is ≥ the data file's and both share spec and partition; an
 * equality delete removes data rows with the same `key` columns when its sequence number is strictly
 * greater and its spec is unpartitioned or its spec and partition are the data file's. A deletion vector
 * (v3) is a position delete of its referenced data file, its positions decoded by roaring-wasm
 * (roaring-dv.ts) and handed to DuckDB as rows. `local` maps a file's URI to the path DuckDB reads.
 */
export async function duckdbLiveRows(
  table: LoadedTable,
  columns: readonly string[],
  key: readonly string[],
  local: (uri: string) => string = (uri) => uri.replace(/^file:\/\//, ''),
): Promise<Record<string, unknown>[]> {
  const entries = await liveEntries(table);
  const of = (content: number) => entries.filter((e) => e.data_file.content === content);
  const [data, allPositions, equalities] = [of(0), of(1), of(2)];
  const isVector = (e: ManifestEntry) => e.data_file.file_format.toUpperCase() === 'PUFFIN';
  const positions = allPositions.filter((e) => !isVector(e));
  const vectorRows: string[] = [];
  for (const e of allPositions.filter(isVector)) {
    const f = e.data_file;
    const at = await positionsWithRoaring(
      local(f.file_path),
      Number(f.content_offset),
      Number(f.content_size_in_bytes),
    );
    const part = sqlString(partitionText(f.partition));
    const path = sqlString(f.referenced_data_file ?? '');
    for (const pos of at)
      vectorRows.push(`(${path}, ${pos}::bigint, ${e.sequence_number}, ${f.spec_id}, ${part})`);
  }
  if (data.length === 0) return [];
  const specFields = (id: number) =>
    table.metadata['partition-specs'].find((s) => s['spec-id'] === id)!.fields;
  const fileRows = (list: ManifestEntry[]) =>
    list
      .map((e) => {
        const f = e.data_file;
        const global = specFields(f.spec_id).length === 0;
        return `(${sqlString(local(f.file_path))}, ${sqlString(f.file_path)}, ${e.sequence_number}, ${f.spec_id}, ${sqlString(partitionText(f.partition))}, ${global})`;
      })
      .join(', ');
  const files = (list: ManifestEntry[]) =>
    list.map((e) => sqlString(local(e.data_file.file_path))).join(', ');
  const none = (select: string) => `select ${select} where false`;
  const parquetCte =
    positions.length === 0
      ? none("'' as file_path, 0::bigint as pos, 0 as seq, 0 as spec, '' as part")
      : `select p.file_path, p.pos, f.seq, f.spec, f.part
         from read_parquet([${files(positions)}], filename = true, union_by_name = true) p
         join (values ${fileRows(positions)}) f(path, uri, seq, spec, part, global) on p.filename = f.path`;
  const positionCte =
    vectorRows.length === 0
      ? parquetCte
      : `${parquetCte} union all select * from (values ${vectorRows.join(', ')}) v(file_path, pos, seq, spec, part)`;
  const keyList = key.map((k) => `e.${k}`).join(', ');
  const equalityCte =
    equalities.length === 0
      ? none(`${key.map((k) => `null as ${k}`).join(', ')}, 0 as seq, 0 as spec, '' as part, false as global`)
      : `select ${keyList}, f.seq, f.spec, f.part, f.global
         from read_parquet([${files(equalities)}], filename = true, union_by_name = true) e
         join (values ${fileRows(equalities)}) f(path, uri, seq, spec, part, global) on e.filename = f.path`;
  return duckdbQuery(
    `with data as (
       select d.*, f.uri, f.seq, f.spec, f.part
       from read_parquet([${files(data)}], filename = true, file_row_number = true, union_by_name = true) d
       join (values ${fileRows(data)}) f(path, uri, seq, spec, part, global) on d.filename = f.path
     ), pdels as (${positionCte}), edels as (${equalityCte})
     select ${columns.join(', ')} from data
     where not exists (
       select 1 from pdels
       where pdels.file_path = data.uri and pdels.pos = data.file_row_number and pdels.seq >= data.seq
         and pdels.spec = data.spec and pdels.part = data.part)
     and not exists (
       select 1 from edels
       where ${key.map((k) => `edels.${k} = data.${k}`).join(' and ')} and edels.seq > data.seq
         and (edels.global or (edels.spec = data.spec and edels.part = data.part)))`,
  );
}
