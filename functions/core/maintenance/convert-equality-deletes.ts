/**
 * Converts a table's equality delete files into position deletes, no data file rewritten (what Flink's
 * and Spark's ConvertEqualityDeletes actions do): PyIceberg refuses equality deletes and every reader
 * pays for them; position deletes every reader applies. A format-version 2 table gets Parquet position
 * delete files; a v3 table gets deletion vectors, each merged with its data file's current vector,
 * which leaves in the same snapshot (cdc/delete-positions.ts, the one writer of deletes by position).
 * floe's earlier v3 version carriers (equality deletes named `key-versions-`, whose rows are deleted by
 * position already: they carry deleted keys' versions) are converted too, into the form floe writes
 * now (cdc/rewrite-equality-carriers.ts): data files whose every row a vector deletes, added in the same
 * snapshot with their vectors; so the versions stay and the table becomes readable by PyIceberg. Such
 * a data file's rows are deleted already, so no equality delete matches them here.
 *
 * Only tables in `floe.delete-mode=position` (the default) are converted: a table set to `equality`
 * chose that form, and its next batch would write equality deletes again.
 *
 * The live equality delete files are taken in groups of at most
 * `floe.maintenance.convert-equality-deletes.max-file-group-size-bytes` (their keys are held in memory
 * while the data files they apply to are read). Per group: plan a scan (which scopes each delete by
 * spec, partition and sequence number, the spec's rule), find the rows the group's deletes match and no
 * position delete removes already (equality-matches.ts), write position deletes naming them, and commit
 * ONE `replace` snapshot that removes the group's files and adds those (table/actions/
 * replace-delete-files.ts). A group whose deletes match nothing is dropped the same way.
 *
 * Why the positions stay right: an equality delete E with sequence number s deletes rows of data files
 * with data sequence number < s only. The positions name exactly those rows as of the snapshot the group
 * was planned on. On a later base (another writer committed meanwhile) they still do unless
 *   - a data file the group's deletes applied to was removed (a compaction rewrote it: its rows sit at
 *     other positions in another file), or
 *   - a data file appeared with a data sequence number below the group's highest (only a compaction,
 *     keeping its starting sequence number, adds such files: E may apply to them);
 * or (v3) the deletion vector of a data file the group writes one for changed (a CDC batch merged its
own: the group's vector would either sit beside it or drop its positions),
then the group is planned again (at most MAX_ROUNDS times, then left for the next run). Files added
 * with new sequence numbers do not matter: E never applied to them, and the position deletes do not
 * either (they name rows of other files). A group whose files another run removed has nothing left
 * to do; one whose files were only partly removed is planned again.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import type { RowLocation } from '../cdc/locate-rows.js';
import { lineageFields } from '../cdc/change-version.js';
import { deletePositions, type PositionDeleteFiles } from '../cdc/delete-positions.js';
import { rewriteEqualityCarriers } from '../cdc/rewrite-equality-carriers.js';
import type { CommitLock } from '../lock/commit-lock.js';
import { planScan } from '../scan/plan-scan.js';
import { isDeletionVector } from '../manifest/manifest-entry-codec.js';
import { isVersionCarrierFile } from '../scan/delete-index.js';
import { currentSchema, currentSnapshot } from '../spec/metadata.js';
import { readIngestProperties, readMaintenanceProperties } from '../spec/table-properties.js';
import type { DataFile, ManifestEntry, TableIdentifier } from '../spec/types.js';
import { deleteFileKey } from '../table/actions/mark-removed.js';
import { replaceDeleteFiles } from '../table/actions/replace-delete-files.js';
import type { Noop, Stale } from '../table/actions/table-action.js';
import { carriedFloeSummary } from '../table/carried-summary.js';
import { commitAction } from '../table/commit-loop.js';
import { type ManifestWithEntries, readSnapshotManifests } from '../table/snapshot-manifests.js';
import { findEqualityMatches } from './equality-matches.js';

/** Plans of one group before it is left for the next run (each round lost a race with a rewrite). */
const MAX_ROUNDS = 3;

