/**
 * floe's earlier v3 version carriers — equality deletes named `key-versions-` holding a deleted key and
 * its deleting change's `_kafka` (scan/delete-index.ts isVersionCarrierFile) — rewritten in the form
 * floe writes now (version-carriers.ts): data files whose every row a deletion vector deletes. The
 * equality-delete conversion (maintenance/convert-equality-deletes.ts) does it in the snapshot that
 * removes them, so a table written before becomes readable by PyIceberg and keeps its versions.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { readDataFile } from '../data/parquet/read/read-data-file.js';
import { ValidationError } from '../errors.js';
import { currentSchema } from '../spec/metadata.js';
import type { DataFile, Row, StructType } from '../spec/types.js';
import { lineageFields, lineageIds } from './change-version.js';
import { writeVersionCarriers } from './version-carriers.js';
import { keySchema } from './write-changes.js';

/**
 * The version carriers that replace `files` (earlier carriers): their rows (the key by the file's equality_ids, and
 * `_kafka`) written as version carriers of the current schema. Nothing is committed: the caller
 * commits them with their deletion vectors in the snapshot that removes `files`.
 * @throws ValidationError when the table has no `_kafka` lineage, or a file's equality_ids are not
 *   in the current schema; whatever reading and writeVersionCarriers throw
 */
export async function rewriteEqualityCarriers(
  table: LoadedTable,
  files: readonly DataFile[],
  prefix: string,
): Promise<DataFile[]> {
  if (files.length === 0) return [];
  const schema = currentSchema(table.metadata);
  const lineage = lineageFields(schema);
  if (!lineage) throw new ValidationError('a table without _kafka lineage holds no key versions');
  const rows: Row[] = [];
  for (const file of files) {
    const ids = file.equality_ids ?? [];
    const keys = keySchema(schema, new Set([...ids, ...lineageIds(lineage)]));
    const named = new Set<number>();
    const collect = (s: StructType): void => {
      for (const f of s.fields) {
        named.add(f.id);
        if (typeof f.type !== 'string' && f.type.type === 'struct') collect(f.type);
      }
    };
    collect(keys);
    if (ids.length === 0 || !ids.every((id) => named.has(id)))
      throw new ValidationError(
        `version carrier ${file.file_path}: its equality_ids [${ids.join(', ')}] are not columns of the table`,
      );
    rows.push(...(await readDataFile(table.io, file.file_path, keys)));
  }
  return rows.length === 0 ? [] : writeVersionCarriers(table, rows, schema, prefix);
}
