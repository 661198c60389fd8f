/**
 * The views kept across batches, on real index tables (embedded catalog): after any sequence of
 * appends, compactions and rebuilds, the view this process keeps (told of its own commits) and a view
 * that hears of nothing (as if another process wrote: it reads what was appended) answer exactly what
 * reading the index whole answers; a warm view reads nothing, a stale one only the files appended
 * since; a view over the bound is not kept.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { compactIndex } from '../../../functions/core/key-index/compact-index.js';
import { appendEntries, replaceEntries } from '../../../functions/core/key-index/index-commit.js';
import type { IndexEntry } from '../../../functions/core/key-index/index-entries.js';
import { readIndexView } from '../../../functions/core/key-index/index-locator.js';
import { type Coverage, loadOrCreateIndex } from '../../../functions/core/key-index/index-table.js';
import { IndexViewCache, sharedIndexViews } from '../../../functions/core/key-index/view-cache.js';
import { CountingFileIO } from '../../../functions/core/scan/counting-file-io.js';
import { tempWarehouse } from '../../support/tables.js';

const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4'];
const COVERAGE: Coverage = { snapshotId: 7n, sequenceNumber: 1, tableUuid: 'main-table' };
const accept = () => 'append' as const;

const entryArb: fc.Arbitrary<IndexEntry> = fc.record({
  key: fc.constantFrom(...KEYS),
  filePath: fc.constantFrom('s3://w/data/a.parquet', 's3://w/data/b.parquet'),
  pos: fc.integer({ min: 0, max: 2 }).map(BigInt),
  live: fc.boolean(),
  seq: fc.integer({ min: 1, max: 5 }).map(BigInt),
  version: fc.constant(null),
});

type Op =
  | { kind: 'append'; entries: IndexEntry[]; look: boolean }
  | { kind: 'compact'; look: boolean }
  | { kind: 'rebuild'; entries: IndexEntry[]; look: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      entries: fc.array(entryArb, { minLength: 1, maxLength: 6 }),
      look: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const), look: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('rebuild' as const),
      entries: fc.array(entryArb, { maxLength: 4 }),
      look: fc.boolean(),
    }),
  },
);

const statesOf = (view: { state(k: string): unknown } | undefined) => KEYS.map((k) => view?.state(k));

describe('the key index views kept across batches', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeAll(async () => {
    wh = await tempWarehouse();
  });
  afterAll(() => wh.cleanup());
  let tables = 0;
  const newIndex = () => loadOrCreateIndex(wh.catalog, { namespace: ['shop'], name: `t${tables++}` });

  it('answer what the index read whole answers, after any appends, compactions and rebuilds', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 5 }), async (ops) => {
        // Prepare
        let index = await newIndex();
        const elsewhere = new IndexViewCache();
        for (const op of ops) {
          // Act
          if (op.kind === 'append') {
            const out = await appendEntries(wh.catalog, index, op.entries, COVERAGE, accept);
            if (out.kind === 'committed') index = out.index;
          } else if (op.kind === 'rebuild')
            index = await replaceEntries(wh.catalog, index, op.entries, COVERAGE);
          else {
            const before = statesOf(await readIndexView(index));
            index = (await compactIndex(wh.catalog, index)) ?? index;
            expect(statesOf(await readIndexView(index))).toEqual(before);
          }

          // Assess
          const whole = statesOf(await readIndexView(index));
          expect(statesOf(await sharedIndexViews.view(index))).toEqual(whole);
          if (op.look) expect(statesOf(await elsewhere.view(index))).toEqual(whole);
        }
        expect(statesOf(await elsewhere.view(index))).toEqual(statesOf(await readIndexView(index)));
      }),
      { seed: 30, numRuns: 12 },
    );
  });

  it('reads nothing when warm, and only the files appended since when another writer appended', async () => {
    // Prepare
    const entry = (key: string, pos: bigint): IndexEntry => ({
      key,
      filePath: 's3://w/data/a.parquet',
      pos,
      live: true,
      seq: 1n,
      version: null,
    });
    let index = await newIndex();
    for (let i = 0; i < 4; i++) {
      const out = await appendEntries(wh.catalog, index, [entry(`k${i}`, BigInt(i))], COVERAGE, accept);
      if (out.kind === 'committed') index = out.index;
    }
    const elsewhere = new IndexViewCache();
    const reading = (table: LoadedTable) => {
      const io = new CountingFileIO(table.io);
      return { table: { ...table, io }, io };
    };
    const cold = reading(index);
    await elsewhere.view(cold.table);
    const warm = reading(index);
    await elsewhere.view(warm.table);
    const out = await appendEntries(wh.catalog, index, [entry('k9', 9n)], COVERAGE, accept);
    if (out.kind !== 'committed') throw new Error('the append did not land');
    const appended = reading(out.index);

    // Act
    const view = await elsewhere.view(appended.table);

    // Assess
    expect(warm.io.bytesRead).toBe(0);
    expect(appended.io.bytesRead).toBeGreaterThan(0);
    // One entry file of five, with its manifest list and manifest: well under the cold read.
    expect(appended.io.bytesRead).toBeLessThan(cold.io.bytesRead / 2);
    expect(view?.state('k9').row).toMatchObject({ pos: 9n });
    expect(view?.state('k0').row).toMatchObject({ pos: 0n });
  });

  it('keeps no view larger than its bound: the lookup reads by keys instead', async () => {
    // Prepare
    const index = await newIndex();
    const out = await appendEntries(
      wh.catalog,
      index,
      KEYS.map((key, i) => ({
        key,
        filePath: 's3://w/data/a.parquet',
        pos: BigInt(i),
        live: true,
        seq: 1n,
        version: null,
      })),
      COVERAGE,
      accept,
    );
    if (out.kind !== 'committed') throw new Error('the append did not land');
    const small = new IndexViewCache({ maxBytes: 1_000 });

    // Act
    const view = await small.view(out.index);

    // Assess
    expect(view).toBeUndefined();
    expect(small.stats()).toEqual({ views: 0, keys: 0, bytes: 0, unkept: 1 });
    expect((await new IndexViewCache().view(out.index))?.state('k4').row).toMatchObject({ pos: 4n });
  });
});
