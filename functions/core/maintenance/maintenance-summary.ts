/**
 * The result summary of one maintenance run: the table before (as the plan found it) and after, and what
 * each step did. Built from the state the steps left (the state machine's `$.plan`, `$.commit`, ...),
 * so the last task and the CLI report the same thing.
 *
 * A dry run's summary says what the real run would delete, file by file (the tasks chose those files by
 * the code the real run uses); every run's summary names the deletes refused as not the table's own.
 */
import type { RefusedDelete } from '../io/confined-delete.js';
import type { TableFileStats } from './plan-compaction.js';

export interface MaintenanceSummary {
  table: string;
  dataFilesBefore: number | null;
  dataFilesAfter: number;
  bytesBefore: number | null;
  bytesAfter: number;
  deleteFilesBefore: number | null;
  deleteFilesAfter: number;
  /** Manifests a full scan had to open, before and after. */
  manifestsReadBefore: number | null;
  manifestsReadAfter: number;
  /** Equality delete files converted into position deletes (or, dry, live and to convert). */
  equalityDeletesConverted: number;
  positionDeleteFilesAdded: number;
  groupsCompacted: number;
  groupsAbandoned: number;
  snapshotsExpired: number;
  filesExpired: number;
  orphansRemoved: number;
  manifestsRewritten: number;
  /** The run changed and deleted nothing; the `...ToDelete` fields say what it would have. */
  dryRun: boolean;
  /** Files expiry deletes or, dry, would delete (manifest lists and manifests included). */
  expiredFilesToDelete: number;
  /** Orphans removal deletes or, dry, would delete. */
  orphansToDelete: number;
  /** In a dry run, the files named as those the real run would delete (as many as the steps listed). */
  wouldDelete: string[];
  /** Deletes refused because the path is not the table's own (never deleted). */
  deletesRefused: number;
  refusedSample: RefusedDelete[];
  /** What a step could not do without failing the run (S3 Tables maintenance this endpoint lacks). */
  warnings: string[];
}

type Json = Record<string, unknown>;

function field(state: Json, ...path: string[]): unknown {
  let value: unknown = state;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Json)[key];
  }
  return value;
}

const num = (value: unknown): number => (typeof value === 'number' ? value : 0);
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
const refusals = (value: unknown): RefusedDelete[] =>
  Array.isArray(value)
    ? value.filter(
        (v): v is RefusedDelete =>
          typeof (v as Json | null)?.location === 'string' && typeof (v as Json | null)?.reason === 'string',
      )
    : [];
const numOrNull = (value: unknown): number | null => (typeof value === 'number' ? value : null);

/**
 * Summarises a run from its state (`convertEqualityDeletes`, `plan`, `commit`, `expire`, `removeOrphans`,
 * `rewriteManifests` results, any of them absent) and the table's files after it. Never throws.
 */
