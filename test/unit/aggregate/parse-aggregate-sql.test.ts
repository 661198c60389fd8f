/** The SQL subset: what is taken, and every refusal with the clause it names. */
import { describe, expect, it } from 'vitest';
import { parseAggregateConfig } from '../../../functions/core/sql/aggregate-config.js';
import { parseAggregateSql } from '../../../functions/core/sql/parse-aggregate-sql.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';
import type { Schema } from '../../../functions/core/spec/types.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'user_id', required: true, type: 'long' },
    { id: 2, name: 'status', required: false, type: 'string' },
    { id: 3, name: 'amount', required: true, type: 'decimal(10, 2)' },
    { id: 4, name: 'order_ts', required: true, type: 'timestamptz' },
    { id: 5, name: 'score', required: false, type: 'double' },
    { id: 6, name: 'paid', required: false, type: 'boolean' },
  ],
};

const ISSUE_SQL =
  "SELECT user_id, TUMBLE_START(order_ts, INTERVAL '1' MINUTE) AS window_start, SUM(amount) AS paid_amount, COUNT(*) AS orders FROM orders WHERE status = 'PAID' GROUP BY user_id, TUMBLE(order_ts, INTERVAL '1' MINUTE)";

const L = 'routes[0].aggregate.sql';
const parse = (sql: string) => parseAggregateSql(sql, L);
const config = (sql: string, extra: Record<string, unknown> = {}) =>
  parseAggregateConfig({ sql, ...extra }, 'routes[0].aggregate', { topics: ['orders'], schema: SCHEMA });
const g = (select: string, rest = '') =>
  `SELECT ${select} FROM orders ${rest} GROUP BY user_id, TUMBLE(order_ts, INTERVAL '1' MINUTE)`;

