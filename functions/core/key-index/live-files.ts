/**
 * The main table's live data files by path, for turning index entries into RowLocations, without
 * planning a scan of every manifest per batch: manifests are immutable, so what one says is kept by its
 * path (and the manifest-list fields its entries inherit), and a new snapshot reads only its manifest
 * list and the manifests it does not share with the previous one — usually the one its commit wrote.
 * Only the manifests of each table's latest snapshot are kept; the cache holds a few tables.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import type { FileIO } from '../io/file-io.js';
import { readManifestList } from '../manifest/manifest-list.js';
import { readManifestEntries } from '../manifest/manifest-reader.js';
import { currentSnapshot } from '../spec/metadata.js';
import type { DataFile, ManifestFile } from '../spec/types.js';
import { mapLimited } from '../table/map-limited.js';

/** A live data file and the partition spec it was written with. */
export interface LiveFile {
  file: DataFile;
  specId: number;
}

interface TableFiles {
  snapshotId: bigint;
  manifests: Map<string, LiveFile[]>;
  files: Map<string, LiveFile>;
}

/** Tables whose files are kept (least recently used dropped first). */
const MAX_TABLES = 16;

const manifestKey = (m: ManifestFile) =>
  `${m.manifest_path}\u0000${m.sequence_number}\u0000${m.added_snapshot_id}\u0000${m.first_row_id ?? ''}`;

/** The live data files of a data manifest. @throws as readManifestEntries */
async function liveDataFiles(io: FileIO, manifest: ManifestFile): Promise<LiveFile[]> {
  const entries = await readManifestEntries(io, manifest);
  return entries
    .filter((e) => e.status !== 2 && e.data_file.content === 0)
    .map((e) => ({ file: e.data_file, specId: manifest.partition_spec_id }));
}

export class LiveFilesCache {
  private readonly tables = new Map<string, TableFiles>();

  /**
   * The live data files of `table`'s loaded snapshot by path (empty without a snapshot).
   * @throws NotFoundError / TransientIOError / ValidationError from reading the manifest list and manifests
   */
  async filesOf(table: LoadedTable): Promise<ReadonlyMap<string, LiveFile>> {
    const snapshot = currentSnapshot(table.metadata);
    if (snapshot === undefined) return new Map();
    const uuid = table.metadata['table-uuid'];
    const held = this.tables.get(uuid);
    this.tables.delete(uuid);
    if (held?.snapshotId === snapshot['snapshot-id']) {
      this.tables.set(uuid, held);
      return held.files;
    }
    const list = (await readManifestList(table.io, snapshot['manifest-list'])).filter((m) => m.content === 0);
    const read = await mapLimited(list, 8, async (m) => {
      const key = manifestKey(m);
      return [key, held?.manifests.get(key) ?? (await liveDataFiles(table.io, m))] as const;
    });
    const manifests = new Map(read);
    const files = new Map<string, LiveFile>();
    for (const live of manifests.values()) for (const f of live) files.set(f.file.file_path, f);
    this.tables.set(uuid, { snapshotId: snapshot['snapshot-id'], manifests, files });
    for (const other of this.tables.keys()) {
      if (this.tables.size <= MAX_TABLES) break;
      this.tables.delete(other);
    }
    return files;
  }

  /** Drops what is kept. Never throws. */
  clear(): void {
    this.tables.clear();
  }
}

/** The files this process keeps (module state, like sharedIndexViews). */
export const sharedLiveFiles = new LiveFilesCache();
