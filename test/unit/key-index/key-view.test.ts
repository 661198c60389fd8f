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

const entryArb: fc.Arbitrary<IndexEntry> = fc.record({
  key: fc.constantFrom(...KEYS),
  filePath: fc.constantFrom('a', 'b', 'c'),
  pos: fc.integer({ min: 0, max: 2 }).map(BigInt),
  live: fc.boolean(),
  seq: fc.integer({ min: 1, max: 6 }).map(BigInt),
  version: fc.option(
    fc.record({
      topic: fc.constantFrom('t', 'u'),
      partition: fc.integer({ min: 0, max: 1 }),
      offset: fc.integer({ min: 0, max: 3 }).map(BigInt),
    }),
  ),
});

/**
 * Folds `batches` one by one as the view cache does: a fold that cannot stay exact drops the view and
 * folds everything so far into a new one. Returns the view after each batch and how often it gave up.
 */
async function foldLikeTheCache(batches: readonly IndexEntry[][]) {
  let view = new KeyView();
  let gaveUp = 0;
  const seen: IndexEntry[] = [];
  const after: KeyView[] = [];
  for (const batch of batches) {
    seen.push(...batch);
    const result = await view.fold(batch);
    if (result === 'unkept') throw new Error('a small entry did not fit the view');
    if (result === false) {
      gaveUp++;
      view = new KeyView();
      expect(await view.fold(seen)).toBe(true);
    }
    after.push(view);
    expect(KEYS.map((k) => view.state(k))).toEqual(KEYS.map((k) => viewOf(seen).state(k)));
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

  it('refuses entries its arrays cannot hold, rather than rounding them', async () => {
    // Prepare
    const entry: IndexEntry = { key: 'k', filePath: 'a', pos: 2n ** 31n, live: true, seq: 1n, version: null };

    // Act
    const result = await new KeyView().fold([entry]);

    // Assess
    expect(result).toBe('unkept');
  });
});
