/**
 * Every manifest and manifest entry of a snapshot, read once, for the maintenance steps that need the
 * whole picture (rewrite validation, manifest rewrites, reachability).
 */
import type { FileIO } from '../io/file-io.js';
import { readManifestEntries } from '../manifest/manifest-reader.js';
import { readManifestList } from '../manifest/manifest-list.js';
import type { ManifestEntry, ManifestFile, Snapshot } from '../spec/types.js';

export interface ManifestWithEntries {
  manifest: ManifestFile;
  /** Inheritance applied: snapshot ids and sequence numbers are explicit. */
  entries: ManifestEntry[];
}

import { mapLimited } from '../table/map-limited.js';

/**
 * The manifests of a snapshot with their entries (DELETED ones included), in manifest-list order.
 * @throws NotFoundError / TransientIOError / ValidationError from reading the list and the manifests
 */
export async function readSnapshotManifests(io: FileIO, snapshot: Snapshot): Promise<ManifestWithEntries[]> {
  const manifests = await readManifestList(io, snapshot['manifest-list']);
  return mapLimited(manifests, 8, async (manifest) => ({
    manifest,
    entries: await readManifestEntries(io, manifest),
  }));
}
