/**
 * The versions (change-version.ts) the table holds for some keys: read, for those keys only, from
 * the live rows (a scan filtered on the key columns, reading the key and `_kafka` only), from the
 * live equality delete files and key-versions files (write-changes.ts: position delete rows that name
 * no data file; both carry the key and `_kafka` as extra columns), and from v3's version carriers
 * (version-carriers.ts: data files whose rows a deletion vector deletes, so the scan never yields
 * them; read whole, found among the scan's own files). Files whose key bounds rule out every key are
 * skipped. Tables written before carriers were data files hold them as equality deletes named
 * `key-versions-`: read as any equality delete. A late CDC batch asks this for its keys, to leave
 * alone the keys the table already holds newer changes of.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { readDataFile } from '../data/parquet/read/read-data-file.js';
import type { KeyColumn } from '../routing/table-mode.js';
import type { Expression, Literal } from '../scan/expression.js';
import { planScan } from '../scan/plan-scan.js';
import { readScan } from '../scan/read-scan.js';
import { readPath } from '../scan/read-columns.js';
import { tupleKey } from '../scan/value-key.js';
import { compareValues, decodeValue } from '../spec/conversions.js';
import { currentSchema, currentSnapshot } from '../spec/metadata.js';
import type { DataFile, Row, StructType, Value } from '../spec/types.js';
import { mapLimited } from '../table/map-limited.js';
import { readSnapshotManifests } from '../table/snapshot-manifests.js';
import { addVersion, type KeyVersions, type LineageFields } from './change-version.js';
import type { ChangeKey } from './record-key.js';
import { keySchema } from './write-changes.js';
import { isKeyVersionsFile, isVersionCarrierDataFile } from '../scan/delete-index.js';

/** Past this many distinct values a key column is filtered by its range, not by `in`. */
const IN_LIMIT = 1000;
const READ_CONCURRENCY = 4;
/** Key column types whose values bind as filter literals and compare by their bounds as they are. */
const FILTERABLE = new Set(['int', 'long', 'string']);

function filterableColumns(columns: readonly KeyColumn[]): number[] {
  return columns.flatMap((c, i) => (FILTERABLE.has(c.type) ? [i] : []));
}

/** Per key column, the smallest and largest value among the keys. */
function columnRange(keys: readonly ChangeKey[], i: number): [Value, Value] {
  let min = keys[0].values[i];
  let max = min;
  for (const k of keys) {
    const v = k.values[i];
    if (compareValues(v, min) < 0) min = v;
    if (compareValues(v, max) > 0) max = v;
  }
  return [min, max];
}

/**
 * A filter every row of the keys matches (and few others): per filterable key column, `in` its
 * values, or its range when they are many. Undefined when no key column is filterable. Never throws.
 */
export function keysFilter(
  columns: readonly KeyColumn[],
  keys: readonly ChangeKey[],
): Expression | undefined {
  const terms = filterableColumns(columns).map((i): Expression => {
    const term = columns[i].path.join('.');
    const values = [...new Map(keys.map((k) => [tupleKey([k.values[i]]), k.values[i] as Literal])).values()];
    if (values.length <= IN_LIMIT) return { op: 'in', term, values };
    const [min, max] = columnRange(keys, i);
    return {
      op: 'and',
      left: { op: 'gt-eq', term, value: min as Literal },
      right: { op: 'lt-eq', term, value: max as Literal },
    };
  });
  return terms.length === 0 ? undefined : terms.reduce((left, right) => ({ op: 'and', left, right }));
}

/** Whether a delete file's key bounds admit some of the keys (no bounds: it may). Never throws. */
function mayHoldKeys(
  file: DataFile,
  columns: readonly KeyColumn[],
  ranges: Map<number, [Value, Value]>,
): boolean {
  try {
    for (const [i, [min, max]] of ranges) {
      const id = columns[i].id;
      const lower = file.lower_bounds?.get(id);
      const upper = file.upper_bounds?.get(id);
      if (lower && compareValues(decodeValue(columns[i].type, lower), max) > 0) return false;
      // String upper bounds may be truncated, and then say nothing certain.
      if (
        upper &&
        columns[i].type !== 'string' &&
        compareValues(decodeValue(columns[i].type, upper), min) < 0
      )
        return false;
    }
  } catch {
    // Bounds that do not decode say nothing.
  }
  return true;
}

