/**
 * Orphan file removal (Iceberg Java's DeleteOrphanFiles): lists everything under the table location and
 * deletes the files that nothing reaches and that are older than a safety window.
 *
 * Reachable: the manifest lists, manifests and every file any manifest names (DELETED entries too — the
 * conservative choice) of every snapshot still in the metadata; the current metadata file and the
 * metadata log; statistics files; and, for the embedded catalog's layout, `version-hint.text` and every
 * `v<N>.metadata.json` (it finds the latest version by probing v1, v2, ... when the hint is missing, so
 * no version file may go). The window protects what commits in flight have written but not yet
 * committed (Iceberg's default: 3 days); a file younger than it is never removed.
 *
 * Only the table's own files go (io/confined-delete.ts): a folder under the location that holds another
 * table's metadata keeps all its files, and a location that does not hold the table's current metadata
 * (edited, or a catalog's wrong answer) is not trusted at all — nothing is listed or deleted there.
 * A dry run chooses the files by the same code and stops before deleting them.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { checkTableLocation, isFreshLiveCacheFile, TableArea } from '../io/confined-delete.js';
import { normalizeLocation } from '../io/location.js';
import { refuseUnwritableVersion } from '../spec/format-version.js';
import { type DeleteRefusals, reportRefusals } from './delete-refusals.js';
import { collectReachable } from './reachable-files.js';

export { normalizeLocation };

export interface OrphanOptions {
  /** Only files last modified before `now - olderThanMs` may go. */
  olderThanMs: number;
  nowMs?: number;
  /** List the orphans, delete nothing. */
  dryRun?: boolean;
  /** Orphans named in the result (the result may travel in a Step Functions state). @default 100 */
  sampleSize?: number;
}

export interface OrphanResult extends DeleteRefusals {
  /**
   * `skipped`: floe cannot or must not clean the table's storage (S3 Tables; a location it cannot confirm
   * as the table's own — `skipped` says why).
   */
  status: 'removed' | 'dry-run' | 'skipped';
  skipped?: string;
  filesScanned: number;
  /** Orphans the run deletes (a dry run: would delete). */
  orphans: number;
  orphanBytes: number;
  removed: number;
  failures: number;
  /** The first orphans found, up to `sampleSize`. */
  sample: string[];
}

/** A result for a run that lists and deletes nothing. Never throws. */
export function skippedOrphanRun(reason: string): OrphanResult {
  return {
    status: 'skipped',
    skipped: reason,
    filesScanned: 0,
    orphans: 0,
    orphanBytes: 0,
    removed: 0,
    failures: 0,
    sample: [],
    ...reportRefusals([]),
  };
}

const EMBEDDED_METADATA = /\/metadata\/(?:v\d+\.metadata\.json|version-hint\.text)$/;

function statisticsPaths(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list
    .map((s) => (s as Record<string, unknown> | null)?.['statistics-path'])
    .filter((p): p is string => typeof p === 'string');
}

/**
 * Finds (and unless `dryRun`, deletes) the table's orphan files.
 * @throws NotFoundError / TransientIOError / ValidationError from listing and reading metadata
 * @throws UnsupportedFeatureError for a table floe does not write (a version other than 2 or 3, a v3 type)
 */
export async function removeOrphanFiles(table: LoadedTable, options: OrphanOptions): Promise<OrphanResult> {
  const md = table.metadata;
  refuseUnwritableVersion(md, 'the table');
  const now = options.nowMs ?? Date.now();
  const cutoff = now - options.olderThanMs;
  const reachable = await collectReachable(table.io, md.snapshots);
  const known = new Set<string>();
  const add = (location: string) => known.add(normalizeLocation(location));
  for (const l of reachable.manifestLists) add(l);
  for (const l of reachable.manifests.keys()) add(l);
  for (const l of reachable.namedFiles) add(l);
  add(table.metadataLocation);
  for (const entry of md['metadata-log'] ?? []) add(entry['metadata-file']);
  for (const p of [...statisticsPaths(md.statistics), ...statisticsPaths(md['partition-statistics'])]) add(p);

  const unconfirmed = checkTableLocation(table);
  if (unconfirmed) return skippedOrphanRun(unconfirmed);
  const listed = await table.io.list(md.location);
  const candidates = listed.filter(
    (f) =>
      f.lastModifiedMs < cutoff &&
      !known.has(normalizeLocation(f.location)) &&
      !EMBEDDED_METADATA.test(f.location) &&
      // A live cache `floe serve` may still be serving (its own TTL sweep removes it).
      !isFreshLiveCacheFile(md.location, f, now),
  );
  const area = new TableArea(table, { files: listed, under: [md.location] });
  const sampleSize = options.sampleSize ?? 100;
  const result = (allowed: string[], refused: DeleteRefusals): OrphanResult => {
    const chosen = new Set(allowed);
    const orphans = candidates.filter((f) => chosen.has(f.location));
    return {
      status: options.dryRun ? 'dry-run' : 'removed',
      filesScanned: listed.length,
      orphans: orphans.length,
      orphanBytes: orphans.reduce((s, f) => s + f.size, 0),
      removed: 0,
      failures: 0,
      sample: allowed.slice(0, sampleSize),
      ...refused,
    };
  };
  const locations = candidates.map((f) => f.location);
  if (options.dryRun) {
    const confined = await area.confine(locations);
    return result(confined.allowed, reportRefusals(confined.refused, sampleSize));
  }
  const outcome = await area.delete(locations);
  return {
    ...result(outcome.allowed, reportRefusals(outcome.refused, sampleSize)),
    removed: outcome.deleted.length,
    failures: outcome.failed.length,
  };
}
