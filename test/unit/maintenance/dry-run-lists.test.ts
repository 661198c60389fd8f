/**
 * A dry run names exactly the files the real run then deletes (issue 20, item 4): the same code chooses
 * them, the dry run only stops before deleting. Checked for both tasks that delete, through the tasks
 * and through `floe maintain`.
 */
import { utimes, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { expireTask, removeOrphansTask } from '../../../functions/core/maintenance/maintenance-tasks.js';
import { formatSummary, summarizeRun } from '../../../functions/core/maintenance/maintenance-summary.js';
import { readTableFileStats } from '../../../functions/core/maintenance/plan-compaction.js';
import { tempWarehouse } from '../../support/tables.js';
import { appendBatch, createEventsTable, EVENTS_ID, eventRows } from './maintenance-fixture.js';

describe('dry runs list what the real run deletes', () => {
  let catalog: EmbeddedCatalog;
  let dir: string;
  let cleanup: () => Promise<void>;
  let stray: string;

  beforeEach(async () => {
    ({ catalog, dir, cleanup } = await tempWarehouse());
    const table = await createEventsTable(catalog);
    for (let b = 0; b < 5; b++) await appendBatch(catalog, eventRows(b * 5 + 1, b * 5 + 5), b * 5 + 5);
    stray = `${table.metadata.location}/data/stray.parquet`;
    await writeFile(stray, 'x');
    await utimes(stray, 1, 1);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await cleanup();
  });

  const files = async () => new Set((await catalog.io.list(dir)).map((f) => f.location));
  const gone = (before: Set<string>, after: Set<string>) => [...before].filter((f) => !after.has(f)).sort();
  const ctx = { catalog: undefined as unknown as EmbeddedCatalog, orphanListLimit: Number.POSITIVE_INFINITY };
  const input = { table: 'lake.events', maxSnapshotAgeMs: 0, minSnapshotsToKeep: 1, orphanFileAgeMs: 0 };

  it('expiry: the dry run names every file the real run deletes, and no other', async () => {
    // Prepare
    ctx.catalog = catalog;
    // Act
    const dry = await expireTask(ctx, { ...input, dryRun: true });
    const before = await files();
    const real = await expireTask(ctx, input);
    const after = await files();
    // Assess
    const deleted = gone(before, after);
    // the four expired snapshots' manifest lists: their manifests stay listed by the one retained
    expect(deleted).toHaveLength(4);
    expect([...dry.toDeleteSample].sort()).toEqual(deleted);
    expect(dry.toDelete).toBe(deleted.length);
    expect(real.toDelete).toBe(deleted.length);
    expect(real.filesDeleted + real.manifestsDeleted + real.manifestListsDeleted).toBe(deleted.length);
  });

  it('orphans: the dry run names every file the real run deletes, and no other', async () => {
    ctx.catalog = catalog;
    const dry = await removeOrphansTask(ctx, { ...input, dryRun: true });
    const before = await files();
    const real = await removeOrphansTask(ctx, input);
    const after = await files();
    expect(gone(before, after)).toEqual([stray]);
    expect(dry.sample).toEqual([stray]);
    expect(real.removed).toBe(1);
  });

  it('the summary of a dry run says what would go, not "0 removed"', async () => {
    // Prepare
    ctx.catalog = catalog;
    const state: Record<string, unknown> = { ...input, dryRun: true };
    state.expire = await expireTask(ctx, state);
    state.removeOrphans = await removeOrphansTask(ctx, state);
    // Act
    const lines = formatSummary(
      summarizeRun('lake.events', state, await readTableFileStats(await catalog.loadTable(EVENTS_ID))),
    ).join('\n');
    // Assess
    expect(lines).not.toMatch(/0 removed|0 files deleted/);
    expect(lines).toMatch(/orphans\s+1 to remove \(dry run\)/);
    expect(lines).toMatch(/snapshots\s+4 to expire \(\d+ files to delete\) \(dry run\)/);
    expect(lines).toContain(stray);
  });

  it('floe maintain --dry-run prints the files the real run then deletes', async () => {
    // Prepare
    let out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out += String(chunk);
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const maintain = (...args: string[]) =>
      main(['maintain', ...args, '--warehouse', dir, '--table', 'lake.events', '--older-than', '0']);
    // Act
    expect(await maintain('expire-snapshots', '--dry-run', '--retain-last', '1')).toBe(0);
    expect(await maintain('remove-orphans', '--dry-run')).toBe(0);
    const dryOut = out;
    const before = await files();
    expect(await maintain('expire-snapshots', '--retain-last', '1')).toBe(0);
    expect(await maintain('remove-orphans')).toBe(0);
    // Assess
    const deleted = gone(before, await files());
    expect(deleted).toHaveLength(5);
    for (const f of deleted) expect(dryOut, f).toContain(f);
    expect(dryOut).not.toMatch(/orphans\s+0 removed/);
  });
});