export interface ConvertOptions {
  lock?: CommitLock;
  deadlineMs?: number;
  now?: () => number;
  /** Report the groups; write and commit nothing. */
  dryRun?: boolean;
  /** Overrides `floe.maintenance.convert-equality-deletes.max-file-group-size-bytes`. */
  maxGroupBytes?: number;
}

export interface ConvertResult {
  status: 'converted' | 'nothing-to-convert' | 'skipped' | 'dry-run';
  /** Why the table is not converted (its delete mode, S3 Tables). */
  skipped?: string;
  /** Live equality delete files when the run began. */
  equalityDeleteFiles: number;
  groups: number;
  /** Equality delete files removed (converted, or dropped when they matched nothing). */
  equalityDeletesRemoved: number;
  /** Of those, the ones removed in groups that matched no live row (nothing left to delete). */
  equalityDeletesDropped: number;
  positionDeleteFilesAdded: number;
  /** Rows the added position deletes name. */
  rowsDeleted: number;
  snapshotIds: string[];
  groupsAbandoned: { index: number; reason: string }[];
  /** Groups not started before the deadline (the next run takes them). */
  groupsLeft: number;
  attempts: number;
  conflicts: number;
  /** Groups planned again because a rewrite moved rows they name (see the file comment). */
  replans: number;
}

/** Prefix of the position delete files a conversion writes. */
const FILE_PREFIX = 'floe-converted-';

/** An empty result with `status`. Never throws. */
export function convertReport(status: ConvertResult['status'], skipped?: string): ConvertResult {
  return {
    status,
    ...(skipped === undefined ? {} : { skipped }),
    equalityDeleteFiles: 0,
    groups: 0,
    equalityDeletesRemoved: 0,
    equalityDeletesDropped: 0,
    positionDeleteFilesAdded: 0,
    rowsDeleted: 0,
    snapshotIds: [],
    groupsAbandoned: [],
    groupsLeft: 0,
    attempts: 0,
    conflicts: 0,
    replans: 0,
  };
}

/**
 * THE call site that deletes rows the table's way: position delete files (v2), or deletion vectors
 * merged with the data files' current ones, which they replace, and those of new version carriers (v3).
 * @throws as deletePositions
 */
function deleteRows(
  table: LoadedTable,
  rows: readonly RowLocation[],
  carriers: readonly DataFile[],
): Promise<PositionDeleteFiles> {
  return deletePositions(table, rows, FILE_PREFIX, carriers);
}

const seqOf = (e: ManifestEntry): bigint => e.sequence_number ?? 0n;

function liveEntries(manifests: readonly ManifestWithEntries[]): ManifestEntry[] {
  return manifests.flatMap((m) => m.entries.filter((e) => e.status !== 2));
}

/** Equality delete files in groups of at most `maxBytes` (a larger file alone), oldest first. */
function groupDeletes(deletes: readonly ManifestEntry[], maxBytes: number): ManifestEntry[][] {
  const sorted = [...deletes].sort((a, b) =>
    seqOf(a) === seqOf(b)
      ? a.data_file.file_path.localeCompare(b.data_file.file_path)
      : seqOf(a) < seqOf(b)
        ? -1
        : 1,
  );
  const groups: ManifestEntry[][] = [];
  let bytes = 0;
  for (const entry of sorted) {
    const size = Number(entry.data_file.file_size_in_bytes);
    const last = groups.at(-1);
    if (last && bytes + size <= maxBytes) {
      last.push(entry);
      bytes += size;
    } else {
      groups.push([entry]);
      bytes = size;
    }
  }
  return groups;
}

async function snapshotManifests(table: LoadedTable): Promise<ManifestWithEntries[]> {
  const snapshot = currentSnapshot(table.metadata);
  return snapshot ? readSnapshotManifests(table.io, snapshot) : [];
}

/** What one group's round planned and wrote: what a base must still hold for it to commit. */
interface GroupRound {
  paths: Set<string>;
  maxSeq: bigint;
  snapshotId: bigint | null;
  /** Every live data file of the planned snapshot. */
  planned: Set<string>;
  /** The data files the group's deletes applied to. */
  scanned: Set<string>;
  /**
   * v3: per data file the group writes a vector for, the key (deleteFileKey) of the vector it merged
   * and replaces, or null when the file had none.
   */
  vectors: Map<string, string | null>;
}

