/**
 * Deletion vectors for located rows (format-version 3: the spec's "Deletion Vectors"): one Puffin
 * file per call, one `deletion-vector-v1` blob per data file named, and a manifest entry per blob
 * (content 1, file_format PUFFIN, `referenced_data_file`, `content_offset`, `content_size_in_bytes`,
 * `record_count` = the vector's cardinality; the data file's spec and partition).
 *
 * A snapshot holds at most one live DV per data file, and a new DV must hold every position deleted
 * before (readers may ignore position delete files once a DV applies). So each vector is the union of
 * the new positions, the file's current DV, and the positions older Parquet position delete files
 * (from before an upgrade to v3) name in it, read from the base snapshot the rows were located in;
 * the current DVs it supersedes are returned to be removed in the same commit. A Parquet position delete
 * file is never removed here: it may name other data files too.
 * On another base the merge may be wrong (another writer replaced a DV of the same data file):
 * positions-hold.ts sends the batch back to locate and write again then.
 *
 * The same Puffin file also takes the vectors of data files the commit itself adds and deletes whole
 * (version-carriers.ts): every position of each, with nothing earlier to merge.
 */
import { randomUUID } from 'node:crypto';
import type { LoadedTable } from '../catalog/catalog.js';
import { readArrowFile, readFieldValues } from '../data/parquet/read/read-arrow-columns.js';
import { DeletionVector } from '../deletes/deletion-vector.js';
import { writeDeletionVectorFile } from '../deletes/deletion-vector-file.js';
import { ValidationError } from '../errors.js';
import { joinLocation } from '../io/location.js';
import { isDeletionVector } from '../manifest/manifest-entry-codec.js';
import { DeleteIndex, POSITION_DELETE_FILE_PATH_ID, POSITION_DELETE_POS_ID } from '../scan/delete-index.js';
import { loadDeletionVector } from '../scan/deletion-vectors.js';
import { currentSnapshot, specById } from '../spec/metadata.js';
import type { DataFile, ManifestEntry } from '../spec/types.js';
import { readSnapshotManifests } from '../table/snapshot-manifests.js';
import type { RowLocation } from './locate-rows.js';

/** The files a by-position delete adds, and the delete files of the base they supersede. */
export interface PositionDeleteFiles {
  /** New delete files: Parquet position delete files (v2) or deletion vectors (v3). */
  added: DataFile[];
  /** Deletion vectors of the base the new ones replace: removed in the same commit. */
  replaced: DataFile[];
}

/**
 * Writes one Puffin file of deletion vectors for `rows`, each merged with what already deletes rows of
 * its data file in `table`'s current snapshot, and for every row of each of `wholeFiles` (data files
 * the same commit adds: nothing deletes them yet).
 * @throws ValidationError when a named data file is not live in the snapshot, or a position is out of
 *   range; CorruptDeletionVectorError / CorruptPuffinError for a current DV that does not read
 * @throws NotFoundError / TransientIOError from reading manifests and delete files, and writing
 */
export async function writeDeletionVectors(
  table: LoadedTable,
  rows: readonly RowLocation[],
  prefix: string,
  wholeFiles: readonly DataFile[] = [],
): Promise<PositionDeleteFiles> {
  const byFile = new Map<string, RowLocation[]>();
  for (const row of rows) {
    const list = byFile.get(row.file.file_path);
    if (list) list.push(row);
    else byFile.set(row.file.file_path, [row]);
  }
  if (byFile.size === 0 && wholeFiles.length === 0) return { added: [], replaced: [] };
  const earlier = byFile.size > 0 ? await EarlierDeletes.of(table, new Set(byFile.keys())) : undefined;
  const paths = [...byFile.keys()].sort();
  const replaced: DataFile[] = [];
  const vectors = [];
  const named = new Map<string, { file: DataFile; specId: number }>();
  for (const path of paths) {
    const vector = new DeletionVector();
    vector.addAll(byFile.get(path)!.map((r) => r.pos));
    replaced.push(...(await earlier!.mergeInto(path, vector)));
    vectors.push({ referencedDataFile: path, vector });
    const { file, specId } = byFile.get(path)![0];
    named.set(path, { file, specId });
  }
  for (const file of wholeFiles) {
    const vector = new DeletionVector();
    for (let pos = 0n; pos < file.record_count; pos++) vector.add(pos);
    vectors.push({ referencedDataFile: file.file_path, vector });
    named.set(file.file_path, { file, specId: file.spec_id });
  }
  const { bytes, vectors: written } = writeDeletionVectorFile(vectors);
  const location = joinLocation(table.metadata.location, 'data', `${prefix}dv-${randomUUID()}.puffin`);
  await table.io.write(location, bytes);
  const added = written.map((v): DataFile => {
    const { file, specId } = named.get(v.referencedDataFile)!;
    return {
      content: 1,
      file_path: location,
      file_format: 'PUFFIN',
      spec_id: specId,
      partition: file.partition,
      record_count: BigInt(v.cardinality),
      file_size_in_bytes: BigInt(bytes.length),
      referenced_data_file: v.referencedDataFile,
      content_offset: BigInt(v.contentOffset),
      content_size_in_bytes: BigInt(v.contentSizeInBytes),
    };
  });
  return { added, replaced };
}

