/**
 * Merge-append, as Iceberg's default: once a snapshot would carry `commit.manifest.min-count-to-merge`
 * (default 100) manifests of one content type and spec, the small ones (below
 * `commit.manifest.target-size-bytes`, default 8 MiB) are rewritten into few, so planning a scan
 * after thousands of commits reads a handful of manifests instead of thousands.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { joinLocation } from '../io/location.js';
import { readManifestEntries } from '../manifest/manifest-reader.js';
import { writeManifest } from '../manifest/manifest-writer.js';
import { schemaById, specById } from '../spec/metadata.js';
import { groupBy } from './group-by.js';
import { readCommitProperties, readWriteProperties } from '../spec/table-properties.js';
import type { ManifestEntry, ManifestFile, Schema } from '../spec/types.js';

export interface MergeOptions {
  snapshotId: bigint;
  metadataDir: string;
  attempt: string;
  schema: Schema;
}

/** Returns the manifests to carry (merged where due) and the files written for the merge. */
export async function mergeManifests(
  base: LoadedTable,
  manifests: ManifestFile[],
  options: MergeOptions,
): Promise<{ manifests: ManifestFile[]; written: string[] }> {
  const commit = readCommitProperties(base.metadata.properties);
  if (!commit.manifestMergeEnabled) return { manifests, written: [] };
  const minCount = commit.manifestMinCountToMerge;
  const target = BigInt(commit.manifestTargetSizeBytes);

  const groups = groupBy(manifests, (m) => `${m.content}/${m.partition_spec_id}`);
  const out: ManifestFile[] = [];
  const written: string[] = [];
  for (const group of groups.values()) {
    // +1: the manifest this commit adds counts towards the threshold, as in Java's merge-append.
    if (group.length + 1 < minCount) {
      out.push(...group);
      continue;
    }
    const bins: ManifestFile[][] = [];
    let bin: ManifestFile[] = [];
    let binSize = 0n;
    for (const m of group) {
      if (m.manifest_length >= target) {
        out.push(m);
        continue;
      }
      if (binSize + m.manifest_length > target && bin.length > 0) {
        bins.push(bin);
        bin = [];
        binSize = 0n;
      }
      bin.push(m);
      binSize += m.manifest_length;
    }
    if (bin.length > 0) bins.push(bin);
    for (const b of bins) {
      if (b.length === 1) {
        out.push(b[0]);
        continue;
      }
      const location = joinLocation(options.metadataDir, `${options.attempt}-merged${written.length}.avro`);
      out.push(await mergeBin(base, b, location, options));
      written.push(location);
    }
  }
  return { manifests: out, written };
}

async function mergeBin(
  base: LoadedTable,
  bin: ManifestFile[],
  location: string,
  options: MergeOptions,
): Promise<ManifestFile> {
  const entries: ManifestEntry[] = [];
  for (const m of bin) {
    for (const e of await readManifestEntries(base.io, m)) {
      if (e.status === 2) continue; // deleted entries only matter to the snapshot that deleted them
      entries.push({ ...e, status: 0 }); // inheritance already applied: ids and sequence numbers are explicit
    }
  }
  const first = bin[0];
  const merged = await writeManifest({
    io: base.io,
    location,
    schema: schemaById(base.metadata, options.schema['schema-id']) ?? options.schema,
    spec: specById(base.metadata, first.partition_spec_id),
    content: first.content,
    snapshotId: options.snapshotId,
    entries,
    codec: readWriteProperties(base.metadata.properties).avroCodec,
    // v3: the EXISTING entries carry the first_row_id they inherited, so their rows keep their ids
    formatVersion: base.metadata['format-version'],
  });
  // bigint: Math.min does not apply
  let minSeq = entries.length > 0 ? entries[0].sequence_number! : first.min_sequence_number;
  for (const e of entries) if (e.sequence_number! < minSeq) minSeq = e.sequence_number!;
  // Added to the table by this snapshot: its own sequence number is assigned at commit (-1n).
  return { ...merged, sequence_number: -1n, min_sequence_number: minSeq };
}
