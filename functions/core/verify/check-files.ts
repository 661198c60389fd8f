/**
 * The metadata half of `floe verify`: every live entry of the snapshot registered once, every file the
 * snapshot references present at its recorded size, the manifest list's counts true to its manifests,
 * and the summary's totals true to the live entries.
 *
 * Streams one manifest at a time (its entries are dropped once counted); what stays in memory is one
 * string per live file, to find a file registered twice across manifests — O(live files), the size of
 * the table's metadata, never of its rows.
 *
 * Deletion vectors (v3) share Puffin files: one file holds the vectors of many data files, each its own
 * live entry naming a blob range, so a vector is one entry by its file and `content_offset`, a Puffin
 * file is stat'ed once however many entries name it, and a vector counts its blob's length toward
 * `total-files-size` (as Iceberg Java's summaries do). Two live vectors for one data file are a
 * `duplicate-file` finding: the spec allows one.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import type { FileIO } from '../io/file-io.js';
import { readManifestEntries } from '../manifest/manifest-reader.js';
import { readManifestList } from '../manifest/manifest-list.js';
import type { DataFile, ManifestFile, Snapshot } from '../spec/types.js';
import { isDeletionVector } from '../manifest/manifest-entry-codec.js';
import { mapLimited } from '../table/map-limited.js';
import type { FindingList } from './findings.js';

const CONTENT_NAMES = ['data file', 'position delete file', 'equality delete file'];
/** Files stat'ed at once: HEAD requests are cheap, and S3 takes thousands a second per prefix. */
const STAT_CONCURRENCY = 16;

/** The totals a snapshot summary carries, as the live entries give them. */
export interface LiveTotals {
  'total-records': bigint;
  'total-data-files': bigint;
  'total-delete-files': bigint;
  'total-position-deletes': bigint;
  'total-equality-deletes': bigint;
  'total-files-size': bigint;
}

/** What the metadata walk saw, for the report. */
export interface FileCheckCounts {
  manifests: bigint;
  liveFiles: bigint;
  filesStatted: bigint;
  totals: LiveTotals;
  /** False when the manifest list or a manifest is missing: the totals then count only what was read. */
  complete: boolean;
}

function emptyTotals(): LiveTotals {
  return {
    'total-records': 0n,
    'total-data-files': 0n,
    'total-delete-files': 0n,
    'total-position-deletes': 0n,
    'total-equality-deletes': 0n,
    'total-files-size': 0n,
  };
}

function addToTotals(totals: LiveTotals, file: DataFile): void {
  const vector = isDeletionVector(file);
  totals['total-files-size'] += vector ? (file.content_size_in_bytes ?? 0n) : file.file_size_in_bytes;
  if (file.content === 0) {
    totals['total-data-files']++;
    totals['total-records'] += file.record_count;
  } else {
    totals['total-delete-files']++;
    if (file.content === 1) totals['total-position-deletes'] += file.record_count;
    else totals['total-equality-deletes'] += file.record_count;
  }
}

/**
 * Stats `location` and reports it missing, or at another size than `size` when one is recorded.
 * Returns whether it exists.
 */
async function checkExists(
  io: FileIO,
  location: string,
  what: string,
  size: bigint | undefined,
  findings: FindingList,
): Promise<boolean> {
  const stat = await io.stat(location);
  if (stat === undefined) {
    findings.add({ check: 'missing-file', what: `${what} does not exist`, where: location, count: 1n });
    return false;
  }
  if (size !== undefined && BigInt(stat.size) !== size) {
    findings.add({
      check: 'file-size',
      what: `${what} is ${stat.size} bytes, the metadata records ${size}`,
      where: location,
      count: 1n,
    });
  }
  return true;
}

/** The manifest list's counts of a manifest against its entries. */
function checkManifestCounts(
  manifest: ManifestFile,
  counted: { added: number; existing: number; deleted: number; addedRows: bigint; existingRows: bigint },
  findings: FindingList,
): void {
  const pairs: [string, bigint, bigint][] = [
    ['added_files_count', BigInt(manifest.added_files_count ?? counted.added), BigInt(counted.added)],
    [
      'existing_files_count',
      BigInt(manifest.existing_files_count ?? counted.existing),
      BigInt(counted.existing),
    ],
    ['deleted_files_count', BigInt(manifest.deleted_files_count ?? counted.deleted), BigInt(counted.deleted)],
    ['added_rows_count', manifest.added_rows_count ?? counted.addedRows, counted.addedRows],
    ['existing_rows_count', manifest.existing_rows_count ?? counted.existingRows, counted.existingRows],
  ];
  for (const [name, listed, actual] of pairs) {
    if (listed === actual) continue;
    findings.add({
      check: 'manifest-counts',
      what: `the manifest list says ${name} = ${listed}, the manifest's entries give ${actual}`,
      where: manifest.manifest_path,
      count: 1n,
    });
  }
}

/**
 * Walks the snapshot's manifest list and manifests: duplicates, existence and sizes, manifest counts.
 * Returns the live totals for checkSummaryTotals.
 * @throws NotFoundError when the manifest list or a manifest cannot be read (reported by the caller as
 *   a finding: nothing past it can be checked); TransientIOError when a retry may help; ValidationError
 *   for files that are not manifests
 */
