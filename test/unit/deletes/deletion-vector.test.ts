/**
 * DeletionVector's set operations, after Iceberg Java's TestBitmapPositionDeleteIndex and
 * TestRoaringPositionBitmap: positions across keys iterate in order, merging unions, the bounds Java
 * enforces are enforced, and a dense container (past 4096 values, a bitmap) answers like a plain Set.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { DeletionVector, MAX_POSITION } from '../../../functions/core/deletes/deletion-vector.js';
import { seededRandom } from '../../support/seeded-random.js';

describe('DeletionVector', () => {
  it('iterates positions added in any order ascending across keys (Java testForEach)', () => {
    // Prepare
    const positions = [10n, 1n << 33n, (1n << 33n) + 1n, 2n << 33n, (2n << 33n) + 1n, 3n << 33n];
    const vector = new DeletionVector();

    // Act
    for (const i of [0, 5, 1, 2, 4, 3]) vector.add(positions[i]!);

    // Assess
    expect([...vector.positions()]).toEqual(positions);
    expect(vector.cardinality).toBe(6);
  });

  it('counts a position once, says whether add changed anything, and treats number and bigint alike', () => {
    // Prepare
    const vector = new DeletionVector();

    // Act
    const first = vector.add(2 ** 40 + 7);
    const again = vector.add(2n ** 40n + 7n);

    // Assess
    expect([first, again]).toEqual([true, false]);
    expect(vector.cardinality).toBe(1);
    expect(vector.has(2n ** 40n + 7n)).toBe(true);
    expect(vector.has(2 ** 40 + 6)).toBe(false);
    expect(vector.has(7)).toBe(false);
  });

  it('accepts MAX_POSITION and refuses what Java refuses, with a ValidationError', () => {
    // Prepare
    const vector = new DeletionVector();

    // Act
    vector.add(MAX_POSITION);

    // Assess
    expect([...vector.positions()]).toEqual([MAX_POSITION]);
    for (const bad of [-1, -1n, 1.5, Number.NaN, 2 ** 53, MAX_POSITION + 1n, 2n ** 63n]) {
      expect(() => vector.add(bad), String(bad)).toThrow(ValidationError);
      expect(() => vector.has(bad), String(bad)).toThrow(ValidationError);
    }
    expect(vector.cardinality).toBe(1);
  });

  it('merges another vector as a union and leaves that one as it was (Java testMergeBitmapIndexWithNonEmpty)', () => {
    // Prepare
    const left = new DeletionVector();
    left.addAll([1n << 33n, 10n, 20n]);
    const right = new DeletionVector();
    right.addAll([(1n << 33n) + 1n, 2n << 33n, 20n, MAX_POSITION]);

    // Act
    left.merge(right);

    // Assess
    expect([...left.positions()]).toEqual([10n, 20n, 1n << 33n, (1n << 33n) + 1n, 2n << 33n, MAX_POSITION]);
    expect(left.cardinality).toBe(6);
    expect(right.cardinality).toBe(4);
  });

  it("merges a position delete file's sorted positions into an existing vector", () => {
    // Prepare: the previous DV of a data file, and an older position delete file's pos column
    const vector = new DeletionVector();
    vector.addAll([3, 4, 5]);
    const positionDeletes = [0n, 4n, 5n, 6n, 2n ** 32n];

    // Act
    vector.addAll(positionDeletes);

    // Assess
    expect([...vector.positions()]).toEqual([0n, 3n, 4n, 5n, 6n, 2n ** 32n]);
  });

  it('answers like a Set for a dense container (past 4096 values, held as a bitmap) and a sparse one', () => {
    // Prepare
    const random = seededRandom(7);
    const expected = new Set<number>();
    const vector = new DeletionVector();
    for (let i = 0; i < 20_000; i++) {
      const position =
        i % 2 === 0 ? Math.floor(random() * 65536) : 65536 * 9 + Math.floor(random() * 2 ** 22);
      expected.add(position);
      vector.add(position);
    }

    // Act
    const iterated = [...vector.positions()].map(Number);

    // Assess
    expect(vector.cardinality).toBe(expected.size);
    expect(iterated).toEqual([...expected].sort((a, b) => a - b));
    const wrong: number[] = [];
    for (let probe = 0; probe < 70_000; probe += 7)
      if (vector.has(probe) !== expected.has(probe)) wrong.push(probe);
    expect(wrong).toEqual([]);
  });
});