export function summarizeRun(table: string, state: Json, after: TableFileStats): MaintenanceSummary {
  const groupsCommitted = field(state, 'commit', 'groupsCommitted');
  const groupsAbandoned = field(state, 'commit', 'groupsAbandoned');
  const dryRun =
    state.dryRun === true ||
    field(state, 'expire', 'status') === 'dry-run' ||
    field(state, 'removeOrphans', 'status') === 'dry-run';
  const steps = ['commit', 'expire', 'removeOrphans'];
  return {
    table,
    dataFilesBefore: numOrNull(field(state, 'plan', 'before', 'dataFiles')),
    dataFilesAfter: after.dataFiles,
    bytesBefore: numOrNull(field(state, 'plan', 'before', 'dataBytes')),
    bytesAfter: after.dataBytes,
    deleteFilesBefore: numOrNull(field(state, 'plan', 'before', 'deleteFiles')),
    deleteFilesAfter: after.deleteFiles,
    manifestsReadBefore: numOrNull(field(state, 'plan', 'before', 'manifestsRead')),
    manifestsReadAfter: after.manifestsRead,
    equalityDeletesConverted: num(
      field(state, 'convertEqualityDeletes', dryRun ? 'equalityDeleteFiles' : 'equalityDeletesRemoved'),
    ),
    positionDeleteFilesAdded: num(field(state, 'convertEqualityDeletes', 'positionDeleteFilesAdded')),
    groupsCompacted: Array.isArray(groupsCommitted) ? groupsCommitted.length : 0,
    groupsAbandoned: Array.isArray(groupsAbandoned) ? groupsAbandoned.length : 0,
    snapshotsExpired: num(field(state, 'expire', 'snapshotsExpired')),
    filesExpired: num(field(state, 'expire', 'filesDeleted')),
    orphansRemoved: num(field(state, 'removeOrphans', 'removed')),
    manifestsRewritten: num(field(state, 'rewriteManifests', 'manifestsReplaced')),
    dryRun,
    expiredFilesToDelete: num(field(state, 'expire', 'toDelete')),
    orphansToDelete: num(field(state, 'removeOrphans', 'orphans')),
    wouldDelete: dryRun
      ? [
          ...strings(field(state, 'expire', 'toDeleteSample')),
          ...strings(field(state, 'removeOrphans', 'sample')),
        ]
      : [],
    deletesRefused: steps.reduce((n, step) => n + num(field(state, step, 'refused')), 0),
    refusedSample: steps.flatMap((step) => refusals(field(state, step, 'refusedSample'))),
    warnings: strings([field(state, 'expire', 'warning')]),
  };
}

function change(before: number | null, after: number): string {
  return before === null ? String(after) : `${before} → ${after}`;
}

/** The summary as lines for people. Never throws. */
export function formatSummary(s: MaintenanceSummary): string[] {
  const mib = (bytes: number | null) => (bytes === null ? null : Number((bytes / 1024 / 1024).toFixed(2)));
  const snapshots = s.dryRun
    ? `${s.snapshotsExpired} to expire (${s.expiredFilesToDelete} files to delete) (dry run)`
    : `${s.snapshotsExpired} expired (${s.filesExpired} files deleted)`;
  const orphans = s.dryRun ? `${s.orphansToDelete} to remove (dry run)` : `${s.orphansRemoved} removed`;
  const manifests = s.dryRun
    ? `${s.manifestsRewritten} to rewrite (dry run)`
    : `${s.manifestsRewritten} rewritten`;
  const converted = s.dryRun
    ? `${s.equalityDeletesConverted} to convert (dry run)`
    : `${s.equalityDeletesConverted} converted into ${s.positionDeleteFilesAdded} position delete file(s)`;
  const lines = [
    `maintenance of ${s.table}${s.dryRun ? ' (dry run: nothing changed)' : ''}`,
    `  data files      ${change(s.dataFilesBefore, s.dataFilesAfter)}`,
    `  data MiB        ${change(mib(s.bytesBefore), mib(s.bytesAfter) ?? 0)}`,
    `  delete files    ${change(s.deleteFilesBefore, s.deleteFilesAfter)}`,
    `  manifests read  ${change(s.manifestsReadBefore, s.manifestsReadAfter)} (planning a full scan)`,
    `  eq. deletes     ${converted}`,
    `  groups          ${s.groupsCompacted} compacted, ${s.groupsAbandoned} abandoned`,
    `  snapshots       ${snapshots}`,
    `  orphans         ${orphans}`,
    `  manifests       ${manifests}`,
  ];
  if (s.wouldDelete.length > 0) {
    lines.push('  would delete');
    for (const location of s.wouldDelete) lines.push(`    ${location}`);
  }
  if (s.deletesRefused > 0) {
    lines.push(`  refused         ${s.deletesRefused} delete(s) of files not the table's own (kept)`);
    for (const r of s.refusedSample) lines.push(`    ${r.location}: ${r.reason}`);
  }
  for (const warning of s.warnings) lines.push(`  warning         ${warning}`);
  return lines;
}