/** The round's vectors as `vectors` wants them: each data file → the vector it replaces. Never throws. */
function mergedVectors(written: PositionDeleteFiles): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const f of written.added) if (isDeletionVector(f)) out.set(f.referenced_data_file ?? '', null);
  for (const f of written.replaced) out.set(f.referenced_data_file ?? '', deleteFileKey(f));
  return out;
}

/** How many of `paths` are live. Never throws. */
function liveOf(paths: ReadonlySet<string>, live: readonly ManifestEntry[]): number {
  return live.filter((e) => paths.has(e.data_file.file_path)).length;
}

/** Why the round's files do not fit `base`, or undefined when they do (see the file comment). */
function staleOn(round: GroupRound, live: readonly ManifestEntry[]): { gone: boolean; reason?: string } {
  const deletes = liveOf(round.paths, live);
  if (deletes === 0) return { gone: true };
  if (deletes < round.paths.size) return { gone: false, reason: 'some of its delete files were removed' };
  const data = live.filter((e) => e.data_file.content === 0);
  const liveData = new Set(data.map((e) => e.data_file.file_path));
  for (const path of round.scanned) {
    if (!liveData.has(path)) return { gone: false, reason: `data file ${path} was rewritten` };
  }
  const older = data.find((e) => !round.planned.has(e.data_file.file_path) && seqOf(e) < round.maxSeq);
  if (older)
    return { gone: false, reason: `data file ${older.data_file.file_path} was added below the deletes` };
  if (round.vectors.size > 0) {
    const now = new Map<string, string>();
    for (const e of live) {
      if (isDeletionVector(e.data_file))
        now.set(e.data_file.referenced_data_file ?? '', deleteFileKey(e.data_file));
    }
    for (const [path, merged] of round.vectors) {
      if ((now.get(path) ?? null) !== merged)
        return { gone: false, reason: `the deletion vector of data file ${path} changed` };
    }
  }
  return { gone: false };
}

type GroupOutcome =
  | {
      kind: 'committed';
      snapshotId: string;
      files: number;
      rows: number;
      attempts: number;
      conflicts: number;
      replans: number;
    }
  | { kind: 'gone' }
  | { kind: 'abandoned'; reason: string };

/**
 * Converts one group, planning again when the base moved under it.
 * @throws as convertEqualityDeletes
 */
async function convertGroup(
  catalog: Catalog,
  id: TableIdentifier,
  group: readonly ManifestEntry[],
  options: ConvertOptions,
): Promise<GroupOutcome> {
  let maxSeq = 0n;
  for (const e of group) if (seqOf(e) > maxSeq) maxSeq = seqOf(e);
  let reason = '';
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const table = await catalog.loadTable(id);
    const manifests = await snapshotManifests(table);
    const live = liveEntries(manifests);
    // Files of the group another run removed meanwhile are not this run's to remove.
    const livePaths = new Set(live.map((e) => e.data_file.file_path));
    const paths = new Set(group.map((e) => e.data_file.file_path).filter((p) => livePaths.has(p)));
    if (paths.size === 0) return { kind: 'gone' };
    const plan = await planScan(table);
    const { rows, scanned } = await findEqualityMatches(table, plan.tasks, paths);
    const carriers = await rewriteEqualityCarriers(
      table,
      group
        .filter((e) => paths.has(e.data_file.file_path) && isVersionCarrierFile(table.metadata, e.data_file))
        .map((e) => e.data_file),
      FILE_PREFIX,
    );
    const written = await deleteRows(table, rows, carriers);
    const added = written.added;
    const planned: GroupRound = {
      paths,
      maxSeq,
      snapshotId: plan.snapshotId,
      planned: new Set(live.filter((e) => e.data_file.content === 0).map((e) => e.data_file.file_path)),
      scanned,
      vectors: mergedVectors(written),
    };
    const removed = new Set([...paths, ...written.replaced.map(deleteFileKey)]);
    const outcome = await commitAction<Noop<'gone'> | Stale>(
      catalog,
      id,
      {
        prepare: async (base) => {
          const same = currentSnapshot(base.metadata)?.['snapshot-id'] === planned.snapshotId;
          const baseManifests = same ? manifests : await snapshotManifests(base);
          if (!same) {
            const stale = staleOn(planned, liveEntries(baseManifests));
            if (stale.gone) return { kind: 'noop', reason: 'gone' };
            if (stale.reason) return { kind: 'stale', reason: stale.reason };
          }
          return replaceDeleteFiles(base, {
            removedDeleteFiles: removed,
            addedDeleteFiles: added,
            addedDataFiles: carriers,
            manifests: baseManifests,
            summary: carriedFloeSummary(base.metadata),
          });
        },
      },
      { lock: options.lock, deadlineMs: options.deadlineMs, base: table },
    );
    if (outcome.kind === 'committed') {
      const { snapshotId, attempts, conflicts } = outcome.result;
      return {
        kind: 'committed',
        snapshotId: String(snapshotId),
        files: new Set(added.map((f) => f.file_path)).size,
        rows: rows.length,
        attempts,
        conflicts,
        replans: round,
      };
    }
    // Certainly not landed: the commit loop ends with an answer only on a base it prepared nothing for.
    const addedPaths = new Set([...added, ...carriers].map((f) => f.file_path));
    await Promise.all([...addedPaths].map((p) => table.io.delete(p).catch(() => undefined)));
    if (outcome.kind === 'noop') return { kind: 'gone' };
    reason = outcome.reason;
  }
  return { kind: 'abandoned', reason: `planned ${MAX_ROUNDS} times, each lost to a rewrite: ${reason}` };
}

