/**
 * `floe maintain all|convert-equality-deletes|compact|expire-snapshots|remove-orphans|rewrite-manifests <catalog> --table NS.NAME
 *   [--dry-run] [--older-than DURATION] [--retain-last N]`
 *
 * Runs the very tasks the maintenance state machine's Lambdas run (core/maintenance/maintenance-tasks.ts),
 * `all` in the state machine's order: convert equality deletes → plan → compact each group → commit →
 * expire snapshots → remove orphans → rewrite manifests. `--older-than` is the snapshot age for expiry and the orphan window;
 * `--retain-last` the snapshots expiry always keeps. A progress bar on stderr (terminals only) while groups
 * compact; a summary at the end.
 */
import {
  commitTask,
  compactTask,
  convertEqualityDeletesTask,
  expireTask,
  type MaintenanceContext,
  planTask,
  removeOrphansTask,
  rewriteManifestsTask,
} from '../../core/maintenance/maintenance-tasks.js';
import type { ConvertResult } from '../../core/maintenance/convert-equality-deletes.js';
import { formatSummary, summarizeRun } from '../../core/maintenance/maintenance-summary.js';
import { readTableFileStats } from '../../core/maintenance/plan-compaction.js';
import type { GroupOutcome } from '../../core/maintenance/compact-group.js';
import { type RunOptions, tableIdentifier } from '../../core/maintenance/task-input.js';
import { openCatalog } from '../catalog-options.js';
import { DAY_MS, parseDuration, parseInteger } from '../flag-values.js';
import { type ParsedOptions, requireOption, UsageError } from '../options.js';

const OPERATIONS = [
  'all',
  'convert-equality-deletes',
  'compact',
  'expire-snapshots',
  'remove-orphans',
  'rewrite-manifests',
] as const;
type Operation = (typeof OPERATIONS)[number];