describe('parseAggregateSql', () => {
  it("reads the issue's query", () => {
    const q = parse(ISSUE_SQL);
    expect(q).toEqual({
      from: 'orders',
      groupBy: ['user_id'],
      window: { column: 'order_ts', sizeMicros: 60_000_000n, text: "INTERVAL '1' MINUTE" },
      aggregates: [
        { fn: 'sum', column: 'amount', alias: 'paid_amount' },
        { fn: 'count', alias: 'orders' },
      ],
      where: { op: 'eq', term: 'status', value: 'PAID' },
    });
  });

  it.each([
    ["INTERVAL '30' SECOND", 30_000_000n],
    ["INTERVAL '5' MINUTE", 300_000_000n],
    ["INTERVAL '2' HOUR", 7_200_000_000n],
    ["INTERVAL '1' DAY", 86_400_000_000n],
  ])('window size %s', (interval, micros) => {
    const q = parse(`SELECT COUNT(*) AS n FROM orders GROUP BY TUMBLE(order_ts, ${interval})`);
    expect(q.window.sizeMicros).toBe(micros);
    expect(q.groupBy).toEqual([]);
  });

  it('translates WHERE into the --where expression language', () => {
    const q = parse(
      g(
        'user_id, COUNT(*) AS n',
        "WHERE (status IN ('PAID', 'SHIPPED') OR status IS NULL) AND NOT amount BETWEEN 1 AND 2.50 AND 10 < amount AND paid = true",
      ),
    );
    expect(q.where).toEqual({
      op: 'and',
      left: {
        op: 'and',
        left: {
          op: 'and',
          left: {
            op: 'or',
            left: { op: 'in', term: 'status', values: ['PAID', 'SHIPPED'] },
            right: { op: 'is-null', term: 'status' },
          },
          right: {
            op: 'not',
            child: {
              op: 'and',
              left: { op: 'gt-eq', term: 'amount', value: { type: 'number', text: '1' } },
              right: { op: 'lt-eq', term: 'amount', value: { type: 'number', text: '2.50' } },
            },
          },
        },
        right: { op: 'gt', term: 'amount', value: { type: 'number', text: '10' } },
      },
      right: { op: 'eq', term: 'paid', value: true },
    });
  });

  it.each([
    ['SELECT', 'is not SQL floe can read at line 1, column'],
    [`${ISSUE_SQL}; ${ISSUE_SQL}`, 'holds 2 statements: give one SELECT'],
    ['INSERT INTO t VALUES (1)', 'must be a SELECT (found INSERT)'],
    [`WITH x AS (SELECT 1) ${ISSUE_SQL}`, 'WITH is not supported'],
    [g('DISTINCT user_id, COUNT(*) AS n'), 'SELECT DISTINCT is not supported'],
    [`${g('user_id, COUNT(*) AS n')} HAVING COUNT(*) > 1`, 'HAVING is not supported'],
    [`${g('user_id, COUNT(*) AS n')} ORDER BY user_id`, 'ORDER BY is not supported'],
    [`${g('user_id, COUNT(*) AS n')} LIMIT 3`, 'LIMIT is not supported'],
    [
      "SELECT COUNT(*) AS n FROM orders JOIN users ON orders.user_id = users.id GROUP BY TUMBLE(order_ts, INTERVAL '1' MINUTE)",
      'FROM: joins and several sources are not supported',
    ],
    [
      "SELECT COUNT(*) AS n FROM (SELECT * FROM orders) o GROUP BY TUMBLE(order_ts, INTERVAL '1' MINUTE)",
      'FROM: must name the topic (a subquery is not supported)',
    ],
    [
      'SELECT COUNT(*) AS n FROM orders GROUP BY user_id',
      "GROUP BY: needs one TUMBLE(ts, INTERVAL 'n' SECOND|MINUTE|HOUR|DAY)",
    ],
    ['SELECT COUNT(*) AS n FROM orders', 'GROUP BY: needs one TUMBLE'],
    [
      "SELECT COUNT(*) AS n FROM orders GROUP BY TUMBLE(order_ts, INTERVAL '1' MINUTE), TUMBLE(order_ts, INTERVAL '1' HOUR)",
      'GROUP BY: only one TUMBLE window is allowed',
    ],
    [
      "SELECT COUNT(*) AS n FROM orders GROUP BY HOP(order_ts, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)",
      'GROUP BY: HOP windows are not supported, only TUMBLE',
    ],
    [
      "SELECT COUNT(*) AS n FROM orders GROUP BY TUMBLE(order_ts, INTERVAL '1' MONTH)",
      "GROUP BY: TUMBLE interval unit 'MONTH' is not one of SECOND, MINUTE, HOUR, DAY",
    ],
    [
      "SELECT COUNT(*) AS n FROM orders GROUP BY TUMBLE(order_ts, INTERVAL '0' MINUTE)",
      "GROUP BY: TUMBLE interval '0' must be a positive whole number",
    ],
    [
      'SELECT COUNT(*) AS n FROM orders GROUP BY TUMBLE(order_ts)',
      'GROUP BY: TUMBLE takes an event-time column and an INTERVAL',
    ],
    [
      "SELECT COUNT(*) AS n FROM orders GROUP BY user_id, user_id, TUMBLE(order_ts, INTERVAL '1' MINUTE)",
      'GROUP BY: column user_id is listed twice',
    ],
    [
      "SELECT COUNT(*) AS n FROM orders GROUP BY UPPER(status), TUMBLE(order_ts, INTERVAL '1' MINUTE)",
      'GROUP BY: UPPER(...) is not a column or TUMBLE(...)',
    ],
    [g('*'), 'SELECT item 1: SELECT * is not supported'],
    [
      g('user_id, status, COUNT(*) AS n'),
      'SELECT item 2: column status is neither in GROUP BY nor aggregated',
    ],
    [
      g('user_id AS u, COUNT(*) AS n'),
      'SELECT item 1: a group column keeps its name in the result table (drop AS u)',
    ],
    [
      g('user_id, amount + 1 AS x, COUNT(*) AS n'),
      'SELECT item 2: an expression with + is not a group column or an aggregate',
    ],
    [g('user_id, STDDEV(amount) AS s'), 'SELECT item 2: STDDEV(...) is not a group column or an aggregate'],
    [g('user_id, COUNT(DISTINCT status) AS n'), 'SELECT item 2: COUNT(DISTINCT ...) is not supported'],
    [g('user_id, SUM(amount)'), 'SELECT item 2: SUM(...) needs a name (AS alias)'],
    [g('user_id, SUM(*) AS s'), 'SELECT item 2: SUM(*) is not defined; only COUNT(*) is'],
    [
      g('user_id, SUM(amount) AS window_end'),
      'SELECT item 2: window_end is a column every aggregate table has',
    ],
    [g('user_id, SUM(amount) AS n, COUNT(*) AS n'), 'SELECT item 3: the name n is used twice'],
    [
      g("user_id, TUMBLE_START(order_ts, INTERVAL '5' MINUTE) AS window_start, COUNT(*) AS n"),
      "SELECT item 2: TUMBLE_START must repeat the GROUP BY's TUMBLE arguments",
    ],
    [
      g("user_id, TUMBLE_END(order_ts, INTERVAL '1' MINUTE) AS e, COUNT(*) AS n"),
      'SELECT item 2: TUMBLE_END is the result column window_end (AS window_end or no alias)',
    ],
    [g('COUNT(*) AS n'), 'SELECT: the group column user_id must be selected'],
    [g('user_id'), 'SELECT: no aggregate'],
    [g('user_id, COUNT(*) AS n', "WHERE status LIKE 'P%'"), 'WHERE: LIKE is not supported'],
    [
      g('user_id, COUNT(*) AS n', 'WHERE amount > 1 + 2'),
      'WHERE: expected a literal value, found an expression with +',
    ],
    [
      g('user_id, COUNT(*) AS n', 'WHERE amount = user_id'),
      'WHERE: = compares column amount with column user_id',
    ],
    [
      g('user_id, COUNT(*) AS n', 'WHERE status = NULL'),
      'WHERE: compare with null using IS NULL / IS NOT NULL',
    ],
    [g('user_id, COUNT(*) AS n', 'WHERE u.status = 1'), 'WHERE: column u.status: only the FROM topic'],
    [g('user_id, COUNT(*) AS n', 'WHERE status = "PAID"'), 'WHERE: "PAID" is a double-quoted string'],
    [
      g('user_id, COUNT(*) AS n', 'WHERE UPPER(status)'),
      'WHERE: UPPER(...) is not a condition floe can evaluate',
    ],
  ])('refuses %s', (sql, message) => {
    expect(() => parse(sql)).toThrow(`${L} ${message}`);
  });
});

