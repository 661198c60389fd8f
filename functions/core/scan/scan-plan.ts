/** What planScan produces and readScan consumes. */
import type { DataFile } from '../spec/types.js';

/** A delete file that applies to a data file, with the data sequence number that scoped it. */
export interface DeleteFileRef {
  /** content 1 (position deletes) or 2 (equality deletes). */
  file: DataFile;
  dataSequenceNumber: bigint;
  specId: number;
}

/** One data file to read, with every delete file that applies to it. */
export interface FileScanTask {
  file: DataFile;
  dataSequenceNumber: bigint;
  specId: number;
  deletes: DeleteFileRef[];
}

/**
 * How many files each pruning stage let through, in the order the CLI prints them:
 * files in table → after partition pruning → after manifest summaries → after file stats.
 * Each stage removes a disjoint set of files, so the counts never increase:
 *
 * - `filesInTable`: live (ADDED or EXISTING) data files of every data manifest of the snapshot, before
 *   any pruning. For a manifest that is opened, its live entries are counted; for one skipped unread,
 *   the manifest list's added + existing file counts.
 * - `filesAfterPartitionPruning`: minus the files whose own partition tuple fails the filter's
 *   inclusive partition projection (only files in manifests that were opened can be judged this way).
 * - `filesAfterManifestSummaries`: minus every live file of data manifests skipped unread because
 *   their partition field summaries rule the filter out. (A skipped manifest's files would all have
 *   failed the tuple check too, so this count is exactly the files whose partition may match.)
 * - `filesAfterStats`: minus the files whose column metrics (counts, bounds) rule the filter out;
 *   equals `tasks.length`.
 *
 * `manifestsTotal` counts every manifest in the manifest list, data and delete;
 * `manifestsAfterPartitionSummaries` those whose summaries may match the filter. Delete manifests are
 * pruned by partition only (never by the data filter's column metrics).
 */
export interface ScanFunnel {
  manifestsTotal: number;
  manifestsAfterPartitionSummaries: number;
  filesInTable: number;
  filesAfterPartitionPruning: number;
  filesAfterManifestSummaries: number;
  filesAfterStats: number;
}

export interface ScanPlan {
  /** The snapshot scanned; null for a table with no snapshot (then there are no tasks). */
  snapshotId: bigint | null;
  tasks: FileScanTask[];
  funnel: ScanFunnel;
  /**
   * Manifests actually opened (≤ manifestsAfterPartitionSummaries: a manifest whose live-file counts
   * are zero holds only DELETED entries and is not opened).
   */
  manifestsRead: number;
  /** Bytes of metadata read while planning: the manifest list and the manifests opened. */
  bytesRead: number;
}