/**
 * Converts the table's live equality delete files into position deletes (deletion vectors on a
 * format-version 3 table), group by group, one snapshot per group.
 * @throws ValidationError for a malformed `floe.*` property, a malformed delete file or metadata
 * @throws CommitFailedError / CommitStateUnknownError / LockTimeoutError from the commit loop;
 *   NotFoundError / TransientIOError from reading and writing files
 */
export async function convertEqualityDeletes(
  catalog: Catalog,
  id: TableIdentifier,
  options: ConvertOptions = {},
): Promise<ConvertResult> {
  const table = await catalog.loadTable(id);
  const props = table.metadata.properties;
  if (readIngestProperties(props).deleteMode === 'equality') {
    return convertReport(
      'skipped',
      'the table is in floe.delete-mode=equality: its equality deletes are kept',
    );
  }
  // A carrier of a table without lineage (never written by floe) would have no versions to keep.
  const keep = (e: ManifestEntry) =>
    isVersionCarrierFile(table.metadata, e.data_file) &&
    lineageFields(currentSchema(table.metadata)) === undefined;
  const deletes = liveEntries(await snapshotManifests(table)).filter(
    (e) => e.data_file.content === 2 && !keep(e),
  );
  const maxBytes = options.maxGroupBytes ?? readMaintenanceProperties(props).convertGroupBytes;
  const groups = groupDeletes(deletes, maxBytes);
  const result: ConvertResult = {
    ...convertReport(deletes.length === 0 ? 'nothing-to-convert' : options.dryRun ? 'dry-run' : 'converted'),
    equalityDeleteFiles: deletes.length,
    groups: groups.length,
  };
  if (deletes.length === 0 || options.dryRun) return result;
  const now = options.now ?? Date.now;
  let longest = 0;
  for (const [index, group] of groups.entries()) {
    // A group takes about as long as the longest so far: start one only if it can end in time.
    if (options.deadlineMs !== undefined && now() + 2 * longest > options.deadlineMs) {
      result.groupsLeft = groups.length - index;
      break;
    }
    const started = now();
    const outcome = await convertGroup(catalog, id, group, options);
    longest = Math.max(longest, now() - started);
    if (outcome.kind === 'abandoned') {
      result.groupsAbandoned.push({ index, reason: outcome.reason });
      continue;
    }
    if (outcome.kind === 'gone') continue;
    result.snapshotIds.push(outcome.snapshotId);
    result.equalityDeletesRemoved += group.length;
    if (outcome.rows === 0) result.equalityDeletesDropped += group.length;
    result.positionDeleteFilesAdded += outcome.files;
    result.rowsDeleted += outcome.rows;
    result.attempts += outcome.attempts;
    result.conflicts += outcome.conflicts;
    result.replans += outcome.replans;
  }
  return result;
}