/** The live deletes of a snapshot that name the given data files, and those files' sequence numbers. */
class EarlierDeletes {
  private readonly parquetPositions = new Map<string, Promise<Map<string, bigint[]>>>();

  private constructor(
    private readonly table: LoadedTable,
    private readonly index: DeleteIndex,
    private readonly dataFiles: Map<string, ManifestEntry>,
  ) {}

  /** @throws as writeDeletionVectors */
  static async of(table: LoadedTable, paths: ReadonlySet<string>): Promise<EarlierDeletes> {
    const md = table.metadata;
    const index = new DeleteIndex();
    const dataFiles = new Map<string, ManifestEntry>();
    const snapshot = currentSnapshot(md);
    const manifests = snapshot ? await readSnapshotManifests(table.io, snapshot) : [];
    for (const { entries } of manifests) {
      for (const entry of entries) {
        const file = entry.data_file;
        if (entry.status === 2) continue;
        if (file.content === 0 && paths.has(file.file_path)) dataFiles.set(file.file_path, entry);
        if (file.content !== 1) continue;
        const named = isDeletionVector(file) ? paths.has(file.referenced_data_file ?? '') : true;
        if (!named) continue;
        const seq = entry.sequence_number ?? 0n;
        index.add({ file, dataSequenceNumber: seq, specId: file.spec_id }, specById(md, file.spec_id));
      }
    }
    return new EarlierDeletes(table, index, dataFiles);
  }

  /**
   * Adds the positions the snapshot already deletes in `path` to `vector`; returns the DV it replaces.
   * @throws as writeDeletionVectors
   */
  async mergeInto(path: string, vector: DeletionVector): Promise<DataFile[]> {
    const entry = this.dataFiles.get(path);
    if (!entry) {
      throw new ValidationError(`data file ${path} has rows to delete but is not live in the table`);
    }
    const spec = specById(this.table.metadata, entry.data_file.spec_id);
    const replaced: DataFile[] = [];
    for (const ref of this.index.forDataFile(entry.data_file, entry.sequence_number ?? 0n, spec)) {
      if (ref.file.content !== 1) continue;
      if (isDeletionVector(ref.file)) {
        vector.merge(await loadDeletionVector(this.table.io, ref.file));
        replaced.push(ref.file);
      } else {
        vector.addAll((await this.positionsIn(ref.file)).get(path) ?? []);
      }
    }
    return replaced;
  }

  /** A Parquet position delete file as data file path → positions, read once. */
  private positionsIn(file: DataFile): Promise<Map<string, bigint[]>> {
    let loading = this.parquetPositions.get(file.file_path);
    if (!loading) {
      loading = readPositionDeleteFile(this.table, file);
      this.parquetPositions.set(file.file_path, loading);
    }
    return loading;
  }
}

/** @throws ValidationError for a row without file_path or pos; whatever reading throws */
async function readPositionDeleteFile(table: LoadedTable, file: DataFile): Promise<Map<string, bigint[]>> {
  const deletes = await readArrowFile(table.io, file.file_path);
  const paths = readFieldValues(deletes, [POSITION_DELETE_FILE_PATH_ID], 'string', 'file_path');
  const positions = readFieldValues(deletes, [POSITION_DELETE_POS_ID], 'long', 'pos');
  const byPath = new Map<string, bigint[]>();
  for (let i = 0; i < paths.length; i++) {
    const path = paths[i];
    const pos = positions[i];
    if (typeof path !== 'string' || typeof pos !== 'bigint') {
      throw new ValidationError(`position delete file ${file.file_path} has a row without file_path or pos`);
    }
    const list = byPath.get(path);
    if (list) list.push(pos);
    else byPath.set(path, [pos]);
  }
  return byPath;
}
