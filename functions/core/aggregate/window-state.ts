/**
 * Tumbling windows and their aggregates as result-table rows. A window's row is its own state: counts,
 * sums (and AVG's sum + count) and extremes merge associatively, so a batch's partial rows merge with
 * the rows already committed — in any order, from any partition — into the same row one pass over all
 * the records would give. SQL's null rules hold: SUM/MIN/MAX/AVG/COUNT(col) skip nulls, and SUM of
 * only nulls is null.
 */
import { compareValues } from '../spec/conversions.js';
import { floorDivBig } from '../spec/epoch-time.js';
import type { Row, Value } from '../spec/types.js';
import { tupleKey } from '../scan/value-key.js';
import type { AggregatePlan, ResolvedAggregate } from '../sql/aggregate-schema.js';

/** The start of the tumbling window holding `micros` (windows are aligned to the epoch, as Flink's). */
export function windowStartOf(micros: bigint, sizeMicros: bigint): bigint {
  return floorDivBig(micros, sizeMicros) * sizeMicros;
}

/** The identity of a result row: the group values and the window start. */
export function windowKey(plan: AggregatePlan, row: Row): string {
  return tupleKey([...plan.query.groupBy.map((c) => row[c] ?? null), row.window_start ?? null]);
}

/** A window's row before any record: counts 0, the rest null, open. */
export function emptyWindow(plan: AggregatePlan, group: readonly Value[], start: bigint): Row {
  const row: Row = {};
  plan.query.groupBy.forEach((c, i) => {
    row[c] = group[i];
  });
  row.window_start = start;
  row.window_end = start + plan.query.window.sizeMicros;
  for (const a of plan.aggregates) {
    if (a.fn === 'count') row[a.alias] = 0n;
    else if (a.fn === 'avg') {
      row[`${a.alias}_sum`] = null;
      row[`${a.alias}_count`] = 0n;
      row[a.alias] = null;
    } else row[a.alias] = null;
  }
  row.window_closed = false;
  return row;
}

function add(a: ResolvedAggregate, x: Value, y: Value): Value {
  if (x === null) return y;
  if (y === null) return x;
  if (a.arithmetic === 'float') return Number(x) + Number(y);
  return BigInt(x as bigint | number) + BigInt(y as bigint | number);
}

/** A source value as the sum column holds it (integers widen to bigint). */
function asSum(a: ResolvedAggregate, v: Value): Value {
  if (v === null) return null;
  return a.arithmetic === 'float' ? Number(v) : BigInt(v as bigint | number);
}

function pick(x: Value, y: Value, fn: 'min' | 'max'): Value {
  if (x === null) return y;
  if (y === null) return x;
  const cmp = compareValues(x, y);
  return (fn === 'min' ? cmp <= 0 : cmp >= 0) ? x : y;
}

function average(a: ResolvedAggregate, sum: Value, count: bigint): Value {
  if (sum === null || count === 0n) return null;
  const total = a.arithmetic === 'decimal' ? Number(sum) / 10 ** a.scale : Number(sum);
  return total / Number(count);
}

/** Folds one mapped record (already filtered by WHERE) into its window's row. */
export function foldRecord(plan: AggregatePlan, window: Row, record: Row): void {
  for (const a of plan.aggregates) {
    const v = a.column === undefined ? null : (record[a.column] ?? null);
    switch (a.fn) {
      case 'count':
        if (a.column === undefined || v !== null) window[a.alias] = (window[a.alias] as bigint) + 1n;
        break;
      case 'sum':
        window[a.alias] = add(a, window[a.alias] ?? null, asSum(a, v));
        break;
      case 'min':
      case 'max':
        window[a.alias] = pick(window[a.alias] ?? null, v, a.fn);
        break;
      case 'avg': {
        if (v === null) break;
        const sum = add(a, window[`${a.alias}_sum`] ?? null, asSum(a, v));
        const count = (window[`${a.alias}_count`] as bigint) + 1n;
        window[`${a.alias}_sum`] = sum;
        window[`${a.alias}_count`] = count;
        window[a.alias] = average(a, sum, count);
      }
    }
  }
}

/** The row of a window seen twice (a committed row and a batch's partial): one pass over both's records. */
export function mergeWindows(plan: AggregatePlan, committed: Row, partial: Row): Row {
  const out: Row = { ...committed };
  for (const a of plan.aggregates) {
    switch (a.fn) {
      case 'count':
        out[a.alias] = BigInt(committed[a.alias] as bigint) + BigInt(partial[a.alias] as bigint);
        break;
      case 'sum':
        out[a.alias] = add(a, committed[a.alias] ?? null, partial[a.alias] ?? null);
        break;
      case 'min':
      case 'max':
        out[a.alias] = pick(committed[a.alias] ?? null, partial[a.alias] ?? null, a.fn);
        break;
      case 'avg': {
        const sum = add(a, committed[`${a.alias}_sum`] ?? null, partial[`${a.alias}_sum`] ?? null);
        const count =
          BigInt(committed[`${a.alias}_count`] as bigint) + BigInt(partial[`${a.alias}_count`] as bigint);
        out[`${a.alias}_sum`] = sum;
        out[`${a.alias}_count`] = count;
        out[a.alias] = average(a, sum, count);
      }
    }
  }
  out.window_closed = committed.window_closed === true || partial.window_closed === true;
  return out;
}

/**
 * A batch's partial windows: the mapped rows (filtered by WHERE, none late) folded per group and window.
 * `eventTime` gives a row's event time in micros (rows without one never get here).
 */
export function partialWindows(
  plan: AggregatePlan,
  rows: readonly Row[],
  eventTime: (row: Row) => bigint,
): Map<string, Row> {
  const windows = new Map<string, Row>();
  for (const row of rows) {
    const group = plan.query.groupBy.map((c) => row[c] ?? null);
    const start = windowStartOf(eventTime(row), plan.query.window.sizeMicros);
    const key = tupleKey([...group, start]);
    let window = windows.get(key);
    if (!window) {
      window = emptyWindow(plan, group, start);
      windows.set(key, window);
    }
    foldRecord(plan, window, row);
  }
  return windows;
}
