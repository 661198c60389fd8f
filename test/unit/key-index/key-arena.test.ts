/**
 * The key arena numbers key texts exactly as a Map would: a key gets the next slot when new and the
 * same slot ever after, any other text is not found, and each slot's text comes back unchanged —
 * whatever mix of longs, UUIDs, 16-byte keys and other texts (near misses of those forms, unpaired
 * surrogates) comes, in whatever order (the fixed-width modes give way to the general one), through a
 * hash table started at one bucket so that keys share buckets and the table grows many times.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyArena } from '../../../functions/core/key-index/key-arena.js';

const longArb = fc.oneof(
  fc.integer({ min: -300, max: 300 }).map((n) => `i${n}`),
  fc.integer({ min: -(10 ** 15) + 1, max: 10 ** 15 - 1 }).map((n) => `i${n}`),
  // Past 15 digits: held as text.
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => `i${n}`),
);
const hex = (n: number) => n.toString(16).padStart(2, '0');
// Half of them differ only in their first or last byte.
const uuidArb = fc.oneof(
  fc.uuid().map((u) => `s${JSON.stringify(u)}`),
  fc.tuple(fc.nat(255), fc.nat(3)).map(([a, b]) => `s"${hex(b)}3f0c1e-9a4b-4c2d-8e6f-0000000000${hex(a)}"`),
);
const hexArb = fc.oneof(
  fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => `b${Buffer.from(b).toString('hex')}`),
  fc.tuple(fc.nat(255), fc.nat(3)).map(([a, b]) => `b${hex(b)}${'00'.repeat(14)}${hex(a)}`),
);
const otherArb = fc.oneof(
  fc.constantFrom('i', 'i-', 'i-0', 'i007', 'i1a', 'i+1', 'i1|i2', '', 'n', '\ud800', 'a\udc00b', 'é'),
  fc.uuid().map((u) => `s"${u.toUpperCase()}"`),
  fc.uuid().map((u) => `s"${u.replaceAll('-', '_')}"`),
  fc.uint8Array({ minLength: 15, maxLength: 17 }).map((b) => `b${Buffer.from(b).toString('hex')}`),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 8 }),
);
const anyArb = fc.oneof(longArb, uuidArb, hexArb, otherArb);

/** A pool of distinct keys, its first ones of one kind (the arena's first mode), and what to do with them. */
const runArb = fc
  .tuple(
    fc.constantFrom(longArb, uuidArb, hexArb, otherArb),
    fc.integer({ min: 0, max: 60 }),
    fc.integer({ min: 0, max: 20 }),
  )
  .chain(([first, same, mixed]) =>
    fc
      .tuple(
        fc.uniqueArray(first, { minLength: same, maxLength: same }),
        fc.uniqueArray(anyArb, { minLength: mixed, maxLength: mixed }),
      )
      .map(([a, b]) => [...new Set([...a, ...b])]),
  )
  .filter((pool) => pool.length > 0)
  .chain((pool) =>
    fc.tuple(
      fc.constant(pool),
      fc.array(fc.record({ insert: fc.boolean(), key: fc.nat(pool.length - 1) }), { maxLength: 150 }),
      fc.integer({ min: 1, max: 4 }),
    ),
  );

describe('the key arena', () => {
  it('numbers keys as a Map does, and gives each slot its text back', () => {
    fc.assert(
      fc.property(runArb, ([pool, ops, buckets]) => {
        // Prepare
        const arena = new KeyArena(buckets);
        const model = new Map<string, number>();

        for (const op of ops) {
          const key = pool[op.key]!;
          // Act
          const slot = op.insert ? arena.insert(key) : arena.find(key);

          // Assess
          if (op.insert && !model.has(key)) model.set(key, model.size);
          expect(slot).toBe(model.get(key) ?? -1);
        }
        expect(arena.size).toBe(model.size);
        for (const [key, slot] of model) expect(arena.keyAt(slot)).toBe(key);
        for (const key of pool) expect(arena.find(key)).toBe(model.get(key) ?? -1);
      }),
      { seed: 38, numRuns: 400 },
    );
  });

  it('keeps every key through growth, a change of mode and a trim, at thousands of keys', () => {
    // Prepare
    const arena = new KeyArena(1);
    const longs = Array.from({ length: 5_000 }, (_, i) => `i${i * 7_919 - 10_000}`);
    const texts = Array.from({ length: 2_000 }, (_, i) => `s"order-${i}"`);

    // Act
    for (const key of longs) arena.insert(key);
    arena.trim(10);
    for (const key of texts) arena.insert(key);
    arena.trim(0);

    // Assess
    const all = [...longs, ...texts];
    expect(all.map((key) => arena.find(key))).toEqual(all.map((_, i) => i));
    expect(all.map((_, i) => arena.keyAt(i))).toEqual(all);
    expect(arena.find('i-10001')).toBe(-1);
  });
});