export async function checkFiles(
  table: LoadedTable,
  snapshot: Snapshot,
  findings: FindingList,
): Promise<FileCheckCounts> {
  const io = table.io;
  const counts: FileCheckCounts = {
    manifests: 0n,
    liveFiles: 0n,
    filesStatted: 0n,
    totals: emptyTotals(),
    complete: true,
  };
  counts.filesStatted++;
  if (!(await checkExists(io, snapshot['manifest-list'], 'manifest list', undefined, findings))) {
    counts.complete = false;
    return counts;
  }
  const manifests = await readManifestList(io, snapshot['manifest-list']);
  // path → where it was first seen, so a second registration names both places.
  const seen = new Map<string, string>();
  // Deletion vectors: referenced data file → where its vector was first seen.
  const vectors = new Map<string, string>();
  const statted = new Set<string>();
  const listedManifests = new Set<string>();
  for (const manifest of manifests) {
    counts.manifests++;
    if (listedManifests.has(manifest.manifest_path)) {
      findings.add({
        check: 'duplicate-file',
        what: 'manifest listed twice in the manifest list (every file in it counts twice)',
        where: manifest.manifest_path,
        count: 1n,
      });
      continue;
    }
    listedManifests.add(manifest.manifest_path);
    counts.filesStatted++;
    if (!(await checkExists(io, manifest.manifest_path, 'manifest', manifest.manifest_length, findings))) {
      counts.complete = false;
      continue;
    }
    const entries = await readManifestEntries(io, manifest);
    const counted = { added: 0, existing: 0, deleted: 0, addedRows: 0n, existingRows: 0n };
    const live: DataFile[] = [];
    for (const [i, entry] of entries.entries()) {
      const file = entry.data_file;
      if (entry.status === 2) {
        counted.deleted++;
        continue;
      }
      if (entry.status === 1) {
        counted.added++;
        counted.addedRows += file.record_count;
      } else {
        counted.existing++;
        counted.existingRows += file.record_count;
      }
      const here = `${manifest.manifest_path} entry ${i}`;
      const id = isDeletionVector(file)
        ? `${file.file_path} at offset ${file.content_offset}`
        : file.file_path;
      const first = seen.get(id);
      if (first !== undefined) {
        findings.add({
          check: 'duplicate-file',
          what: `${nameOf(file)} registered twice among the live entries (first at ${first}, again at ${here}); its rows count twice`,
          where: id,
          count: file.record_count,
        });
        continue;
      }
      seen.set(id, here);
      if (isDeletionVector(file)) checkOneVector(file, here, vectors, findings);
      addToTotals(counts.totals, file);
      counts.liveFiles++;
      if (statted.has(file.file_path)) continue;
      statted.add(file.file_path);
      live.push(file);
    }
    checkManifestCounts(manifest, counted, findings);
    await mapLimited(live, STAT_CONCURRENCY, (file) =>
      checkExists(
        io,
        file.file_path,
        isDeletionVector(file) ? 'Puffin file of deletion vectors' : nameOf(file),
        file.file_size_in_bytes,
        findings,
      ),
    );
    counts.filesStatted += BigInt(live.length);
  }
  return counts;
}

function nameOf(file: DataFile): string {
  return isDeletionVector(file) ? 'deletion vector' : (CONTENT_NAMES[file.content] ?? 'file');
}

/** A second live deletion vector for one data file is a finding: the spec allows one per snapshot. */
function checkOneVector(
  file: DataFile,
  here: string,
  vectors: Map<string, string>,
  findings: FindingList,
): void {
  const referenced = file.referenced_data_file ?? '';
  const first = vectors.get(referenced);
  if (first === undefined) {
    vectors.set(referenced, here);
    return;
  }
  findings.add({
    check: 'duplicate-file',
    what: `data file has two live deletion vectors (first at ${first}, again at ${here}); a snapshot holds at most one, and readers refuse the table`,
    where: referenced,
    count: 1n,
  });
}

/**
 * The summary's `total-*` against the live entries. A total the summary leaves out (some engines omit
 * them after a commit that could not count) is a note, not a finding: nothing claims a value.
 */
export function checkSummaryTotals(
  snapshot: Snapshot,
  totals: LiveTotals,
  findings: FindingList,
  notes: string[],
): void {
  const missing: string[] = [];
  for (const [key, actual] of Object.entries(totals) as [keyof LiveTotals, bigint][]) {
    const text = snapshot.summary[key];
    if (text === undefined) {
      missing.push(key);
      continue;
    }
    const claimed = /^\d+$/.test(text) ? BigInt(text) : undefined;
    if (claimed === actual) continue;
    findings.add({
      check: 'summary-total',
      what: `the summary says ${key} = ${text}, the live manifest entries give ${actual}`,
      where: `snapshot ${snapshot['snapshot-id']} summary ${key}`,
      count: claimed === undefined ? 1n : claimed > actual ? claimed - actual : actual - claimed,
    });
  }
  if (missing.length > 0) notes.push(`the snapshot summary has no ${missing.join(', ')}: not compared`);
}