/** Whether a file's key-column bounds admit some of `keys` (no bounds: it may). Never throws. */
export function boundsAdmitKeys(
  file: DataFile,
  columns: readonly KeyColumn[],
  keys: readonly ChangeKey[],
): boolean {
  if (keys.length === 0) return false;
  const ranges = new Map(filterableColumns(columns).map((i) => [i, columnRange(keys, i)] as const));
  return mayHoldKeys(file, columns, ranges);
}

/** The struct a delete file is read with: its key columns, and `_kafka` (optional: older files lack it). */
function deleteReadStruct(
  table: LoadedTable,
  columns: readonly KeyColumn[],
  lineage: LineageFields,
): StructType {
  const keys = keySchema(currentSchema(table.metadata), new Set(columns.map((c) => c.id)));
  const optional = (f: LineageFields['topic']) => ({ ...f, required: false });
  const kafka = {
    ...lineage.field,
    required: false,
    type: {
      type: 'struct' as const,
      fields: [optional(lineage.topic), optional(lineage.partition), optional(lineage.offset)],
    },
  };
  return { type: 'struct', fields: [...keys.fields.filter((f) => f.id !== lineage.field.id), kafka] };
}

async function liveDeleteFiles(table: LoadedTable, keyIds: readonly number[]): Promise<DataFile[]> {
  const snapshot = currentSnapshot(table.metadata);
  if (!snapshot) return [];
  const manifests = await readSnapshotManifests(
    table.io,
    snapshot,
    (m) => m.content === 1 && m.added_files_count + m.existing_files_count > 0,
  );
  const sameKey = (ids: readonly number[] | null | undefined) =>
    ids !== null &&
    ids !== undefined &&
    ids.length === keyIds.length &&
    ids.every((id) => keyIds.includes(id));
  return manifests
    .flatMap((m) => m.entries)
    .filter(
      (e) =>
        e.status !== 2 &&
        ((e.data_file.content === 2 && sameKey(e.data_file.equality_ids)) || isKeyVersionsFile(e.data_file)),
    )
    .map((e) => e.data_file);
}

/**
 * The versions the table (at its loaded snapshot) holds for `keys`, by key text; a key the table
 * holds no version of is absent.
 * @throws NotFoundError / TransientIOError / ValidationError from planning, reading manifests and files
 */
export async function readKeyVersions(
  table: LoadedTable,
  columns: readonly KeyColumn[],
  keys: readonly ChangeKey[],
  lineage: LineageFields,
): Promise<Map<string, KeyVersions>> {
  const versions = new Map<string, KeyVersions>();
  if (keys.length === 0) return versions;
  const wanted = new Set(keys.map((k) => k.text));
  const note = (row: Row) => {
    const text = tupleKey(columns.map((c) => readPath(row, c.path)));
    if (!wanted.has(text)) return;
    let held = versions.get(text);
    if (!held) {
      held = new Map();
      versions.set(text, held);
    }
    addVersion(held, row[lineage.field.name]);
  };

  const schema = currentSchema(table.metadata);
  const tops = new Set([...columns.map((c) => c.path[0]), lineage.field.name]);
  const projection: StructType = { type: 'struct', fields: schema.fields.filter((f) => tops.has(f.name)) };
  // The filter prunes files; rows are matched by key text here (an `in` of many values per row is slow).
  const plan = await planScan(table, { filter: keysFilter(columns, keys) });
  for await (const row of readScan(table, plan, { schema: projection })) note(row);
  // Already pruned by the filter, as every data file of the scan.
  const carriers = plan.tasks
    .filter((t) => isVersionCarrierDataFile(table.metadata, t.file))
    .map((t) => t.file);

  const ranges = new Map(filterableColumns(columns).map((i) => [i, columnRange(keys, i)] as const));
  const files = [
    ...(
      await liveDeleteFiles(
        table,
        columns.map((c) => c.id),
      )
    ).filter((f) => mayHoldKeys(f, columns, ranges)),
    ...carriers,
  ];
  const struct = deleteReadStruct(table, columns, lineage);
  const read = await mapLimited(files, READ_CONCURRENCY, (f) => readDataFile(table.io, f.file_path, struct));
  for (const rows of read) for (const row of rows) note(row);
  return versions;
}
