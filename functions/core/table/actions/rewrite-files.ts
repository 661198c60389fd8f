/**
 * Rewrite files (Iceberg's RewriteFiles, iceberg-rust's transaction/rewrite_files.rs): compaction's
 * change — data files replaced by the files that hold their rows, and delete files that no longer
 * apply to anything removed with them, in one snapshot. `replace` when rows are only moved; `overwrite`
 * when deletes were applied while rewriting or delete files are removed (rows change for a reader that
 * ignored deletes).
 *
 * The new files keep the data sequence number of the snapshot the rewrite started from, so equality
 * deletes committed while it ran still apply to them. On a format-version 3 table the new files carry
 * their rows' `_row_id` and `_last_updated_sequence_number` as columns (maintenance/lineage-columns.ts):
 * the row ids this snapshot hands their manifest (table/row-lineage.ts) go unused, as in Iceberg Java. Which files may be replaced on a base is the
 * caller's validation (maintenance/rewrite-validation.ts); this builds the snapshot that replaces them.
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import type { DataFile } from '../../spec/types.js';
import type { ManifestWithEntries } from '../snapshot-manifests.js';
import { type PreparedSnapshot, prepareSnapshot } from '../snapshot-producer.js';
import { markRemoved } from './mark-removed.js';

export interface RewrittenFiles {
  /** Paths of the data files the new files replace. */
  removedDataFiles: readonly string[];
  /**
   * Delete files that apply to nothing once those are gone, by deleteFileKey (a deletion vector by its
   * Puffin path and blob offset).
   */
  removedDeleteFiles: ReadonlySet<string>;
  addedDataFiles: DataFile[];
  /** Whether deletes were applied to the rows as they were rewritten. */
  deletesApplied: boolean;
  /** The sequence number of the snapshot the rewrite started from. */
  dataSequenceNumber: bigint;
  /** The base's current manifests with their entries, as the caller read them to validate. */
  manifests: readonly ManifestWithEntries[];
  summary: Record<string, string>;
}

/** The operation of a rewrite's snapshot (see the file comment). Never throws. */
export function rewriteOperation(files: {
  removedDeleteFiles: ReadonlySet<string>;
  deletesApplied: boolean;
}): 'replace' | 'overwrite' {
  return files.removedDeleteFiles.size > 0 || files.deletesApplied ? 'overwrite' : 'replace';
}

/**
 * The change that replaces the files on `base`.
 * @throws ValidationError when a manifest of the base was not among `manifests`; whatever writing throws
 */
export async function rewriteFiles(
  base: LoadedTable,
  files: RewrittenFiles,
): Promise<{ kind: 'change'; change: PreparedSnapshot }> {
  const remove = new Set([...files.removedDataFiles, ...files.removedDeleteFiles]);
  const loaded = new Map(files.manifests.map((m) => [m.manifest.manifest_path, m]));
  const written: string[] = [];
  const change = await prepareSnapshot(base, {
    operation: rewriteOperation(files),
    addedDataFiles: files.addedDataFiles,
    addedDeleteFiles: [],
    summary: files.summary,
    dataSequenceNumber: files.dataSequenceNumber,
    parentManifests: files.manifests.map((m) => m.manifest),
    rewriteExisting: async (b, carried, snapshotId) => {
      const marked = await markRemoved(b, carried, loaded, snapshotId, remove);
      written.push(...marked.written);
      return marked;
    },
  });
  change.attemptFiles.push(...written);
  return { kind: 'change', change };
}
