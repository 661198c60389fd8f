/**
 * Replace delete files (Iceberg Java's RewriteFiles over delete files only, as its
 * RewritePositionDeleteFiles and the equality-to-position conversions commit): some delete files
 * removed, others that delete exactly the same rows added, no data file touched, in one snapshot.
 *
 * The operation is `replace`, as BaseRewriteFiles answers for every rewrite: the table's rows are the
 * same before and after for every reader that applies deletes, and a reader that ignores deletes sees
 * the same data files. (Compaction's rewrite-files.ts says `overwrite` when it applies deletes while
 * rewriting data: rows move between data files there; here no data file changes.) Incremental readers
 * skip `replace` snapshots, which is right: nothing was added or deleted.
 *
 * The added delete files take the new snapshot's sequence number. They name rows of data files whose
 * data sequence numbers are below the removed files' own, so they apply to every row they name.
 * Which delete files may be replaced on a base is the caller's validation.
 *
 * The one data file it may add is one whose every row an added deletion vector deletes (a v3 version
 * carrier, cdc/version-carriers.ts): no reader sees a row of it, so the rows stay the same.
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import type { DataFile } from '../../spec/types.js';
import type { ManifestWithEntries } from '../snapshot-manifests.js';
import { type PreparedSnapshot, prepareSnapshot } from '../snapshot-producer.js';
import { markRemoved } from './mark-removed.js';

export interface ReplacedDeleteFiles {
  /** Paths of the delete files removed. */
  removedDeleteFiles: ReadonlySet<string>;
  /** Delete files (content 1) that delete the rows the removed ones did. */
  addedDeleteFiles: DataFile[];
  /** Data files the added deletion vectors delete whole (v3 version carriers). @default none */
  addedDataFiles?: DataFile[];
  /** The base's current manifests with their entries, as the caller read them to validate. */
  manifests: readonly ManifestWithEntries[];
  summary: Record<string, string>;
}

/**
 * The change that replaces the delete files on `base`.
 * @throws Error when a manifest of the base was not among `manifests`; whatever writing manifests throws
 */
export async function replaceDeleteFiles(
  base: LoadedTable,
  files: ReplacedDeleteFiles,
): Promise<{ kind: 'change'; change: PreparedSnapshot }> {
  const loaded = new Map(files.manifests.map((m) => [m.manifest.manifest_path, m]));
  const written: string[] = [];
  const change = await prepareSnapshot(base, {
    operation: 'replace',
    addedDataFiles: files.addedDataFiles ?? [],
    addedDeleteFiles: files.addedDeleteFiles,
    summary: files.summary,
    parentManifests: files.manifests.map((m) => m.manifest),
    rewriteExisting: async (b, carried, snapshotId) => {
      const marked = await markRemoved(b, carried, loaded, snapshotId, files.removedDeleteFiles);
      written.push(...marked.written);
      return marked;
    },
  });
  change.attemptFiles.push(...written);
  return { kind: 'change', change };
}
