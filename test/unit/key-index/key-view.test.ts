/**
 * The compact view kept across batches answers exactly what IndexView answers for all the entries
 * folded so far, batch by batch, in any order of entries; an honest history (rows added, replaced,
 * deleted, compacted, facts appended twice) never makes it give up.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type IndexEntry, viewOf } from '../../../functions/core/key-index/index-entries.js';
import { KeyView } from '../../../functions/core/key-index/key-view.js';

const KEYS = ['k0', 'k1', 'k2', 'k3'];

/** Entries over a few keys, files and positions, so that they meet; offsets from `offsets`. */
function entriesOf(keys: string[], offsets: fc.Arbitrary<bigint>): fc.Arbitrary<IndexEntry> {
  return fc.record({
    key: fc.constantFrom(...keys),
    filePath: fc.constantFrom('a', 'b', 'c'),
    pos: fc.integer({ min: 0, max: 2 }).map(BigInt),
    live: fc.boolean(),
    seq: fc.integer({ min: 1, max: 6 }).map(BigInt),
    version: fc.option(
      fc.record({
        topic: fc.constantFrom('t', 'u'),
        partition: fc.integer({ min: 0, max: 1 }),
        offset: offsets,
      }),
    ),
  });
}

const entryArb = entriesOf(KEYS, fc.integer({ min: 0, max: 3 }).map(BigInt));

/**
 * Folds `batches` one by one as the view cache does: a fold that cannot stay exact drops the view and
 * folds everything so far into a new one. Returns the view after each batch and how often it gave up.
 */
async function foldLikeTheCache(
  batches: readonly IndexEntry[][],
  keys: readonly string[] = KEYS,
  make = () => new KeyView(),
) {
  let view = make();
  let gaveUp = 0;
  const seen: IndexEntry[] = [];
  const after: KeyView[] = [];
  for (const batch of batches) {
    seen.push(...batch);
    const result = await view.fold(batch);
    if (result === 'unkept') throw new Error('a small entry did not fit the view');
    if (result === false) {
      gaveUp++;
      view = make();
      expect(await view.fold(seen)).toBe(true);
    }
    after.push(view);
    expect(keys.map((k) => view.state(k))).toEqual(keys.map((k) => viewOf(seen).state(k)));
  }
  return { after, gaveUp };
}

/** An honest history of one table: facts of snapshots 1..n, appended in batches, some twice. */
const historyArb = fc
  .array(fc.record({ op: fc.constantFrom('insert', 'replace', 'delete', 'compact'), key: fc.nat(7) }), {
    minLength: 1,
    maxLength: 30,
  })
  .chain((ops) =>
    fc.tuple(fc.constant(ops), fc.array(fc.nat(3), { minLength: ops.length, maxLength: ops.length })),
  );

function honestBatches([ops, cuts]: [{ op: string; key: number }[], number[]]): IndexEntry[][] {
  const rows = new Map<string, { filePath: string; pos: bigint }>();
  const snapshots: IndexEntry[][] = [];
  ops.forEach(({ op, key }, i) => {
    const seq = BigInt(i + 1);
    const k = `k${key}`;
    const file = `f${i}`;
    const facts: IndexEntry[] = [];
    const dead = (r: { filePath: string; pos: bigint }, key2: string) =>
      facts.push({ key: key2, ...r, live: false, seq, version: null });
    const held = rows.get(k);
    if (op === 'compact') {
      // Every live row moves to one new file: the old rows die, the new ones live, one seq.
      let pos = 0n;
      for (const [key2, r] of rows) {
        dead(r, key2);
        const moved = { filePath: file, pos: pos++ };
        facts.push({ key: key2, ...moved, live: true, seq, version: null });
        rows.set(key2, moved);
      }
    } else if (op === 'delete') {
      if (held) dead(held, k);
      rows.delete(k);
    } else if (op === 'replace' || !held) {
      if (held) dead(held, k);
      const row = { filePath: file, pos: 0n };
      facts.push({
        key: k,
        ...row,
        live: true,
        seq,
        version: { topic: 't', partition: 0, offset: BigInt(i) },
      });
      rows.set(k, row);
    }
    snapshots.push(facts);
  });
  // Batches of consecutive snapshots; a cut of 0 appends the previous batch's facts again (two writers).
  const batches: IndexEntry[][] = [];
  let start = 0;
  for (let i = 0; i < snapshots.length; i++) {
    if (cuts[i] === 0 && batches.length > 0) batches.push([...batches[batches.length - 1]!]);
    if (cuts[i] !== 1 || i === snapshots.length - 1) {
      batches.push(snapshots.slice(start, i + 1).flat());
      start = i + 1;
    }
  }
  return batches;
}

