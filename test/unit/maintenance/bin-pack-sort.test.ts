import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { binPack } from '../../../functions/core/maintenance/bin-pack.js';
import { sortRows } from '../../../functions/core/table/sort-rows.js';
import type { Row, SortOrder } from '../../../functions/core/spec/types.js';
import { EVENTS_SCHEMA } from './maintenance-fixture.js';

describe('bin packing rewrite groups', () => {
  it('puts every item in exactly one bin, none over capacity but a lone oversized item, none mergeable', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 60 }),
        fc.integer({ min: 50, max: 400 }),
        (sizes, capacity) => {
          // Act
          const bins = binPack(
            sizes.map((s, i) => ({ i, s })),
            (x) => x.s,
            capacity,
          );
          // Assess
          expect(
            bins
              .flat()
              .map((x) => x.i)
              .sort((a, b) => a - b),
          ).toEqual(sizes.map((_, i) => i));
          for (const bin of bins) {
            const used = bin.reduce((t, x) => t + x.s, 0);
            if (bin.length > 1) expect(used).toBeLessThanOrEqual(capacity);
          }
          // first fit: no two bins could have been one (an item of the later one did not fit the earlier)
          const used = bins.map((bin) => bin.reduce((t, x) => t + x.s, 0));
          for (let a = 0; a < used.length; a++) {
            for (let b = a + 1; b < used.length; b++) expect(used[a] + used[b]).toBeGreaterThan(capacity);
          }
        },
      ),
    );
  });

  it('fills bins before opening new ones', () => {
    const bins = binPack([60, 50, 40, 30, 20], (x) => x, 100);
    expect(bins).toEqual([
      [60, 40],
      [50, 30, 20],
    ]);
  });
});

describe('sorting rows by a sort order', () => {
  const rows: Row[] = [
    { id: 3n, category: 'b', amount: null, note: 'x' },
    { id: 1n, category: 'a', amount: 2.5, note: 'y' },
    { id: 2n, category: 'b', amount: 1.5, note: 'z' },
    { id: 4n, category: 'a', amount: 2.5, note: 'w' },
  ];

  it('orders by each field in turn, with its direction and null order, stably', () => {
    const order: SortOrder = {
      'order-id': 1,
      fields: [
        { 'source-id': 2, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' },
        { 'source-id': 3, transform: 'identity', direction: 'desc', 'null-order': 'nulls-first' },
      ],
    };
    expect(sortRows(rows, order, EVENTS_SCHEMA).map((r) => r.id)).toEqual([1n, 4n, 3n, 2n]);
    const nullsLast: SortOrder = { ...order, fields: [{ ...order.fields[1], 'null-order': 'nulls-last' }] };
    expect(sortRows(rows, nullsLast, EVENTS_SCHEMA).map((r) => r.id)).toEqual([1n, 4n, 2n, 3n]);
  });

  it('applies the field’s transform before comparing', () => {
    const order: SortOrder = {
      'order-id': 2,
      fields: [{ 'source-id': 1, transform: 'truncate[10]', direction: 'desc', 'null-order': 'nulls-last' }],
    };
    // truncate[10] puts 1..4 in one bucket: the stable sort keeps the input order
    expect(sortRows(rows, order, EVENTS_SCHEMA)).toEqual(rows);
  });

  it('leaves rows as they are for the unsorted order', () => {
    expect(sortRows(rows, { 'order-id': 0, fields: [] }, EVENTS_SCHEMA)).toBe(rows);
  });
});
