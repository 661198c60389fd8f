/**
 * The index entries one snapshot of the main table makes true, from the files it added and removed
 * (its own manifest entries): every row of an added data file is a live entry (a compaction's outputs
 * too: their rows moved, the new entries supersede the old); every row of a removed data file, and
 * every row an added position delete file names, is a dead entry (index-entries.ts: a dead entry
 * kills a key only if it names the key's current row, so a compaction's removed inputs and deletes of
 * rows already dead are harmless). Key-versions rows (cdc/write-changes.ts) give the dead entries of
 * their key the deleting change's version.
 *
 * A deletion vector (v3) names its data file's deleted positions: dead entries like a position delete
 * file's (it also repeats the file's older positions, already dead: harmless). On v3, floe carries a
 * deleted key's version in a version carrier (cdc/version-carriers.ts): a data file whose every row
 * the snapshot's own deletion vector deletes. Its rows are versions of dead keys, never live entries:
 * read like a key-versions file, and the vector deleting them makes no entry (a later removal of the
 * file makes dead entries of rows never live: harmless). A file named like a carrier without such a
 * vector of all its rows in its snapshot is not floe's carrier: its rows are live entries. Tables written before hold carriers as equality
 * deletes named `key-versions-`, read the same way. Any other equality delete names no position to
 * turn into entries cheaply: a snapshot adding one is `unreadable`, and the index is rebuilt from a
 * scan instead (rebuild-index.ts).
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { lineageFields, lineageIds } from '../cdc/change-version.js';
import { keySchema } from '../cdc/write-changes.js';
import { POSITION_DELETE_SCHEMA } from '../cdc/write-position-deletes.js';
import { readDataFile } from '../data/parquet/read/read-data-file.js';
import { KAFKA_FIELD } from '../records/kafka-lineage.js';
import type { KeyColumn } from '../routing/table-mode.js';
import { readPath } from '../scan/read-columns.js';
import {
  isKeyVersionsFile,
  isVersionCarrierDataFile,
  isVersionCarrierFile,
  KEY_VERSIONS_NAME,
} from '../scan/delete-index.js';
import { loadDeletionVector } from '../scan/deletion-vectors.js';
import { tupleKey } from '../scan/value-key.js';
import { currentSchema } from '../spec/metadata.js';
import type { DataFile, Row, Snapshot, StructType } from '../spec/types.js';
import { mapLimited } from '../table/map-limited.js';
import { readSnapshotManifests } from '../table/snapshot-manifests.js';
import type { EntryVersion, IndexEntry } from './index-entries.js';

const READ_CONCURRENCY = 4;

/** Keys already known by position (path → position → key text): the rows a batch located. */
export type KeyHints = ReadonlyMap<string, ReadonlyMap<number, string>>;

export type SnapshotFacts =
  | { kind: 'entries'; entries: IndexEntry[] }
  | { kind: 'unreadable'; reason: string };

/** Reads rows' keys (and versions) of the main table's files, each data file once. */
export class KeyReader {
  private readonly keyStruct: StructType;
  private readonly rowStruct: StructType;
  private readonly hasLineage: boolean;
  private readonly cache = new Map<string, Promise<string[]>>();

  constructor(
    private readonly main: LoadedTable,
    private readonly columns: readonly KeyColumn[],
    private readonly hints: KeyHints = new Map(),
  ) {
    const schema = currentSchema(main.metadata);
    const ids = new Set(columns.map((c) => c.id));
    this.keyStruct = keySchema(schema, ids);
    const lineage = lineageFields(schema);
    this.hasLineage = lineage !== undefined;
    this.rowStruct = lineage ? keySchema(schema, new Set([...ids, ...lineageIds(lineage)])) : this.keyStruct;
  }

  /** The key text of a row. Never throws. */
  keyOf(row: Row): string {
    return tupleKey(this.columns.map((c) => readPath(row, c.path)));
  }

  /** The `_kafka` version of a row, when it has one. Never throws. */
  versionOf(row: Row): EntryVersion | null {
    if (!this.hasLineage) return null;
    const k = row[KAFKA_FIELD];
    if (k === null || typeof k !== 'object' || Array.isArray(k) || k instanceof Uint8Array) return null;
    const { topic, partition, offset } = k as Row;
    const part = typeof partition === 'bigint' ? Number(partition) : partition;
    return typeof topic === 'string' && typeof part === 'number' && typeof offset === 'bigint'
      ? { topic, partition: part, offset }
      : null;
  }

  /** Every row of a data file with its key and version, in position order. @throws as readDataFile */
  async rows(path: string): Promise<{ key: string; version: EntryVersion | null }[]> {
    const rows = await readDataFile(this.main.io, path, this.rowStruct);
    return rows.map((r) => ({ key: this.keyOf(r), version: this.versionOf(r) }));
  }

  /** The key of the row at `pos` of a data file (undefined past its end). @throws as readDataFile */
  async keyAt(path: string, pos: number): Promise<string | undefined> {
    const hinted = this.hints.get(path)?.get(pos);
    if (hinted !== undefined) return hinted;
    let keys = this.cache.get(path);
    if (keys === undefined) {
      keys = readDataFile(this.main.io, path, this.keyStruct).then((rows) => rows.map((r) => this.keyOf(r)));
      this.cache.set(path, keys);
    }
    return (await keys)[pos];
  }

