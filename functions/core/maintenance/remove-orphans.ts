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
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { collectReachable } from './reachable-files.js';
import { mapLimited } from '../table/map-limited.js';

export interface OrphanOptions {
  /** Only files last modified before `now - olderThanMs` may go. */
  olderThanMs: number;
  nowMs?: number;
  /** List the orphans, delete nothing. */
  dryRun?: boolean;
  /** Orphans named in the result (the result may travel in a Step Functions state). @default 100 */
  sampleSize?: number;
}

export interface OrphanResult {
  /** `skipped`: the table's storage cannot be listed or cleaned by floe (S3 Tables). */
  status: 'removed' | 'dry-run' | 'skipped';
  filesScanned: number;
  orphans: number;
  orphanBytes: number;
  removed: number;
  failures: number;
  /** The first orphans found, up to `sampleSize`. */
  sample: string[];
}

/**
 * One spelling per file: `file:///a`, `file:/a` and `/a` are the same file, and so are `s3://`, `s3a://`
 * and `s3n://` (Iceberg Java's orphan removal equates the same schemes). Never throws.
 */
export function normalizeLocation(location: string): string {
  const local = /^file:(?:\/\/localhost)?\/*(\/.*)$/i.exec(location);
  if (local) return `/${local[1].replace(/^\/+/, '')}`;
  return location.replace(/^s3[an]?:\/\//i, 's3://').replace(/(?<!:)\/{2,}/g, '/');
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
 */
export async function removeOrphanFiles(table: LoadedTable, options: OrphanOptions): Promise<OrphanResult> {
  const md = table.metadata;
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

  const listed = await table.io.list(md.location);
  const orphans = listed.filter(
    (f) =>
      f.lastModifiedMs < cutoff &&
      !known.has(normalizeLocation(f.location)) &&
      !EMBEDDED_METADATA.test(f.location),
  );
  const result: OrphanResult = {
    status: options.dryRun ? 'dry-run' : 'removed',
    filesScanned: listed.length,
    orphans: orphans.length,
    orphanBytes: orphans.reduce((s, f) => s + f.size, 0),
    removed: 0,
    failures: 0,
    sample: orphans.slice(0, options.sampleSize ?? 100).map((f) => f.location),
  };
  if (options.dryRun) return result;
  const outcomes = await mapLimited(orphans, 8, (f) =>
    table.io.delete(f.location).then(
      () => true,
      () => false,
    ),
  );
  result.removed = outcomes.filter(Boolean).length;
  result.failures = outcomes.length - result.removed;
  return result;
}
