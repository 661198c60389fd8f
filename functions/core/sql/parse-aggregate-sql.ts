/**
 * An aggregate route's SQL → the query floe runs on arrival. Parsed with node-sql-parser (its Flink
 * dialect reads `TUMBLE(ts, INTERVAL '1' MINUTE)` as Flink users write it), then checked against the
 * subset floe computes exactly; anything else is refused with the clause it found, never approximated:
 *
 *   SELECT <group column> | TUMBLE_START(...) | TUMBLE_END(...) | COUNT(*) | COUNT(c) | SUM(c) | MIN(c)
 *          | MAX(c) | AVG(c)  [AS alias] , ...
 *   FROM <the route's topic>
 *   [WHERE <comparisons, IN, BETWEEN, IS NULL, AND, OR, NOT over the mapped record's columns>]
 *   GROUP BY <columns>, TUMBLE(<event-time column>, INTERVAL 'n' SECOND|MINUTE|HOUR|DAY)
 */
// The Flink dialect's own build (215 KB), not the package's main entry, which holds every dialect's
// grammar (2.5 MB): the ingest handler imports this module at init, and the main entry alone was three
// quarters of its bundle — parsed and resident in every function, SQL routes or not.
import nodeSqlParser from 'node-sql-parser/build/flinksql.js';
import { ValidationError } from '../errors.js';
import type { Expression } from '../scan/expression.js';
import {
  asAggregateCall,
  asColumnRef,
  asFunctionCall,
  asInterval,
  describeNode,
  isNode,
  type Node,
  nodeType,
} from './sql-ast.js';
import { whereToExpression } from './where-to-expression.js';

export type AggregateFunction = 'count' | 'sum' | 'min' | 'max' | 'avg';

export interface AggregateColumn {
  fn: AggregateFunction;
  /** The column aggregated; absent for COUNT(*). */
  column?: string;
  /** The result column's name. */
  alias: string;
}

export interface AggregateQuery {
  /** The topic the FROM clause names. */
  from: string;
  /** GROUP BY columns of the mapped record (also the result table's key, with window_start). */
  groupBy: string[];
  /** The TUMBLE window: its event-time column and size. */
  window: { column: string; sizeMicros: bigint; text: string };
  aggregates: AggregateColumn[];
  /** The WHERE clause in floe's filter language; absent when there is none. */
  where?: Expression;
}

const UNITS: Record<string, bigint> = {
  second: 1_000_000n,
  minute: 60_000_000n,
  hour: 3_600_000_000n,
  day: 86_400_000_000n,
};

const FUNCTIONS: Record<string, AggregateFunction> = {
  COUNT: 'count',
  SUM: 'sum',
  MIN: 'min',
  MAX: 'max',
  AVG: 'avg',
};

/** Columns the result table always has: an alias may not take them. */
export const RESERVED_COLUMNS = ['window_start', 'window_end', 'window_closed'] as const;

function refuse(label: string, message: string): never {
  throw new ValidationError(`${label} ${message}`);
}

function astOf(sql: string, label: string): Node {
  let ast: unknown;
  try {
    ast = new nodeSqlParser.Parser().astify(sql, { database: 'flinksql' });
  } catch (error) {
    const location =
      isNode(error) && isNode(error.location) && isNode(error.location.start)
        ? error.location.start
        : undefined;
    const where = location ? ` at line ${String(location.line)}, column ${String(location.column)}` : '';
    const text = error instanceof Error ? error.message.split('\n')[0].slice(0, 160) : String(error);
    return refuse(label, `is not SQL floe can read${where}: ${text}`);
  }
  const statements = Array.isArray(ast) ? ast : [ast];
  if (statements.length !== 1) refuse(label, `holds ${statements.length} statements: give one SELECT`);
  const select = statements[0];
  if (!isNode(select) || select.type !== 'select') {
    return refuse(
      label,
      `must be a SELECT (found ${isNode(select) ? String(select.type).toUpperCase() : 'nothing'})`,
    );
  }
  return select;
}