  /** A key-versions file's rows: key → the deleting change's version. @throws as readDataFile */
  async versions(file: DataFile): Promise<Map<string, EntryVersion>> {
    const out = new Map<string, EntryVersion>();
    for (const row of await readDataFile(this.main.io, file.file_path, this.rowStruct)) {
      const version = this.versionOf(row);
      if (version) out.set(this.keyOf(row), version);
    }
    return out;
  }
}

/** A position delete file's rows (path, position). @throws as readDataFile */
async function deletedPositions(main: LoadedTable, file: DataFile): Promise<[string, number][]> {
  const rows = await readDataFile(main.io, file.file_path, POSITION_DELETE_SCHEMA);
  return rows.flatMap((r): [string, number][] =>
    typeof r.file_path === 'string' && !r.file_path.endsWith(`/data/${KEY_VERSIONS_NAME}`)
      ? [[r.file_path, Number(r.pos)]]
      : [],
  );
}

/**
 * The entries `snapshot` of `main` makes true (see the file comment), or why they cannot be read.
 * @throws NotFoundError / TransientIOError / ValidationError from reading manifests and files
 */
export async function snapshotFacts(
  main: LoadedTable,
  snapshot: Snapshot,
  reader: KeyReader,
): Promise<SnapshotFacts> {
  const id = snapshot['snapshot-id'];
  const seq = BigInt(snapshot['sequence-number']);
  const own = await readSnapshotManifests(main.io, snapshot, (m) => m.added_snapshot_id === id);
  const added: DataFile[] = [];
  const removed: DataFile[] = [];
  const deletes: DataFile[] = [];
  const vectors: DataFile[] = [];
  const carriers: DataFile[] = [];
  for (const { entries } of own) {
    for (const entry of entries) {
      if (entry.snapshot_id !== id || entry.status === 0) continue;
      const file = entry.data_file;
      if (entry.status === 1 && isVersionCarrierDataFile(main.metadata, file)) carriers.push(file);
      else if (file.content === 0) (entry.status === 1 ? added : removed).push(file);
      else if (entry.status === 1 && file.content === 2 && !isVersionCarrierFile(main.metadata, file))
        return { kind: 'unreadable', reason: `snapshot ${id} added equality deletes (${file.file_path})` };
      else if (entry.status === 1 && file.content === 1 && file.file_format === 'PUFFIN') vectors.push(file);
      else if (entry.status === 1 && file.content !== 2 && file.file_format !== 'PARQUET')
        return {
          kind: 'unreadable',
          reason: `snapshot ${id} added a ${file.file_format} delete file (${file.file_path})`,
        };
      else if (entry.status === 1) deletes.push(file);
    }
  }
  // A carrier is versions only with its vector of every row beside it; a file merely named like one
  // (another writer's) holds live rows.
  const versionsOnly = new Set<string>();
  for (const file of carriers) {
    const vector = vectors.find((v) => v.referenced_data_file === file.file_path);
    if (vector?.record_count === file.record_count) {
      versionsOnly.add(file.file_path);
      deletes.push(file);
    } else added.push(file);
  }
  const rowsOf = async (file: DataFile, live: boolean): Promise<IndexEntry[]> =>
    (await reader.rows(file.file_path)).map((r, pos) => ({
      key: r.key,
      filePath: file.file_path,
      pos: BigInt(pos),
      live,
      seq,
      version: r.version,
    }));
  // Files in manifest order, rows in file order: the same snapshot always gives the same entries.
  const entries: IndexEntry[] = [
    ...(await mapLimited(added, READ_CONCURRENCY, (f) => rowsOf(f, true))).flat(),
    ...(await mapLimited(removed, READ_CONCURRENCY, (f) => rowsOf(f, false))).flat(),
  ];
  const versions = new Map<string, EntryVersion>();
  const dead: { path: string; pos: number }[] = [];
  await mapLimited(deletes, READ_CONCURRENCY, async (file) => {
    if (isKeyVersionsFile(file) || file.content !== 1)
      for (const [k, v] of await reader.versions(file)) versions.set(k, v);
    else for (const [path, pos] of await deletedPositions(main, file)) dead.push({ path, pos });
  });
  await mapLimited(vectors, READ_CONCURRENCY, async (file) => {
    const path = file.referenced_data_file;
    if (path === undefined || path === null || versionsOnly.has(path)) return;
    for (const pos of (await loadDeletionVector(main.io, file)).positions())
      dead.push({ path, pos: Number(pos) });
  });
  const keys = await mapLimited(dead, READ_CONCURRENCY, (d) => reader.keyAt(d.path, d.pos));
  dead.forEach((d, i) => {
    const key = keys[i];
    // A position past the file's end names no row: nothing to record.
    if (key === undefined) return;
    entries.push({
      key,
      filePath: d.path,
      pos: BigInt(d.pos),
      live: false,
      seq,
      version: versions.get(key) ?? null,
    });
  });
  return { kind: 'entries', entries };
}
