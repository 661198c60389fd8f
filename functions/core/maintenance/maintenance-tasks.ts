/**
 * The seven maintenance tasks as the state machine runs them (and the CLI, in the same order): each takes
 * the state's JSON and returns its result's JSON. ConvertEqualityDeletes → Plan → Compact (per group) →
 * Commit → ExpireSnapshots → RemoveOrphans → RewriteManifests. Conversion goes first: compaction then
 * has fewer equality deletes to apply while it rewrites, and fewer left dangling to drop. The Lambda handlers and `floe maintain` are thin shells around these.
 *
 * S3 Tables tables: S3 Tables compacts, expires snapshots and removes unreferenced files itself (and
 * forbids floe to list or delete there): ConvertEqualityDeletes and Plan do nothing, ExpireSnapshots configures S3 Tables'
 * maintenance (the catalog's `maintenance` capability) and re-anchors floe's offsets at the top of the
 * history, RemoveOrphans does nothing, RewriteManifests runs as for any table. A table in a table bucket
 * reached through another catalog (S3 Tables' Iceberg REST endpoint) is left to S3 Tables as it is.
 */
import type { Catalog, CatalogMaintenance, LoadedTable, TableMaintenanceResult } from '../catalog/catalog.js';
import { isS3TablesLocation } from '../catalog/s3tables-names.js';
import type { CommitLock } from '../lock/commit-lock.js';
import type { TableIdentifier } from '../spec/types.js';
import { anchorCommittedOffsets } from '../table/actions/anchor-offsets.js';
import {
  alreadyCommitted,
  commitRewrite,
  findRunSnapshot,
  type RewriteCommitResult,
} from './commit-rewrite.js';
import { compactGroup, type GroupOutcome } from './compact-group.js';
import { type ConvertResult, convertEqualityDeletes, convertReport } from './convert-equality-deletes.js';
import { type ExpireResult, expireReport, expireSnapshots } from './expire-snapshots.js';
import { type MaintenanceSummary, summarizeRun } from './maintenance-summary.js';
import { resolveSettings } from './maintenance-settings.js';
import { planCompaction, readTableFileStats } from './plan-compaction.js';
import { type OrphanResult, removeOrphanFiles, skippedOrphanRun } from './remove-orphans.js';
import { type RewriteManifestsResult, rewriteManifests } from '../table/actions/rewrite-manifests.js';
import { newRunId, planLocation, readRewritePlan, writeRewritePlan } from './rewrite-run-files.js';
import {
  type GroupRef,
  type PlanOutput,
  parseCommitInput,
  parseCompactInput,
  parseRunOptions,
  tableIdentifier,
} from './task-input.js';

export interface MaintenanceContext {
  catalog: Catalog;
  lock?: CommitLock;
  /** Absolute time (ms) after which no commit attempt starts (a Lambda's remaining time). */
  deadlineMs?: number;
  now?: () => number;
  /**
   * Paths named in RemoveOrphans' and ExpireSnapshots' results (orphans, files to delete, refused
   * deletes: a Step Functions state holds 256 KB). @default 100
   */
  orphanListLimit?: number;
}

export type ExpireOutput = ExpireResult & {
  skipped?: string;
  s3Tables?: TableMaintenanceResult;
  /** Said when S3 Tables' maintenance could not be configured from this endpoint (the run goes on). */
  warning?: string;
  offsetsAnchor?: 'anchored' | 'not-needed';
};
export type RemoveOrphansOutput = OrphanResult & { skipped?: string };
export type RewriteManifestsOutput = RewriteManifestsResult & { summary: MaintenanceSummary };

const S3TABLES_SKIP =
  'S3 Tables maintains this table itself (compaction, snapshot expiry, unreferenced files)';

async function load(
  ctx: MaintenanceContext,
  name: string,
): Promise<{ id: TableIdentifier; table: LoadedTable }> {
  const id = tableIdentifier(name);
  return { id, table: await ctx.catalog.loadTable(id) };
}

/** How the table maintains itself, when it does (S3 Tables); undefined when floe maintains it. */
function selfMaintained(
  ctx: MaintenanceContext,
  table: LoadedTable,
): { maintenance?: CatalogMaintenance } | undefined {
  const maintenance = ctx.catalog.maintenance;
  if (maintenance || isS3TablesLocation(table.metadata.location)) return { maintenance };
  return undefined;
}

function commitOptions(ctx: MaintenanceContext) {
  return { lock: ctx.lock, deadlineMs: ctx.deadlineMs };
}

/**
 * Converts the table's equality deletes into position deletes (a table in `floe.delete-mode=position`).
 * @throws ValidationError for bad input; UnsupportedFeatureError for a v3 table; commit-loop errors;
 *   errors reading or writing files
 */
export async function convertEqualityDeletesTask(
  ctx: MaintenanceContext,
  event: unknown,
): Promise<ConvertResult> {
  const options = parseRunOptions(event);
  const { id, table } = await load(ctx, options.table);
  if (selfMaintained(ctx, table)) return convertReport('skipped', S3TABLES_SKIP);
  return convertEqualityDeletes(ctx.catalog, id, {
    ...commitOptions(ctx),
    now: ctx.now,
    dryRun: options.dryRun,
  });
}

/**
 * Plans compaction and writes the plan file; its groups are the Map's items.
 * @throws ValidationError for bad input; NoSuchTableError; errors reading or writing metadata
 */
