import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseDuration } from '../../../functions/cli/flag-values.js';
import { main } from '../../../functions/cli/main.js';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { tempWarehouse } from '../../support/tables.js';
import { liveEntries } from '../../support/readers.js';
import {
  appendBatch,
  commitEqualityDeletes,
  createEventsTable,
  EVENTS_ID,
  eventRows,
  liveIds,
} from './maintenance-fixture.js';

describe('floe maintain', () => {
  let catalog: EmbeddedCatalog;
  let dir: string;
  let cleanup: () => Promise<void>;
  let out: string;
  let err: string;

  beforeEach(async () => {
    ({ catalog, dir, cleanup } = await tempWarehouse());
    await createEventsTable(catalog);
    for (let b = 0; b < 6; b++) await appendBatch(catalog, eventRows(b * 5 + 1, b * 5 + 5), b * 5 + 5);
    out = '';
    err = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out += String(chunk);
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err += String(chunk);
      return true;
    });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await cleanup();
  });

  const maintain = (...args: string[]) =>
    main(['maintain', ...args, '--warehouse', dir, '--table', 'lake.events']);

  it('runs every step in the state machine’s order and prints a summary', async () => {
    // Prepare
    const ids = await liveIds(catalog);
    // Act
    const code = await maintain('all', '--older-than', '0', '--retain-last', '1');
    // Assess
    expect(code, err).toBe(0);
    const steps = [
      'convert-equality-deletes:',
      'plan:',
      'commit:',
      'expire-snapshots:',
      'remove-orphans:',
      'rewrite-manifests:',
    ];
    const positions = steps.map((s) => out.indexOf(s));
    expect(
      positions.every((p) => p >= 0),
      out,
    ).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(out).toMatch(/data files\s+24 → 4/);
    expect(out).toMatch(/snapshots\s+6 expired/);
    expect(err).toMatch(/orphan window under a day/);
    const table = await catalog.loadTable(EVENTS_ID);
    // the compaction snapshot (the only one expiry kept) and the manifest rewrite after it
    expect(table.metadata.snapshots).toHaveLength(2);
    expect((await planScan(table)).tasks).toHaveLength(4);
    expect(await liveIds(catalog)).toEqual(ids);
  });

  it('changes nothing with --dry-run, and says what it would do', async () => {
    // Prepare
    const before = (await catalog.loadTable(EVENTS_ID)).metadataLocation;
    // Act
    const code = await maintain('all', '--dry-run', '--older-than', '0');
    // Assess
    expect(code, err).toBe(0);
    expect(out).toMatch(/would rewrite 6 file\(s\)/);
    expect(out).toMatch(/would expire 5 snapshot/);
    expect((await catalog.loadTable(EVENTS_ID)).metadataLocation).toBe(before);
  });

  it('converts equality deletes into position deletes alone, and says so in the summary', async () => {
    // Prepare: ids 3 and 7 (partition delta) and 12 (alpha) deleted by equality
    await commitEqualityDeletes(catalog, [3, 7, 12]);
    const ids = await liveIds(catalog);
    // Act
    const code = await maintain('convert-equality-deletes');
    // Assess
    expect(code, err).toBe(0);
    expect(out).toMatch(
      /convert-equality-deletes: 2 of 2 equality delete file\(s\) converted into 2 position delete file\(s\) naming 3 row\(s\) \(0 matched nothing\) in 1 snapshot\(s\)/,
    );
    expect(out).toMatch(/eq\. deletes\s+2 converted into 2 position delete file\(s\)/);
    expect(out).not.toMatch(/plan:/);
    const entries = await liveEntries(await catalog.loadTable(EVENTS_ID));
    expect(entries.map((e) => e.data_file.content).filter((c) => c !== 0)).toEqual([1, 1]);
    expect(await liveIds(catalog)).toEqual(ids);
    expect(ids).not.toContain(12);
  });

  it('runs one operation alone', async () => {
    const code = await maintain('rewrite-manifests');
    expect(code, err).toBe(0);
    expect(out).toMatch(/rewrite-manifests: rewritten, 6 → 1 manifest/);
    expect(out).not.toMatch(/expire-snapshots:/);
  });

  it('refuses bad usage with exit code 2', async () => {
    expect(await maintain('everything')).toBe(2);
    expect(await maintain('all', '--older-than', 'soon')).toBe(2);
    expect(await maintain('expire-snapshots', '--retain-last', '0')).toBe(2);
    expect(err).toMatch(/maintain needs one of all, convert-equality-deletes, compact/);
  });

  it('reads durations', () => {
    expect(parseDuration('0', '--older-than')).toBe(0);
    expect(parseDuration('90s', '--older-than')).toBe(90_000);
    expect(parseDuration('6h', '--older-than')).toBe(21_600_000);
    expect(parseDuration('3d', '--older-than')).toBe(259_200_000);
    expect(parseDuration('1.5m', '--older-than')).toBe(90_000);
  });
});
