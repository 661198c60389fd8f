/**
 * Carries a base snapshot's manifests into a new snapshot that removes some files: manifests holding
 * none of them are carried as they are; the others are rewritten with those files as DELETED entries
 * (stamped with the new snapshot id, as Iceberg Java's ManifestFilterManager does) and every other live
 * entry as EXISTING with its ids and sequence numbers kept. DELETED entries of earlier snapshots are
 * dropped: they only mattered to the snapshot that deleted them.
 */
import { randomUUID } from 'node:crypto';
import type { LoadedTable } from '../../catalog/catalog.js';
import { joinLocation } from '../../io/location.js';
import { writeManifest } from '../../manifest/manifest-writer.js';
import { currentSchema, specById } from '../../spec/metadata.js';
import type { DataFile, ManifestEntry, ManifestFile } from '../../spec/types.js';
import { readWriteProperties } from '../../spec/table-properties.js';
import type { ManifestWithEntries } from '../snapshot-manifests.js';

export interface MarkRemovedResult {
  manifests: ManifestFile[];
  removed: DataFile[];
  /** Manifests written (garbage if the commit does not land). */
  written: string[];
}

/**
 * What names a file to remove: its path, and for a deletion vector also its blob's offset (one Puffin
 * file holds the vectors of many data files). Never throws.
 */
export function deleteFileKey(file: DataFile): string {
  return file.content === 1 && file.content_offset !== undefined && file.content_offset !== null
    ? `${file.file_path}#${file.content_offset}`
    : file.file_path;
}

/**
 * @param loaded the base's manifests with their entries, already read (by path)
 * @param remove the files to remove, by deleteFileKey
 * @param options.skipUnloaded carry a manifest that was not loaded as it is (the caller knows it holds
 *   none of them), instead of failing
 * @throws Error when a manifest of `manifests` was not loaded; whatever writing throws
 */
export async function markRemoved(
  base: LoadedTable,
  manifests: readonly ManifestFile[],
  loaded: ReadonlyMap<string, ManifestWithEntries>,
  snapshotId: bigint,
  remove: ReadonlySet<string>,
  options: { skipUnloaded?: boolean } = {},
): Promise<MarkRemovedResult> {
  const md = base.metadata;
  const schema = currentSchema(md);
  const codec = readWriteProperties(md.properties).avroCodec;
  const attempt = randomUUID();
  const out: MarkRemovedResult = { manifests: [], removed: [], written: [] };
  for (const manifest of manifests) {
    const entries = loaded.get(manifest.manifest_path)?.entries;
    if (!entries && options.skipUnloaded) {
      out.manifests.push(manifest);
      continue;
    }
    if (!entries) throw new Error(`manifest ${manifest.manifest_path} was not loaded`);
    if (!entries.some((e) => e.status !== 2 && remove.has(deleteFileKey(e.data_file)))) {
      out.manifests.push(manifest);
      continue;
    }
    const rewritten: ManifestEntry[] = [];
    for (const e of entries) {
      if (e.status === 2) continue;
      if (remove.has(deleteFileKey(e.data_file))) {
        rewritten.push({ ...e, status: 2, snapshot_id: snapshotId });
        out.removed.push(e.data_file);
      } else {
        rewritten.push({ ...e, status: 0 });
      }
    }
    const location = joinLocation(md.location, 'metadata', `${attempt}-d${out.written.length}.avro`);
    out.written.push(location);
    out.manifests.push(
      await writeManifest({
        io: base.io,
        location,
        schema,
        spec: specById(md, manifest.partition_spec_id),
        content: manifest.content,
        snapshotId,
        entries: rewritten,
        codec,
        formatVersion: md['format-version'],
      }),
    );
  }
  return out;
}