export async function planTask(ctx: MaintenanceContext, event: unknown): Promise<PlanOutput> {
  const options = parseRunOptions(event);
  const { table } = await load(ctx, options.table);
  const runId = newRunId(ctx.now?.() ?? Date.now());
  const empty = {
    table: options.table,
    runId,
    planLocation: null,
    snapshotId: null,
    groups: [],
    smallFiles: 0,
  };
  if (selfMaintained(ctx, table))
    return { ...empty, before: await readTableFileStats(table), skipped: S3TABLES_SKIP };
  const settings = resolveSettings(table.metadata, { maxGroupBytes: options.maxGroupBytes });
  const { plan, before, smallFiles } = await planCompaction(table, settings, runId, options.table);
  if (!plan || plan.groups.length === 0)
    return { ...empty, before, smallFiles, snapshotId: plan?.snapshotId ?? null };
  const location = planLocation(table.metadata.location, runId);
  const groups: GroupRef[] = plan.groups.map((g) => ({
    runId,
    index: g.index,
    files: g.files.length,
    bytes: g.bytes,
    partition: g.partition,
  }));
  if (options.dryRun)
    return { ...empty, before, smallFiles, snapshotId: plan.snapshotId, wouldRewrite: groups };
  await writeRewritePlan(table.io, location, plan);
  return { ...empty, before, smallFiles, snapshotId: plan.snapshotId, planLocation: location, groups };
}

/**
 * Compacts one group of a plan (a Map iteration).
 * @throws ValidationError for bad input or a plan that does not match the table; I/O errors
 */
export async function compactTask(ctx: MaintenanceContext, event: unknown): Promise<GroupOutcome> {
  const { table: name, group } = parseCompactInput(event);
  const { table } = await load(ctx, name);
  const plan = await readRewritePlan(table.io, planLocation(table.metadata.location, group.runId));
  return compactGroup(table, plan, group.index);
}

/**
 * Commits what the groups wrote.
 * @throws ValidationError for bad input; CommitFailedError / CommitStateUnknownError / LockTimeoutError
 */
export async function commitTask(ctx: MaintenanceContext, event: unknown): Promise<RewriteCommitResult> {
  const { table: name, plan, rewrites } = parseCommitInput(event);
  const { id, table } = await load(ctx, name);
  // A retry after the commit landed finds the run's snapshot; the plan file is gone by then.
  const committed = findRunSnapshot(table.metadata, plan.runId);
  if (committed !== undefined) return alreadyCommitted(committed);
  const rewritePlan = await readRewritePlan(table.io, plan.planLocation!);
  return commitRewrite(ctx.catalog, id, rewritePlan, rewrites, { ...commitOptions(ctx), base: table });
}

/**
 * Expires snapshots (or, for S3 Tables, configures its snapshot management and anchors the offsets).
 * @throws ValidationError for bad input; commit-loop errors; TransientIOError / LakeError from S3 Tables
 */
export async function expireTask(ctx: MaintenanceContext, event: unknown): Promise<ExpireOutput> {
  const options = parseRunOptions(event);
  const { id, table } = await load(ctx, options.table);
  const now = ctx.now?.() ?? Date.now();
  const own = selfMaintained(ctx, table);
  if (!own) {
    return expireSnapshots(ctx.catalog, id, (md) => resolveSettings(md, options), {
      ...commitOptions(ctx),
      nowMs: now,
      dryRun: options.dryRun,
      sampleSize: ctx.orphanListLimit,
    });
  }
  const out: ExpireOutput = { ...expireReport('skipped'), skipped: S3TABLES_SKIP };
  if (options.dryRun) return out;
  if (own.maintenance) {
    out.s3Tables = await own.maintenance.configure(id, resolveSettings(table.metadata, options));
    if (out.s3Tables.status === 'unsupported') out.warning = out.s3Tables.reason;
  }
  out.offsetsAnchor = (await anchorCommittedOffsets(ctx.catalog, id, commitOptions(ctx))).status;
  return out;
}

/**
 * Removes (or, dry, lists) orphan files older than the window.
 * @throws ValidationError for bad input; errors listing, reading or deleting
 */
export async function removeOrphansTask(
  ctx: MaintenanceContext,
  event: unknown,
): Promise<RemoveOrphansOutput> {
  const options = parseRunOptions(event);
  const { table } = await load(ctx, options.table);
  if (selfMaintained(ctx, table)) {
    return skippedOrphanRun(S3TABLES_SKIP);
  }
  const settings = resolveSettings(table.metadata, options);
  return removeOrphanFiles(table, {
    olderThanMs: settings.orphanFileAgeMs,
    nowMs: ctx.now?.(),
    dryRun: options.dryRun,
    sampleSize: ctx.orphanListLimit,
  });
}

/**
 * Rewrites manifests, then summarises the whole run from the state it was given.
 * @throws ValidationError for bad input; commit-loop errors; errors reading metadata
 */
export async function rewriteManifestsTask(
  ctx: MaintenanceContext,
  event: unknown,
): Promise<RewriteManifestsOutput> {
  const options = parseRunOptions(event);
  const id = tableIdentifier(options.table);
  const result = await rewriteManifests(ctx.catalog, id, { ...commitOptions(ctx), dryRun: options.dryRun });
  const after = await readTableFileStats(await ctx.catalog.loadTable(id));
  const state = { ...(event as Record<string, unknown>), rewriteManifests: result };
  return { ...result, summary: summarizeRun(options.table, state, after) };
}
