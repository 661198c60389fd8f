/**
 * The result summary of one maintenance run: the table before (as the plan found it) and after, and what
 * each step did. Built from the state the steps left (the state machine's `$.plan`, `$.commit`, ...),
 * so the last task and the CLI report the same thing.
 */
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
  groupsCompacted: number;
  groupsAbandoned: number;
  snapshotsExpired: number;
  filesExpired: number;
  orphansRemoved: number;
  manifestsRewritten: number;
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
const numOrNull = (value: unknown): number | null => (typeof value === 'number' ? value : null);

/**
 * Summarises a run from its state (`plan`, `commit`, `expire`, `removeOrphans`, `rewriteManifests`
 * results, any of them absent) and the table's files after it. Never throws.
 */
export function summarizeRun(table: string, state: Json, after: TableFileStats): MaintenanceSummary {
  const groupsCommitted = field(state, 'commit', 'groupsCommitted');
  const groupsAbandoned = field(state, 'commit', 'groupsAbandoned');
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
    groupsCompacted: Array.isArray(groupsCommitted) ? groupsCommitted.length : 0,
    groupsAbandoned: Array.isArray(groupsAbandoned) ? groupsAbandoned.length : 0,
    snapshotsExpired: num(field(state, 'expire', 'snapshotsExpired')),
    filesExpired: num(field(state, 'expire', 'filesDeleted')),
    orphansRemoved: num(field(state, 'removeOrphans', 'removed')),
    manifestsRewritten: num(field(state, 'rewriteManifests', 'manifestsReplaced')),
  };
}

function change(before: number | null, after: number): string {
  return before === null ? String(after) : `${before} → ${after}`;
}

/** The summary as lines for people. Never throws. */
export function formatSummary(s: MaintenanceSummary): string[] {
  const mib = (bytes: number | null) => (bytes === null ? null : Number((bytes / 1024 / 1024).toFixed(2)));
  return [
    `maintenance of ${s.table}`,
    `  data files      ${change(s.dataFilesBefore, s.dataFilesAfter)}`,
    `  data MiB        ${change(mib(s.bytesBefore), mib(s.bytesAfter) ?? 0)}`,
    `  delete files    ${change(s.deleteFilesBefore, s.deleteFilesAfter)}`,
    `  manifests read  ${change(s.manifestsReadBefore, s.manifestsReadAfter)} (planning a full scan)`,
    `  groups          ${s.groupsCompacted} compacted, ${s.groupsAbandoned} abandoned`,
    `  snapshots       ${s.snapshotsExpired} expired (${s.filesExpired} files deleted)`,
    `  orphans         ${s.orphansRemoved} removed`,
    `  manifests       ${s.manifestsRewritten} rewritten`,
  ];
}
