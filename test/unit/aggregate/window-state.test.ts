/** Window assignment, partial aggregates and their merge, the watermark — values worked out by hand. */
import { describe, expect, it } from 'vitest';
import { parseAggregateConfig } from '../../../functions/core/sql/aggregate-config.js';
import { touchedWindowsFilter } from '../../../functions/core/aggregate/read-windows.js';
import {
  advanceEventTimes,
  computeWatermark,
  decodeEventTimes,
  encodeEventTimes,
  isClosed,
} from '../../../functions/core/aggregate/watermark.js';
import { windowKeyJson, windowValueJson } from '../../../functions/core/aggregate/window-json.js';
import {
  mergeWindows,
  partialWindows,
  windowStartOf,
} from '../../../functions/core/aggregate/window-state.js';
import type { Row, Schema } from '../../../functions/core/spec/types.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'user_id', required: true, type: 'long' },
    { id: 2, name: 'amount', required: false, type: 'decimal(10, 2)' },
    { id: 3, name: 'qty', required: false, type: 'int' },
    { id: 4, name: 'ts', required: true, type: 'timestamptz' },
  ],
};
const { plan } = parseAggregateConfig(
  {
    sql:
      'SELECT user_id, COUNT(*) AS n, COUNT(qty) AS with_qty, SUM(amount) AS total, MIN(qty) AS lo, MAX(qty) AS hi, AVG(qty) AS mean ' +
      "FROM orders GROUP BY user_id, TUMBLE(ts, INTERVAL '1' MINUTE)",
  },
  'aggregate',
  { topics: ['orders'], schema: SCHEMA },
);
const M = 60_000_000n;
const at = (minute: number, second: number) => BigInt(minute) * M + BigInt(second) * 1_000_000n;
const rec = (user_id: bigint, ts: bigint, amount: bigint | null, qty: number | null): Row => ({
  user_id,
  ts,
  amount,
  qty,
});
const partial = (rows: Row[]) => partialWindows(plan, rows, (r) => r.ts as bigint);

describe('windowStartOf', () => {
  it('floors to the window, also before 1970', () => {
    expect(windowStartOf(at(5, 59), M)).toBe(at(5, 0));
    expect(windowStartOf(at(6, 0), M)).toBe(at(6, 0));
    expect(windowStartOf(-1n, M)).toBe(-M);
    expect(windowStartOf(-M, M)).toBe(-M);
  });
});

describe('partial windows and merge', () => {
  it('aggregates per group and window with SQL null rules', () => {
    const w = partial([
      rec(1n, at(5, 10), 1050n, 2),
      rec(1n, at(5, 50), null, null),
      rec(1n, at(6, 1), 200n, 7),
      rec(2n, at(5, 0), -300n, 4),
    ]);
    expect([...w.values()]).toEqual([
      {
        user_id: 1n,
        window_start: at(5, 0),
        window_end: at(6, 0),
        n: 2n,
        with_qty: 1n,
        total: 1050n,
        lo: 2,
        hi: 2,
        mean_sum: 2n,
        mean_count: 1n,
        mean: 2,
        window_closed: false,
      },
      expect.objectContaining({
        user_id: 1n,
        window_start: at(6, 0),
        n: 1n,
        total: 200n,
        lo: 7,
        hi: 7,
        mean: 7,
      }),
      expect.objectContaining({ user_id: 2n, window_start: at(5, 0), n: 1n, total: -300n, mean_sum: 4n }),
    ]);
  });

  it('merging two partitions’ partials equals one pass over all records', () => {
    const a = [rec(1n, at(5, 1), 100n, 3), rec(1n, at(5, 2), null, 9)];
    const b = [rec(1n, at(5, 3), 250n, 1), rec(1n, at(5, 4), 5n, null)];
    const merged = mergeWindows(plan, [...partial(a).values()][0], [...partial(b).values()][0]);
    const once = [...partial([...a, ...b]).values()][0];
    expect(merged).toEqual(once);
    expect(merged).toMatchObject({
      n: 4n,
      with_qty: 3n,
      total: 355n,
      lo: 1,
      hi: 9,
      mean_sum: 13n,
      mean_count: 3n,
    });
    expect(merged.mean).toBeCloseTo(13 / 3, 12);
  });

  it('a window of only null values has null sum, min, max and avg', () => {
    const [w] = partial([rec(1n, at(5, 1), null, null)]).values();
    expect(w).toMatchObject({
      n: 1n,
      with_qty: 0n,
      total: null,
      lo: null,
      hi: null,
      mean: null,
      mean_count: 0n,
    });
    const merged = mergeWindows(plan, w, w);
    expect(merged).toMatchObject({ n: 2n, total: null, mean: null });
  });

  it('a closed row stays closed through a merge', () => {
    const [w] = partial([rec(1n, at(5, 1), 1n, 1)]).values();
    expect(mergeWindows(plan, { ...w, window_closed: true }, w).window_closed).toBe(true);
  });
});

