/**
 * Every manifest and manifest entry of a snapshot, read once, for what needs the whole picture:
 * maintenance (rewrite validation, manifest rewrites, reachability) and a late CDC batch's key versions
 * (every live equality delete file).
 */
import type { FileIO } from '../io/file-io.js';
import { readManifestEntries } from '../manifest/manifest-reader.js';
import { readManifestList } from '../manifest/manifest-list.js';
import type { ManifestEntry, ManifestFile, Snapshot } from '../spec/types.js';
import { mapLimited } from './map-limited.js';

export interface ManifestWithEntries {
  manifest: ManifestFile;
  /** Inheritance applied: snapshot ids and sequence numbers are explicit. */
  entries: ManifestEntry[];
}

/**
 * The manifests of a snapshot with their entries (DELETED ones included), in manifest-list order.
 * @throws NotFoundError / TransientIOError / ValidationError from reading the list and the manifests
 */
export async function readSnapshotManifests(
  io: FileIO,
  snapshot: Snapshot,
  /** Only the manifests this keeps are opened. @default every manifest */
  keep: (manifest: ManifestFile) => boolean = () => true,
): Promise<ManifestWithEntries[]> {
  const manifests = (await readManifestList(io, snapshot['manifest-list'])).filter(keep);
  return mapLimited(manifests, 8, async (manifest) => ({
    manifest,
    entries: await readManifestEntries(io, manifest),
  }));
}