function parseWindow(call: { name: string; args: unknown[] }, label: string): AggregateQuery['window'] {
  if (call.name === 'HOP' || call.name === 'SESSION' || call.name === 'CUMULATE') {
    refuse(
      label,
      `GROUP BY: ${call.name} windows are not supported, only TUMBLE (use Flink for sliding and session windows)`,
    );
  }
  const [first, second] = call.args;
  const ref = asColumnRef(first);
  const interval = asInterval(second);
  if (call.args.length !== 2 || !ref || !interval) {
    refuse(
      label,
      `GROUP BY: ${call.name} takes an event-time column and an INTERVAL: ${call.name}(ts, INTERVAL '1' MINUTE)`,
    );
  }
  const unit = UNITS[interval.unit];
  if (!unit)
    refuse(
      label,
      `GROUP BY: ${call.name} interval unit '${interval.unit.toUpperCase()}' is not one of SECOND, MINUTE, HOUR, DAY`,
    );
  if (!/^[1-9]\d*$/.test(interval.amount)) {
    refuse(label, `GROUP BY: ${call.name} interval '${interval.amount}' must be a positive whole number`);
  }
  return {
    column: ref.column,
    sizeMicros: BigInt(interval.amount) * unit,
    text: `INTERVAL '${interval.amount}' ${interval.unit.toUpperCase()}`,
  };
}

function parseGroupBy(select: Node, label: string): { columns: string[]; window: AggregateQuery['window'] } {
  const groupby = select.groupby;
  const items =
    isNode(groupby) && Array.isArray(groupby.columns)
      ? groupby.columns
      : Array.isArray(groupby)
        ? groupby
        : [];
  const columns: string[] = [];
  let window: AggregateQuery['window'] | undefined;
  for (const item of items) {
    const ref = asColumnRef(item);
    if (ref) {
      if (columns.includes(ref.column)) refuse(label, `GROUP BY: column ${ref.column} is listed twice`);
      columns.push(ref.column);
      continue;
    }
    const call = asFunctionCall(item);
    if (call && ['TUMBLE', 'HOP', 'SESSION', 'CUMULATE'].includes(call.name)) {
      if (window) refuse(label, 'GROUP BY: only one TUMBLE window is allowed');
      window = parseWindow(call, label);
      continue;
    }
    refuse(label, `GROUP BY: ${describeNode(item)} is not a column or TUMBLE(...)`);
  }
  if (!window) refuse(label, "GROUP BY: needs one TUMBLE(ts, INTERVAL 'n' SECOND|MINUTE|HOUR|DAY)");
  return { columns, window };
}

function sameWindow(call: { args: unknown[] }, window: AggregateQuery['window']): boolean {
  const ref = asColumnRef(call.args[0]);
  const interval = asInterval(call.args[1]);
  const unit = interval ? UNITS[interval.unit] : undefined;
  return (
    call.args.length === 2 &&
    ref?.column === window.column &&
    unit !== undefined &&
    /^\d+$/.test(interval?.amount ?? '') &&
    BigInt(interval?.amount ?? '0') * unit === window.sizeMicros
  );
}

function parseSelectItem(
  item: unknown,
  position: number,
  groupBy: readonly string[],
  window: AggregateQuery['window'],
  label: string,
): AggregateColumn | { group: string; alias: string } | undefined {
  const where = `SELECT item ${position}`;
  const expr = isNode(item) ? item.expr : undefined;
  const alias = isNode(item) && typeof item.as === 'string' ? item.as : undefined;
  const ref = asColumnRef(expr);
  if (ref?.column === '*')
    refuse(label, `${where}: SELECT * is not supported; name the group columns and aggregates`);
  if (ref) {
    if (!groupBy.includes(ref.column)) {
      refuse(label, `${where}: column ${ref.column} is neither in GROUP BY nor aggregated`);
    }
    if (alias !== undefined && alias !== ref.column) {
      refuse(label, `${where}: a group column keeps its name in the result table (drop AS ${alias})`);
    }
    return { group: ref.column, alias: ref.column };
  }
  const call = asFunctionCall(expr);
  if (call && (call.name === 'TUMBLE_START' || call.name === 'TUMBLE_END')) {
    const column = call.name === 'TUMBLE_START' ? 'window_start' : 'window_end';
    if (!sameWindow(call, window))
      refuse(label, `${where}: ${call.name} must repeat the GROUP BY's TUMBLE arguments`);
    if (alias !== undefined && alias !== column) {
      refuse(label, `${where}: ${call.name} is the result column ${column} (AS ${column} or no alias)`);
    }
    return undefined;
  }
  const aggregate = asAggregateCall(expr);
  if (!aggregate) {
    return refuse(
      label,
      `${where}: ${describeNode(expr)} is not a group column or an aggregate (COUNT, SUM, MIN, MAX, AVG)`,
    );
  }
  const fn = FUNCTIONS[aggregate.name];
  if (!fn) refuse(label, `${where}: ${aggregate.name} is not supported (COUNT, SUM, MIN, MAX, AVG are)`);
  if (aggregate.distinct) refuse(label, `${where}: ${aggregate.name}(DISTINCT ...) is not supported`);
  if (alias === undefined) refuse(label, `${where}: ${aggregate.name}(...) needs a name (AS alias)`);
  // COUNT(*) parses as a `star` node, other calls' `*` as a column named `*`.
  if (nodeType(aggregate.arg) === 'star' || asColumnRef(aggregate.arg)?.column === '*') {
    if (fn !== 'count') refuse(label, `${where}: ${aggregate.name}(*) is not defined; only COUNT(*) is`);
    return { fn, alias };
  }
  const column = asColumnRef(aggregate.arg);
  if (!column) {
    refuse(label, `${where}: ${aggregate.name} takes a column, not ${describeNode(aggregate.arg)}`);
  }
  return { fn, column: column.column, alias };
}