describe('watermark', () => {
  it('is the slowest partition’s newest event time minus the lateness, and never moves back', () => {
    let times = advanceEventTimes(
      new Map(),
      new Map([
        [
          'orders',
          new Map([
            [0, at(10, 0)],
            [1, at(7, 30)],
          ]),
        ],
      ]),
    );
    expect(computeWatermark(times, 30_000_000n, undefined)).toBe(at(7, 0));
    // An older record on partition 0 does not move its clock back.
    times = advanceEventTimes(times, new Map([['orders', new Map([[0, at(2, 0)]])]]));
    expect(times.get('orders')?.get(0)).toBe(at(10, 0));
    // A partition seen for the first time with old records does not reopen closed windows.
    times = advanceEventTimes(times, new Map([['orders', new Map([[2, at(1, 0)]])]]));
    expect(computeWatermark(times, 30_000_000n, at(7, 0))).toBe(at(7, 0));
    expect(computeWatermark(new Map(), 0n, undefined)).toBeUndefined();
    // With the partition count known, no watermark until every partition has been seen.
    const two = new Map([
      [
        'orders',
        new Map([
          [0, at(10, 0)],
          [1, at(7, 30)],
        ]),
      ],
    ]);
    expect(computeWatermark(two, 0n, undefined, 3)).toBeUndefined();
    expect(computeWatermark(two, 0n, undefined, 2)).toBe(at(7, 30));
  });

  it('closes a window whose end is at or before the watermark', () => {
    expect(isClosed(at(7, 0), at(7, 0))).toBe(true);
    expect(isClosed(at(7, 0), at(6, 59))).toBe(false);
    expect(isClosed(at(7, 0), undefined)).toBe(false);
  });

  it('round-trips the summary text', () => {
    const times = new Map([
      [
        'orders',
        new Map([
          [3, 5n],
          [0, -7n],
        ]),
      ],
    ]);
    const text = encodeEventTimes(times);
    expect(text).toBe('{"orders":{"0":"-7","3":"5"}}');
    expect(decodeEventTimes(text)).toEqual(times);
    expect(() => decodeEventTimes('{"orders":{"0":5}}')).toThrow(
      'floe.aggregate.event-times: bad time orders/0',
    );
  });

  it('reads the windows a batch touches or closes, no others', () => {
    expect(touchedWindowsFilter([], undefined)).toBeUndefined();
    expect(touchedWindowsFilter([at(5, 0)], at(3, 0))).toEqual({
      op: 'or',
      left: { op: 'in', term: 'window_start', values: [at(5, 0)] },
      right: {
        op: 'and',
        left: { op: 'eq', term: 'window_closed', value: false },
        right: { op: 'lt-eq', term: 'window_end', value: at(3, 0) },
      },
    });
  });
});

describe('emitted JSON', () => {
  it('keys by group columns and window_start; the value is the row with readable types', () => {
    const [w] = partial([rec(7n, 1_795_000_000_000_000n, 1050n, 2)]).values();
    expect(windowKeyJson(plan, w)).toBe('{"user_id":7,"window_start":"2026-11-18T11:06Z"}');
    expect(JSON.parse(windowValueJson(plan, w))).toEqual({
      user_id: 7,
      window_start: '2026-11-18T11:06Z',
      window_end: '2026-11-18T11:07Z',
      n: 1,
      with_qty: 1,
      total: '10.50',
      lo: 2,
      hi: 2,
      mean_sum: 2,
      mean_count: 1,
      mean: 2,
      window_closed: false,
    });
  });
});