describe('the compact key view', () => {
  it('answers what IndexView answers for everything folded so far, whatever the entries', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(entryArb, { maxLength: 8 }), { minLength: 1, maxLength: 6 }),
        async (batches) => {
          await foldLikeTheCache(batches);
        },
      ),
      { seed: 30, numRuns: 400 },
    );
  });

  it('never gives up on an honest history, however it is batched', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, async (history) => {
        const keys = Array.from({ length: 8 }, (_, i) => `k${i}`);
        const batches = honestBatches(history);
        const { after, gaveUp } = await foldLikeTheCache(batches);
        expect(gaveUp).toBe(0);
        const all = viewOf(batches.flat());
        expect(keys.map((k) => after.at(-1)!.state(k))).toEqual(keys.map((k) => all.state(k)));
      }),
      { seed: 30, numRuns: 200 },
    );
  });

  it('answers the same for keys of every kind sharing a one-bucket hash table, any offsets', async () => {
    // Longs, a UUID and 16 bytes (held at fixed widths until another kind comes) and other texts.
    const keys = ['i1', 'i-2', 'i3', 's"7d3f0c1e-9a4b-4c2d-8e6f-000000000001"', `b${'00'.repeat(16)}`, 'k0'];
    const arb = entriesOf(keys, fc.constantFrom(0n, 3n, 65_535n, 65_536n, 2n ** 40n + 5n, -1n));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(arb, { maxLength: 8 }), { minLength: 1, maxLength: 6 }),
        async (batches) => {
          await foldLikeTheCache(batches, keys, () => new KeyView({ buckets: 1 }));
        },
      ),
      { seed: 38, numRuns: 300 },
    );
  });

  it('forgets the row of a deleted key, and takes the row of its re-insert', () => {
    // Prepare
    const view = new KeyView({ buckets: 1 });
    const row = { key: 'i7', filePath: 'a', pos: 4n, version: null };
    view.fold([{ ...row, live: true, seq: 1n }]);

    // Act
    const deleted = view.fold([{ ...row, live: false, seq: 2n }]);
    const gone = view.state('i7');
    const back = view.fold([{ ...row, filePath: 'b', pos: 0n, live: true, seq: 3n }]);

    // Assess
    expect([deleted, gone.row, back]).toEqual([true, null, true]);
    expect(view.state('i7').row).toEqual({ filePath: 'b', pos: 0n, seq: 3n, version: null });
    expect(view.liveEntries()).toEqual([{ ...row, filePath: 'b', pos: 0n, live: true, seq: 3n }]);
  });

  it('keeps thousands of keys exact as its arrays and table grow, and after a trim', () => {
    // Prepare: keys of two kinds, each replaced or deleted in a later batch.
    const view = new KeyView({ buckets: 1 });
    const keys = Array.from({ length: 3_000 }, (_, i) => (i % 3 === 0 ? `s"order-${i}"` : `i${i}`));
    const live = (key: string, i: number, seq: bigint): IndexEntry => ({
      key,
      filePath: `f${seq}-${i % 7}`,
      pos: BigInt(i),
      live: true,
      seq,
      version: { topic: 't', partition: i % 4, offset: BigInt(i * 100_003) },
    });
    const first = keys.map((k, i) => live(k, i, 1n));
    const second = keys.flatMap((k, i) =>
      i % 2 === 0
        ? [{ ...first[i]!, live: false, seq: 2n }]
        : [live(k, i + 5_000, 2n), { ...first[i]!, live: false, seq: 2n }],
    );

    // Act
    const folded = [view.fold(first)];
    view.trim();
    folded.push(view.fold(second));

    // Assess
    expect(folded).toEqual([true, true]);
    const all = viewOf([...first, ...second]);
    expect(keys.map((k) => view.state(k))).toEqual(keys.map((k) => all.state(k)));
    expect(view.liveEntries()).toHaveLength(1_500);
  });

  it('refuses entries its arrays cannot hold, rather than rounding them', async () => {
    // Prepare
    const entry: IndexEntry = { key: 'k', filePath: 'a', pos: 2n ** 31n, live: true, seq: 1n, version: null };

    // Act
    const result = await new KeyView().fold([entry]);

    // Assess
    expect(result).toBe('unkept');
  });
});
