/**
 * The files a set of snapshots reaches: their manifest lists, the manifests those list, and the data and
 * delete files in those manifests. Each manifest is read once, however many snapshots share it.
 */
import type { FileIO } from '../io/file-io.js';
import { readManifestEntries } from '../manifest/manifest-reader.js';
import { readManifestList } from '../manifest/manifest-list.js';
import type { ManifestEntry, ManifestFile, Snapshot } from '../spec/types.js';
import { mapLimited } from '../table/map-limited.js';

export interface ReachableFiles {
  manifestLists: Set<string>;
  /** Every manifest listed, by path. */
  manifests: Map<string, ManifestFile>;
  /** Data and delete files live (ADDED or EXISTING) in some manifest. */
  liveFiles: Set<string>;
  /** Every file any manifest names, DELETED entries included. */
  namedFiles: Set<string>;
}

/**
 * Reads what `snapshots` reach. `onManifest` sees every manifest's entries once (for callers that need
 * sizes or statuses too).
 * @throws NotFoundError / TransientIOError / ValidationError from reading lists and manifests
 */
export async function collectReachable(
  io: FileIO,
  snapshots: readonly Snapshot[],
  onManifest?: (manifest: ManifestFile, entries: ManifestEntry[]) => void,
): Promise<ReachableFiles> {
  const out: ReachableFiles = {
    manifestLists: new Set(),
    manifests: new Map(),
    liveFiles: new Set(),
    namedFiles: new Set(),
  };
  const lists = await mapLimited(snapshots, 8, async (s) => ({
    location: s['manifest-list'],
    manifests: await readManifestList(io, s['manifest-list']),
  }));
  for (const list of lists) {
    out.manifestLists.add(list.location);
    for (const m of list.manifests)
      if (!out.manifests.has(m.manifest_path)) out.manifests.set(m.manifest_path, m);
  }
  await mapLimited([...out.manifests.values()], 8, async (manifest) => {
    const entries = await readManifestEntries(io, manifest);
    for (const e of entries) {
      out.namedFiles.add(e.data_file.file_path);
      if (e.status !== 2) out.liveFiles.add(e.data_file.file_path);
    }
    onManifest?.(manifest, entries);
  });
  return out;
}
