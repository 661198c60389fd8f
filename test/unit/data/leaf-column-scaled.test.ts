/**
 * LeafColumn.pushScaled, which the JSON scan and the lineage append use to store a double without
 * passing it along (a heap number a value): the same slots pushNumber gives for src[i] × factor when
 * that is a safe integer, nothing at all otherwise, and no typed storage taken for a column without it.
 */
import { describe, expect, it } from 'vitest';
import { LeafColumn } from '../../../functions/core/data/arrow/leaf-column.js';

describe('LeafColumn.pushScaled', () => {
  it('appends what pushNumber appends for a safe product, past the first capacity', () => {
    // Prepare
    const src = Float64Array.of(1_700_000_000_123, -0, 0, -5, 2 ** 40);
    const scaled = new LeafColumn('timestamptz', 2);
    const pushed = new LeafColumn('timestamptz', 2);
    // Act
    const taken = Array.from(src, (_, i) => scaled.pushScaled(src, i, 1000));
    for (const v of src) pushed.pushNumber(v * 1000 + 0);
    // Assess
    expect(taken).toEqual([true, true, true, true, true]);
    expect(scaled.length).toBe(5);
    expect(Array.from({ length: 5 }, (_, i) => scaled.valueAt(i))).toEqual(
      Array.from({ length: 5 }, (_, i) => pushed.valueAt(i)),
    );
    expect(Object.is(scaled.nums?.[1], 0)).toBe(true);
  });

  it('appends nothing when the product is not a safe integer or the column keeps no numbers', () => {
    // Prepare
    const leaf = new LeafColumn('timestamptz', 1);
    const text = new LeafColumn('string', 1);
    const src = Float64Array.of(2 ** 52, 1.5, 7);
    // Act, Assess
    expect(leaf.pushScaled(src, 0, 1000)).toBe(false);
    expect(leaf.pushScaled(src, 1, 1)).toBe(false);
    expect(leaf.length).toBe(0);
    expect(text.pushScaled(src, 2, 1)).toBe(false);
    expect(text.length).toBe(0);
  });
});