function checkFrom(select: Node, label: string): string {
  const from = Array.isArray(select.from) ? select.from : [];
  if (from.length === 0) refuse(label, 'FROM: name the route topic the records come from');
  if (from.length > 1)
    refuse(label, 'FROM: joins and several sources are not supported (use Flink for joins)');
  const source = from[0];
  if (!isNode(source) || typeof source.table !== 'string' || source.expr !== undefined) {
    refuse(label, 'FROM: must name the topic (a subquery is not supported)');
  }
  return source.table;
}

/**
 * Parses and checks an aggregate route's SQL (`label` prefixes every message, e.g. `routes[0].aggregate.sql`).
 * @throws ValidationError naming the offending clause; retrying cannot help (fix the SQL)
 */
export function parseAggregateSql(sql: string, label: string): AggregateQuery {
  const select = astOf(sql, label);
  if (select.with) refuse(label, 'WITH is not supported');
  if (select.distinct)
    refuse(label, 'SELECT DISTINCT is not supported (GROUP BY already gives one row per group)');
  if (select.having) refuse(label, 'HAVING is not supported (every group is kept; filter rows with WHERE)');
  if (select.orderby)
    refuse(label, 'ORDER BY is not supported (the result is a table keyed by group and window)');
  if (isNode(select.limit) && Array.isArray(select.limit.value) && select.limit.value.length > 0) {
    refuse(label, 'LIMIT is not supported');
  }
  const from = checkFrom(select, label);
  const { columns: groupBy, window } = parseGroupBy(select, label);
  const items = Array.isArray(select.columns) ? select.columns : [];
  const aggregates: AggregateColumn[] = [];
  const names = new Set<string>();
  const selectedGroups = new Set<string>();
  items.forEach((item, i) => {
    const parsed = parseSelectItem(item, i + 1, groupBy, window, label);
    if (!parsed) return;
    if ('group' in parsed) selectedGroups.add(parsed.group);
    else {
      if ((RESERVED_COLUMNS as readonly string[]).includes(parsed.alias)) {
        refuse(
          label,
          `SELECT item ${i + 1}: ${parsed.alias} is a column every aggregate table has; pick another name`,
        );
      }
      aggregates.push(parsed);
    }
    if (names.has(parsed.alias))
      refuse(label, `SELECT item ${i + 1}: the name ${parsed.alias} is used twice`);
    names.add(parsed.alias);
  });
  for (const column of groupBy) {
    if (!selectedGroups.has(column))
      refuse(label, `SELECT: the group column ${column} must be selected (it is part of the result key)`);
  }
  if (aggregates.length === 0) refuse(label, 'SELECT: no aggregate (COUNT, SUM, MIN, MAX, AVG)');
  const where = select.where ? whereToExpression(select.where, from, label) : undefined;
  return { from, groupBy, window, aggregates, ...(where ? { where } : {}) };
}
