/**
 * The fewest requests one batch's commit can make, request by request, for each catalog the bench
 * counts — and for every request a commit makes beyond them, why floe makes it. The issue asks for the
 * minimum or, above it, each request named with its reason: `aboveMinimum` gives exactly that list, and
 * a request kind with no reason here is reported as unexplained.
 *
 * Minimum: one PUT per data or delete file, one manifest per content type, one manifest list, the new
 * metadata and the pointer swap (one conditional create for the embedded catalog), one read of the
 * current state, and the lock's acquire and release.
 */
export type CatalogKind = 'local' | 'embedded-s3' | 's3tables';

export interface AboveMinimum {
  request: string;
  extra: number;
  why: string;
}

const LOCK = { 'dynamodb.UpdateItem(acquire)': 1, 'dynamodb.UpdateItem(release)': 1 };

/** The minimum, by request kind as counting.ts names them. */
export function minimumBreakdown(
  kind: CatalogKind,
  dataFiles: number,
  deleteFiles: number,
): Record<string, number> {
  const manifests = (dataFiles > 0 ? 1 : 0) + (deleteFiles > 0 ? 1 : 0);
  const files = dataFiles + deleteFiles;
  if (kind === 'local') {
    return {
      'write data': files,
      'write manifest': manifests,
      'write manifest-list': 1,
      'read metadata.json': 1,
      'writeIfAbsent metadata.json': 1,
    };
  }
  if (kind === 'embedded-s3') {
    return {
      ...LOCK,
      's3.PutObject data': files,
      's3.PutObject manifest': manifests,
      's3.PutObject manifest-list': 1,
      's3.GetObject metadata.json': 1,
      's3.PutObject metadata.json': 1,
    };
  }
  return {
    ...LOCK,
    's3.PutObject data': files,
    's3.PutObject manifest': manifests,
    's3.PutObject manifest-list': 1,
    's3.PutObject metadata.json': 1,
    's3tables.GetTableMetadataLocation': 1,
    's3tables.UpdateTableMetadataLocation': 1,
  };
}

const MANIFEST_LIST =
  "the parent snapshot's manifest list: the new list carries the parent's manifests forward, so it is read before the new one is written";
const VERSION_HINT_READ =
  "the embedded catalog's version-hint.text: which metadata.json is current (Iceberg's file-system table layout)";
const VERSION_PROBE =
  "the embedded catalog's version checks (does metadata v(N) or v(N+1) exist): the hint can lag behind the newest metadata.json, so floe looks for v(N+1) before it trusts v(N)";
const VERSION_HINT_WRITE =
  'the hint moved to the new version after the conditional create, for readers that start from it (DuckDB, Spark with a Hadoop catalog)';

const WHY: Record<string, string> = {
  'read manifest-list': MANIFEST_LIST,
  's3.GetObject manifest-list': MANIFEST_LIST,
  'read version-hint': VERSION_HINT_READ,
  's3.GetObject version-hint': VERSION_HINT_READ,
  'exists metadata.json': VERSION_PROBE,
  's3.HeadObject metadata.json': VERSION_PROBE,
  's3.HeadObject metadata.json failed': `${VERSION_PROBE}; counted as failed when the answer is 404 (no such version: the hint is current)`,
  'write version-hint': VERSION_HINT_WRITE,
  's3.PutObject version-hint': VERSION_HINT_WRITE,
  's3.GetObject metadata.json':
    'the current metadata.json, when this process has not read or written that version itself (its first commit, or another writer committed since)',
  'dynamodb.UpdateItem(heartbeat)':
    'the lock lease extended: the commit held it longer than a heartbeat interval',
};

/** Each request kind counted more often than the minimum, with how many more and why. */
export function aboveMinimum(
  measured: Record<string, number>,
  minimum: Record<string, number>,
): AboveMinimum[] {
  const above: AboveMinimum[] = [];
  for (const [request, count] of Object.entries(measured)) {
    const extra = count - (minimum[request] ?? 0);
    if (extra > 0)
      above.push({ request, extra, why: WHY[request] ?? 'not explained: a request floe should not need' });
  }
  return above;
}
