/**
 * A gathered struct's or list's validity and a list's offsets in typed storage (gathered-validity.ts)
 * hold what the boolean[] and number[] they replace held: the same rows after any pushes and
 * rollbacks past their first capacity, the same Arrow validity, the same slices and takes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidityBuilder } from '../../../functions/core/data/arrow/column-target.js';
import { Offsets, Validity } from '../../../functions/core/data/arrow/gathered-validity.js';

const ops = fc.array(
  fc.oneof(
    { weight: 8, arbitrary: fc.boolean().map((push) => ({ push })) },
    { weight: 1, arbitrary: fc.nat(40).map((truncate) => ({ truncate })) },
  ),
  { maxLength: 120 },
);

function bitmapOf(valid: readonly boolean[]): ValidityBuilder {
  const builder = new ValidityBuilder(valid.length);
  valid.forEach((v, i) => {
    if (!v) builder.setNull(i);
  });
  return builder;
}

describe('Validity', () => {
  it('holds the rows a boolean[] holds, and gives the same Arrow validity', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), ops, (rows, steps) => {
        // Prepare
        const validity = new Validity(rows);
        const model: boolean[] = [];
        // Act
        for (const step of steps) {
          if ('push' in step) {
            validity.push(step.push);
            model.push(step.push);
          } else if (step.truncate < model.length) {
            validity.truncate(step.truncate);
            model.length = step.truncate;
          }
        }
        // Assess
        expect(validity.length).toBe(model.length);
        expect(validity.nulls).toBe(model.filter((v) => !v).length);
        expect(Array.from({ length: model.length + 2 }, (_, i) => validity.get(i))).toEqual([
          ...model,
          false,
          false,
        ]);
        const built = validity.toBuilder();
        const expected = bitmapOf(model);
        expect(built.nullCount).toBe(expected.nullCount);
        expect(built.bitmap).toEqual(expected.bitmap);
        const start = model.length >> 2;
        const end = model.length - (model.length >> 3);
        const slice = validity.slice(start, end);
        expect(Array.from({ length: slice.length }, (_, i) => slice.get(i))).toEqual(model.slice(start, end));
        const indices = model.map((_, i) => model.length - 1 - i).filter((i) => i % 3 !== 1);
        const taken = validity.take(indices);
        expect(Array.from({ length: taken.length }, (_, i) => taken.get(i))).toEqual(
          indices.map((i) => model[i]),
        );
        expect(taken.nulls).toBe(indices.filter((i) => !model[i]).length);
      }),
    );
  });
});

describe('Offsets', () => {
  it('holds the offsets a number[] holds, rolled back and sliced alike', () => {
    const steps = fc.array(
      fc.oneof(
        { weight: 8, arbitrary: fc.nat(5).map((count) => ({ count })) },
        { weight: 1, arbitrary: fc.nat(40).map((truncate) => ({ truncate })) },
      ),
      { maxLength: 120 },
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), steps, (rows, list) => {
        // Prepare
        const offsets = new Offsets(rows);
        const model = [0];
        // Act
        for (const step of list) {
          if ('count' in step) {
            offsets.pushCount(step.count);
            model.push(model[model.length - 1] + step.count);
          } else if (step.truncate + 1 < model.length) {
            offsets.truncate(step.truncate);
            model.length = step.truncate + 1;
          }
        }
        // Assess
        expect(offsets.length).toBe(model.length);
        expect(offsets.last()).toBe(model[model.length - 1]);
        expect([...offsets.toInt32Array()]).toEqual(model);
        const start = (model.length - 1) >> 1;
        const end = model.length - 1;
        const first = model[start];
        expect([...offsets.slice(start, end).toInt32Array()]).toEqual(
          model.slice(start, end + 1).map((o) => o - first),
        );
      }),
    );
  });
});
