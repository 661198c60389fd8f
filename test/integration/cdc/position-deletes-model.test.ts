/**
 * Position deletes against a model, read after every step by floe and DuckDB (position deletes
 * anti-joined on data file and row number), with no maintenance in between unless the step is one.
 * (icebird 0.3.1 cannot read these tables: hyparquet fails to assemble the `_kafka` lineage struct
 * the late-batch rule needs; cdc-readers.test.ts reads position deletes with icebird without it.)
 * The steps: random change streams cut into batches, delivered in any order (late batches), again
 * (replays), by two writers at once on the same keys (one commits while the other writes: the other's
 * located rows are stale and it locates again), and compactions between batches (the rows a later
 * batch deletes sit in the rewritten files).
 *
 * The model after a step: per key, the change with the highest offset among the records delivered so
 * far (keys stay on one Kafka partition; floe's `_kafka` lineage keeps a late change from undoing a
 * newer one, and compaction keeps the key-versions rows of deleted keys).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { commitRewrite } from '../../../functions/core/maintenance/commit-rewrite.js';
import { compactGroup, type GroupOutcome } from '../../../functions/core/maintenance/compact-group.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import { planCompaction } from '../../../functions/core/maintenance/plan-compaction.js';
import type { RewritePlan } from '../../../functions/core/maintenance/rewrite-run-files.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import {
  buildStream,
  CDC_TOPIC,
  type CdcTestMode,
  esmEvent,
  ITEMS_SCHEMA,
  itemKey,
  stepArb,
  modelAfter,
} from '../../support/cdc-stream.js';
import { type HttpWarehouse, startHttpWarehouse } from '../../support/http-warehouse.js';
import { duckdbLiveRows, liveEntries } from '../../support/readers.js';
import { FaultyCatalog } from '../../support/tables.js';

type Op =
  | { kind: 'deliver'; batch: number }
  | { kind: 'conflict'; batch: number; other: number }
  | { kind: 'compact'; during?: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('deliver' as const), batch: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('conflict' as const), batch: fc.nat(), other: fc.nat() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const) }) },
  // A compaction landing while a batch is written: the rows it located moved to new files.
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('compact' as const), during: fc.nat() }) },
);

/** Cuts [0, total) at the given points into consecutive batches. */
function cut(total: number, points: number[]): { from: number; to: number }[] {
  const inner = [...new Set(points.map((p) => p % total))].filter((p) => p > 0).sort((a, b) => a - b);
  const bounds = [0, ...inner, total];
  return bounds.slice(1).map((to, i) => ({ from: bounds[i], to }));
}