describe('parseAggregateConfig', () => {
  it('derives the result schema with the key as identifier fields', () => {
    const c = config(g('user_id, COUNT(*) AS n, SUM(amount) AS s, AVG(score) AS a, MIN(order_ts) AS first'));
    expect(c.plan.resultSchema.fields.map((f) => [f.name, f.type, f.required])).toEqual([
      ['user_id', 'long', true],
      ['window_start', 'timestamptz', true],
      ['window_end', 'timestamptz', true],
      ['n', 'long', true],
      ['s', 'decimal(38, 2)', false],
      ['a_sum', 'double', false],
      ['a_count', 'long', true],
      ['a', 'double', false],
      ['first', 'timestamptz', false],
      ['window_closed', 'boolean', true],
    ]);
    expect(c.plan.resultSchema['identifier-field-ids']).toEqual([1, 2]);
    expect(c.allowedLatenessSeconds).toBe(0);
  });

  it.each([
    [
      { sql: g('user_id, COUNT(*) AS n').replace('FROM orders', 'FROM payments') },
      "routes[0].aggregate.sql: FROM payments: must be the route's topic (orders)",
    ],
    [
      { sql: g('user_id, SUM(status) AS s') },
      'routes[0].aggregate.sql SELECT: SUM(status) needs a numeric column; status is string',
    ],
    [{ sql: g('user_id, MIN(paid) AS s') }, 'MIN(paid): boolean values have no order floe compares'],
    [
      { sql: g('user_id, COUNT(nope) AS s') },
      "COUNT(nope): column nope is not a column of the route's records",
    ],
    [
      {
        sql: "SELECT score, COUNT(*) AS n FROM orders GROUP BY score, TUMBLE(order_ts, INTERVAL '1' MINUTE)",
      },
      'GROUP BY: score is double; a float cannot be part of a key',
    ],
    [
      { sql: "SELECT COUNT(*) AS n FROM orders GROUP BY TUMBLE(status, INTERVAL '1' MINUTE)" },
      'TUMBLE(status, ...) needs a timestamp column; it is string',
    ],
    [
      { sql: g('user_id, AVG(amount) AS a, COUNT(*) AS a_count') },
      'the result column a_count would exist twice',
    ],
    [{ sql: g('user_id, COUNT(*) AS n', 'WHERE status = 3') }, 'routes[0].aggregate.sql WHERE'],
    [
      { sql: ISSUE_SQL, allowedLatenessSeconds: -1 },
      'routes[0].aggregate.allowedLatenessSeconds: expected a whole number of seconds, 0 or more, got -1',
    ],
    [{ sql: ISSUE_SQL, window: 1 }, 'routes[0].aggregate.window: unknown setting'],
    [
      { sql: ISSUE_SQL, emit: { topic: 'out' } },
      'routes[0].aggregate.emit.bootstrapServers: missing; expected "host:port[,host:port...]"',
    ],
    [
      { sql: ISSUE_SQL, emit: { topic: 'out', bootstrapServers: 'nohost' } },
      'emit.bootstrapServers: must be "host:port',
    ],
    [
      { sql: ISSUE_SQL, emit: { topic: 'bad topic!', bootstrapServers: 'b:9092' } },
      'routes[0].aggregate.emit.topic: expected a Kafka topic name, got "bad topic!"',
    ],
    [
      { sql: ISSUE_SQL, emit: { topic: 'out', bootstrapServers: 'b:9098', auth: 'scram' } },
      'routes[0].aggregate.emit.auth: expected one of none, aws-msk-iam, got "scram"',
    ],
    [
      { sql: ISSUE_SQL, emit: { topic: 'out', bootstrapServers: 'b:9098', auth: 'aws-msk-iam', tls: false } },
      'routes[0].aggregate.emit.tls: cannot be false with auth aws-msk-iam',
    ],
    [
      { sql: ISSUE_SQL, emit: { topic: 'out', bootstrapServers: 'b:9092', tls: 'yes' } },
      'routes[0].aggregate.emit.tls: expected true or false, got "yes"',
    ],
    [{ sql: '' }, 'routes[0].aggregate.sql: expected a SELECT ... FROM <topic> GROUP BY'],
  ])('refuses %j', (raw, message) => {
    expect(() =>
      parseAggregateConfig(raw, 'routes[0].aggregate', { topics: ['orders'], schema: SCHEMA }),
    ).toThrow(message);
  });

  it('through parseRoutes: needs the record schema, refuses mode and identifierColumns', () => {
    expect(() => parseRoutes([{ table: 'rt.x', topics: ['orders'], aggregate: { sql: ISSUE_SQL } }])).toThrow(
      "routes[0].aggregate: an aggregate route needs 'schema'",
    );
    expect(() =>
      parseRoutes([
        { table: 'rt.x', topics: ['orders'], schema: SCHEMA, mode: 'upsert', aggregate: { sql: ISSUE_SQL } },
      ]),
    ).toThrow('routes[0].aggregate: an aggregate route takes neither mode nor identifierColumns');
    const [route] = parseRoutes([
      {
        table: 'rt.x',
        topics: ['orders'],
        schema: SCHEMA,
        aggregate: {
          sql: ISSUE_SQL,
          allowedLatenessSeconds: 60,
          emit: { topic: 'out', bootstrapServers: 'b-1:9092,b-2:9092' },
        },
      },
    ]);
    expect(route.aggregate?.emit).toEqual({
      topic: 'out',
      bootstrapServers: ['b-1:9092', 'b-2:9092'],
      auth: 'none',
      tls: false,
    });
    expect(route.aggregate?.allowedLatenessSeconds).toBe(60);
  });

  it.each([
    [{ auth: 'aws-msk-iam' }, { auth: 'aws-msk-iam', tls: true }],
    [{ tls: true }, { auth: 'none', tls: true }],
  ])('reads emit %j as %j', (extra, expected) => {
    const config = parseAggregateConfig(
      { sql: ISSUE_SQL, emit: { topic: 'out', bootstrapServers: 'b-1:9098', ...extra } },
      'routes[0].aggregate',
      { topics: ['orders'], schema: SCHEMA },
    );
    expect(config.emit).toEqual({ topic: 'out', bootstrapServers: ['b-1:9098'], ...expected });
  });
});
