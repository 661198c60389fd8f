/**
 * Property: a compaction racing concurrent CDC commits (equality deletes, position deletes, appends)
 * between its plan, its compaction and its commit never resurrects a deleted row and never loses a live
 * one. The model is the set of ids inserted minus the ids deleted, in commit order.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { readDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { commitRewrite } from '../../../functions/core/maintenance/commit-rewrite.js';
import { compactGroup, type GroupOutcome } from '../../../functions/core/maintenance/compact-group.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import { planCompaction } from '../../../functions/core/maintenance/plan-compaction.js';
import type { RewritePlan } from '../../../functions/core/maintenance/rewrite-run-files.js';
import { liveEntries } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';
import {
  appendBatch,
  commitEqualityDeletes,
  commitPositionDeletes,
  createEventsTable,
  EVENTS_ID,
  EVENTS_SCHEMA,
  eventRows,
  liveIds,
} from './maintenance-fixture.js';

type Op =
  | { kind: 'eq'; picks: number[] }
  | { kind: 'pos'; file: number; pos: number }
  | { kind: 'append'; count: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('eq' as const), picks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('pos' as const), file: fc.nat(), pos: fc.nat() }),
  fc.record({ kind: fc.constant('append' as const), count: fc.integer({ min: 1, max: 5 }) }),
);

describe('compaction racing concurrent commits', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  let alive: Set<number>;
  let nextId: number;
  let offset: number;

  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
  });
  afterEach(() => cleanup());

  async function apply(op: Op): Promise<void> {
    if (op.kind === 'append') {
      const rows = eventRows(nextId, nextId + op.count - 1);
      for (let i = nextId; i < nextId + op.count; i++) alive.add(i);
      nextId += op.count;
      offset += op.count;
      await appendBatch(catalog, rows, offset);
    } else if (op.kind === 'eq') {
      const ids = [...alive].sort((a, b) => a - b);
      if (ids.length === 0) return;
      const picked = [...new Set(op.picks.map((p) => ids[p % ids.length]))];
      for (const id of picked) alive.delete(id);
      await commitEqualityDeletes(catalog, picked);
    } else {
      const files = (await liveEntries(await catalog.loadTable(EVENTS_ID)))
        .filter((e) => e.data_file.content === 0)
        .map((e) => e.data_file)
        .sort((a, b) => (a.file_path < b.file_path ? -1 : 1));
      if (files.length === 0) return;
      const file = files[op.file % files.length];
      const pos = op.pos % Number(file.record_count);
      const table = await catalog.loadTable(EVENTS_ID);
      const row = (await readDataFile(table.io, file.file_path, EVENTS_SCHEMA))[pos];
      alive.delete(Number(row.id));
      await commitPositionDeletes(catalog, file, [pos]);
    }
  }

  async function compaction(runId: string, between: { afterPlan: Op[]; afterCompact: Op[] }): Promise<void> {
    const table = await catalog.loadTable(EVENTS_ID);
    const { plan } = await planCompaction(table, resolveSettings(table.metadata), runId, 'lake.events');
    for (const op of between.afterPlan) await apply(op);
    const outcomes: GroupOutcome[] = [];
    const p = plan as RewritePlan;
    for (const g of p.groups) outcomes.push(await compactGroup(table, p, g.index));
    for (const op of between.afterCompact) await apply(op);
    await commitRewrite(catalog, EVENTS_ID, p, outcomes);
  }

  it('never resurrects a deleted row nor loses a live one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 3, max: 5 }),
        fc.array(opArb, { maxLength: 2 }),
        fc.array(opArb, { maxLength: 3 }),
        fc.array(opArb, { maxLength: 3 }),
        async (batches, beforePlan, afterPlan, afterCompact) => {
          // Prepare: a fresh table per run
          await cleanup();
          ({ catalog, cleanup } = await tempWarehouse());
          await createEventsTable(catalog);
          alive = new Set();
          nextId = 1;
          offset = 0;
          for (let b = 0; b < batches; b++) await apply({ kind: 'append', count: 6 });
          for (const op of beforePlan) await apply(op);
          // Act: one compaction raced, then a quiet one over whatever the first left
          await compaction('raced', { afterPlan, afterCompact });
          const afterRace = await liveIds(catalog);
          await compaction('quiet', { afterPlan: [], afterCompact: [] });
          // Assess
          const expected = [...alive].sort((a, b) => a - b);
          expect(afterRace).toEqual(expected);
          expect(await liveIds(catalog)).toEqual(expected);
        },
      ),
      { numRuns: 12 },
    );
  });
});