/** A one-line bar on stderr, redrawn in place; silent when stderr is not a terminal. */
function progressBar(label: string, total: number): { tick: (detail: string) => void; done: () => void } {
  const tty = process.stderr.isTTY === true;
  let count = 0;
  const draw = (detail: string) => {
    if (!tty) return;
    const width = 24;
    const filled = total === 0 ? width : Math.round((count / total) * width);
    const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${count}/${total} ${detail}`;
    process.stderr.write(`\r${line.slice(0, (process.stderr.columns ?? 100) - 1)}\u001b[K`);
  };
  draw('');
  return {
    tick: (detail) => {
      count++;
      draw(detail);
    },
    done: () => {
      if (tty) process.stderr.write('\r\u001b[K');
    },
  };
}

const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

async function compactAll(
  ctx: MaintenanceContext,
  state: Record<string, unknown>,
  input: RunOptions,
): Promise<void> {
  const plan = await planTask(ctx, input);
  state.plan = plan;
  if (plan.skipped) return say(`compact: skipped — ${plan.skipped}`);
  const groups = input.dryRun ? (plan.wouldRewrite ?? []) : plan.groups;
  say(
    `plan: ${plan.before.dataFiles} data files (${plan.smallFiles} small), ${groups.length} group(s) to rewrite` +
      ` (planning read ${plan.before.manifestsRead} manifests)`,
  );
  if (input.dryRun) {
    for (const g of groups)
      say(`  would rewrite ${g.files} file(s), ${g.bytes} bytes in ${g.partition || '(unpartitioned)'}`);
    return;
  }
  if (groups.length === 0) return;
  const bar = progressBar('compacting', groups.length);
  const rewrites: GroupOutcome[] = [];
  try {
    for (const group of groups) {
      rewrites.push(await compactTask(ctx, { table: input.table, group }));
      bar.tick(group.partition);
    }
  } finally {
    bar.done();
  }
  state.rewrites = rewrites;
  const commit = await commitTask(ctx, state);
  state.commit = commit;
  say(
    `commit: ${commit.status}${commit.snapshotId ? ` (snapshot ${commit.snapshotId}, ${commit.operation})` : ''}: ` +
      `${commit.dataFilesRemoved} files → ${commit.dataFilesAdded}, ${commit.deleteFilesRemoved} delete files removed`,
  );
  for (const a of commit.groupsAbandoned) say(`  group ${a.index} abandoned: ${a.reason}`);
}

function describeConversion(c: ConvertResult): string {
  if (c.skipped) return `skipped — ${c.skipped}`;
  if (c.status === 'nothing-to-convert') return 'no equality delete files';
  if (c.status === 'dry-run')
    return `would convert ${c.equalityDeleteFiles} equality delete file(s) in ${c.groups} group(s)`;
  const left = c.groupsLeft > 0 ? `, ${c.groupsLeft} group(s) left for the next run` : '';
  return (
    `${c.equalityDeletesRemoved} of ${c.equalityDeleteFiles} equality delete file(s) converted into ` +
    `${c.positionDeleteFilesAdded} position delete file(s) naming ${c.rowsDeleted} row(s)` +
    ` (${c.equalityDeletesDropped} matched nothing) in ${c.snapshotIds.length} snapshot(s)${left}`
  );
}

/** Runs `floe maintain`; returns the exit code. @throws UsageError for bad arguments */
export async function runMaintain(values: ParsedOptions, positionals: string[]): Promise<number> {
  const operation = positionals[0] as Operation | undefined;
  if (!operation || !OPERATIONS.includes(operation)) {
    throw new UsageError(`maintain needs one of ${OPERATIONS.join(', ')}`);
  }
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  const olderThan =
    values['older-than'] === undefined ? undefined : parseDuration(values['older-than'], '--older-than');
  const retainLast =
    values['retain-last'] === undefined ? undefined : parseInteger(values['retain-last'], '--retain-last', 1);
  const input: RunOptions = {
    table: requireOption(values, 'table'),
    dryRun: values['dry-run'] === true,
    maxSnapshotAgeMs: olderThan,
    orphanFileAgeMs: olderThan,
    minSnapshotsToKeep: retainLast,
  };
  const runsOrphans = operation === 'all' || operation === 'remove-orphans';
  if (runsOrphans && !input.dryRun && olderThan !== undefined && olderThan < DAY_MS) {
    process.stderr.write(
      'floe: warning: an orphan window under a day can delete files of commits still in flight\n',
    );
  }
  const { catalog, lock } = await openCatalog(values, { withLock: true });
  const ctx: MaintenanceContext = {
    catalog,
    lock,
    orphanListLimit: Number.POSITIVE_INFINITY,
  };
  const state: Record<string, unknown> = { ...input };
  const runs = (op: Operation) => operation === 'all' || operation === op;

  if (runs('convert-equality-deletes')) {
    const convert = await convertEqualityDeletesTask(ctx, state);
    state.convertEqualityDeletes = convert;
    say(`convert-equality-deletes: ${describeConversion(convert)}`);
    for (const a of convert.groupsAbandoned) say(`  group ${a.index} left for the next run: ${a.reason}`);
  }
  if (runs('compact')) await compactAll(ctx, state, input);
  if (runs('expire-snapshots')) {
    const expire = await expireTask(ctx, state);
    state.expire = expire;
    const what = expire.status === 'dry-run' ? 'would expire' : 'expired';
    say(
      `expire-snapshots: ${expire.skipped ?? `${what} ${expire.snapshotsExpired} snapshot(s), deleted ${expire.filesDeleted} file(s), ${expire.manifestsDeleted} manifest(s), ${expire.manifestListsDeleted} manifest list(s)`}`,
    );
    if (expire.status === 'dry-run') for (const s of expire.expiredSnapshotIds) say(`  ${s}`);
  }
  if (runs('remove-orphans')) {
    const orphans = await removeOrphansTask(ctx, state);
    state.removeOrphans = orphans;
    say(
      `remove-orphans: ${orphans.skipped ?? `${orphans.orphans} orphan(s) of ${orphans.filesScanned} file(s), ${orphans.status === 'dry-run' ? 'none removed (dry run)' : `${orphans.removed} removed`}`}`,
    );
    if (input.dryRun) for (const location of orphans.sample) say(`  ${location}`);
  }
  let summary: ReturnType<typeof summarizeRun>;
  if (runs('rewrite-manifests')) {
    const rewrite = await rewriteManifestsTask(ctx, state);
    state.rewriteManifests = rewrite;
    say(
      `rewrite-manifests: ${rewrite.status}, ${rewrite.manifestsBefore} → ${rewrite.manifestsAfter} manifest(s)`,
    );
    summary = rewrite.summary;
  } else {
    const table = await ctx.catalog.loadTable(tableIdentifier(input.table));
    summary = summarizeRun(input.table, state, await readTableFileStats(table));
  }
  say('');
  for (const line of formatSummary(summary)) say(line);
  return 0;
}