describe('position deletes: every reader equals the model after every step', () => {
  let wh: HttpWarehouse;
  let n = 0;
  let compactions = 0;
  beforeAll(async () => {
    wh = await startHttpWarehouse();
  });
  afterAll(() => wh.close());

  it('random streams, late and replayed batches, two writers on the same keys, compactions between', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<CdcTestMode>('debezium', 'upsert'),
        fc.constantFrom(undefined, 'bucket(2, id)', 'region'),
        fc.array(stepArb, { minLength: 4, maxLength: 24 }),
        fc.array(fc.nat(), { minLength: 2, maxLength: 5 }),
        fc.array(opArb, { minLength: 2, maxLength: 9 }),
        async (mode, partitionBy, steps, points, ops) => {
          // Prepare
          const route: TableRoute = {
            table: { namespace: ['pos'], name: `items_${n++}` },
            topics: [CDC_TOPIC],
            schema: ITEMS_SCHEMA,
            partitionBy,
            mode,
            identifierColumns: ['id'],
            kafkaLineage: true,
            properties: {},
          };
          const stream = buildStream(steps, mode);
          const batches = cut(stream.records.length, points);
          const delivered = new Set<number>();
          const done = new Set<number>();
          const deliver = async (catalog: typeof wh.catalog | FaultyCatalog, b: number) => {
            const report = await ingestEvent(
              { catalog, routes: [route] },
              esmEvent(stream.records, batches[b]),
            );
            // A replay commits nothing; a batch the other writer committed first is found committed.
            expect(report.tables[0].deadLettered).toBe(0);
            expect(report.tables[0].status).not.toBe('already-committed');
            for (let i = batches[b].from; i < batches[b].to; i++) delivered.add(i);
            done.add(b);
          };
          const compact = async () => {
            const table = await wh.catalog.loadTable(route.table);
            const { plan } = await planCompaction(table, resolveSettings(table.metadata), `run${n}`, 'pos.t');
            if (plan === undefined) return;
            const p = plan as RewritePlan;
            const outcomes: GroupOutcome[] = [];
            for (const g of p.groups) outcomes.push(await compactGroup(table, p, g.index));
            const result = await commitRewrite(wh.catalog, route.table, p, outcomes);
            if (result.groupsCommitted.length > 0) compactions++;
          };
          // Every batch is delivered at least once, after the random steps.
          const all = [...ops, ...batches.map((_, b): Op => ({ kind: 'deliver', batch: b }))];

          for (const op of all) {
            // Act
            if (op.kind === 'deliver') {
              await deliver(wh.catalog, op.batch % batches.length);
            } else if (op.kind === 'conflict') {
              const faulty = new FaultyCatalog(wh.catalog);
              const other = op.other % batches.length;
              if (other === op.batch % batches.length) continue;
              faulty.beforeCommit = () => deliver(wh.catalog, other);
              await deliver(faulty, op.batch % batches.length);
            } else {
              if (done.size === 0) continue;
              if (op.during === undefined) await compact();
              else {
                const faulty = new FaultyCatalog(wh.catalog);
                faulty.beforeCommit = compact;
                await deliver(faulty, op.during % batches.length);
              }
            }

            // Assess
            const expected = modelAfter(stream, mode, delivered);
            const table = await wh.catalog.loadTable(route.table);
            const floe = await readScanRows(table, await planScan(table));
            expect(floe.map(itemKey).sort(), 'floe').toEqual(expected);
            const local = (uri: string) => uri.replace(wh.url, wh.dir);
            const duck = await duckdbLiveRows(table, ['id', 'region', 'amount', 'note'], ['id'], local);
            expect(duck.map(itemKey).sort(), 'DuckDB').toEqual(expected);
            // Position deletes only: readers that refuse equality deletes (PyIceberg) read this table.
            expect((await liveEntries(table)).some((e) => e.data_file.content === 2)).toBe(false);
          }
        },
      ),
      { numRuns: 10, seed: 1205, endOnFailure: true },
    );
    // The runs compacted tables (the seed is pinned: this counts what they did).
    expect(compactions).toBeGreaterThan(0);
  });

  it('a compaction landing while a batch is written: the batch locates its rows again in the new files', async () => {
    // Prepare: keys 1–3 written by three batches (three small files), so a compaction rewrites them
    const route: TableRoute = {
      table: { namespace: ['pos'], name: 'compacted_meanwhile' },
      topics: [CDC_TOPIC],
      schema: ITEMS_SCHEMA,
      mode: 'upsert',
      identifierColumns: ['id'],
      kafkaLineage: true,
      properties: {},
    };
    const steps = [1, 2, 3, 1, 2, 3].map((id, i) => ({
      id,
      action: 0,
      region: 'EU',
      amount: i,
      note: null,
      noise: false,
    }));
    const stream = buildStream(steps, 'upsert');
    for (let i = 0; i < 3; i++) {
      await ingestEvent(
        { catalog: wh.catalog, routes: [route] },
        esmEvent(stream.records, { from: i, to: i + 1 }),
      );
    }
    let rewritten = 0;
    const faulty = new FaultyCatalog(wh.catalog);
    faulty.beforeCommit = async () => {
      const table = await wh.catalog.loadTable(route.table);
      const { plan } = await planCompaction(table, resolveSettings(table.metadata), 'during', 'pos.t');
      const p = plan as RewritePlan;
      const outcomes: GroupOutcome[] = [];
      for (const g of p.groups) outcomes.push(await compactGroup(table, p, g.index));
      rewritten = (await commitRewrite(wh.catalog, route.table, p, outcomes)).groupsCommitted.length;
    };

    // Act: the updates of keys 1–3, written against the small files the compaction replaces
    await ingestEvent({ catalog: faulty, routes: [route] }, esmEvent(stream.records, { from: 3, to: 6 }));

    // Assess: one row per key, the newest
    expect(rewritten).toBe(1);
    const expected = modelAfter(stream, 'upsert', new Set([0, 1, 2, 3, 4, 5]));
    const table = await wh.catalog.loadTable(route.table);
    expect((await readScanRows(table, await planScan(table))).map(itemKey).sort()).toEqual(expected);
    const local = (uri: string) => uri.replace(wh.url, wh.dir);
    const duck = await duckdbLiveRows(table, ['id', 'region', 'amount', 'note'], ['id'], local);
    expect(duck.map(itemKey).sort()).toEqual(expected);
  });

  it("another writer's batch of other keys landing while a batch is written: the batch's deletes still hold", async () => {
    // Prepare: keys 1 and 2 (on two Kafka partitions) written; then an update of each, as two writers
    const route: TableRoute = {
      table: { namespace: ['pos'], name: 'other_keys_meanwhile' },
      topics: [CDC_TOPIC],
      schema: ITEMS_SCHEMA,
      mode: 'upsert',
      identifierColumns: ['id'],
      kafkaLineage: true,
      properties: {},
    };
    const steps = [1, 2, 1, 2].map((id, i) => ({
      id,
      action: 0,
      region: 'EU',
      amount: i,
      note: null,
      noise: false,
    }));
    const stream = buildStream(steps, 'upsert');
    for (let i = 0; i < 2; i++) {
      await ingestEvent(
        { catalog: wh.catalog, routes: [route] },
        esmEvent(stream.records, { from: i, to: i + 1 }),
      );
    }
    const faulty = new FaultyCatalog(wh.catalog);
    let other = 0;
    faulty.beforeCommit = async () => {
      if (other++ > 0) return;
      await ingestEvent(
        { catalog: wh.catalog, routes: [route] },
        esmEvent(stream.records, { from: 2, to: 3 }),
      );
    };

    // Act: key 2's update located its row before key 1's update landed
    const report = await ingestEvent(
      { catalog: faulty, routes: [route] },
      esmEvent(stream.records, { from: 3, to: 4 }),
    );

    // Assess: the commit conflicted once and went through on the new base with the same files (a
    // second attempt of one round, not a round written again), and every reader shows the newest rows
    expect(stream.records[2].partition).not.toBe(stream.records[3].partition);
    expect(report.tables[0].attempts).toBe(2);
    const expected = modelAfter(stream, 'upsert', new Set([0, 1, 2, 3]));
    const table = await wh.catalog.loadTable(route.table);
    expect((await readScanRows(table, await planScan(table))).map(itemKey).sort()).toEqual(expected);
    const local = (uri: string) => uri.replace(wh.url, wh.dir);
    const duck = await duckdbLiveRows(table, ['id', 'region', 'amount', 'note'], ['id'], local);
    expect(duck.map(itemKey).sort()).toEqual(expected);
  });
});
