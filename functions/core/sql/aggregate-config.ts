/**
 * A route's `aggregate` setting, read and checked once at start-up (FLOE_TABLES, the CLI's routes
 * file, and `cdk synth` through the construct's rendering), so a bad query is one clear error:
 *
 *   "aggregate": { "sql": "SELECT ... GROUP BY user_id, TUMBLE(order_ts, INTERVAL '1' MINUTE)",
 *                  "allowedLatenessSeconds": 60,
 *                  "emit": { "topic": "paid-per-user-minute", "bootstrapServers": "b-1:9092,b-2:9092" } }
 *
 * The route's `schema` is the mapped record's schema (what the append path would write); the result
 * table's schema is derived from the query (aggregate-schema.ts).
 */
import { checkSettings, refuseSetting as fail } from '../check-settings.js';
import { bindExpression } from '../scan/bind-expression.js';
import type { BoundExpression } from '../scan/expression.js';
import type { Schema } from '../spec/types.js';
import { type AggregatePlan, planAggregate } from './aggregate-schema.js';
import { type AggregateSettings, AggregateSettingsSchema, EMIT_AUTHS } from './aggregate-settings-schema.js';
import { parseAggregateSql } from './parse-aggregate-sql.js';

export interface EmitConfig {
  /** The topic each closed window is produced to. */
  topic: string;
  /** Brokers (`host:port,...`) to produce to. */
  bootstrapServers: string[];
  /**
   * How the producer signs in: `aws-msk-iam` (Amazon MSK's IAM listeners, TLS: port 9098 inside the
   * VPC, 9198 public; the function's role and region), or `none`. @default 'none'
   */
  auth: EmitAuth;
  /** TLS to the brokers (always on with `aws-msk-iam`). @default false */
  tls: boolean;
}

export { EMIT_AUTHS };
export type EmitAuth = (typeof EMIT_AUTHS)[number];

export interface AggregateConfig {
  sql: string;
  /** How long after a window's end (by the watermark) records are still counted. @default 0 */
  allowedLatenessSeconds: number;
  emit?: EmitConfig;
  /**
   * Partitions of the source topic(s): the watermark waits until records of that many were seen.
   * @default the partitions seen so far (the first batch of one partition can close windows others still feed)
   */
  partitions?: number;
  plan: AggregatePlan;
  /** The WHERE clause bound to the record schema (evaluated by scan/evaluate-row.ts). */
  where?: BoundExpression;
}

function parseBootstrap(value: string | string[], path: string): string[] {
  const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
  if (!list.every((b) => /^[^:\s]+:\d{1,5}$/.test(b))) {
    fail(path, 'must be "host:port[,host:port...]" or an array of host:port');
  }
  return list;
}

function parseEmit(raw: NonNullable<AggregateSettings['emit']>, path: string): EmitConfig {
  const bootstrapServers = parseBootstrap(raw.bootstrapServers, `${path}.bootstrapServers`);
  const auth = raw.auth ?? 'none';
  // MSK's IAM listeners speak TLS only; turning TLS off with them would only fail at the first emit.
  if (auth === 'aws-msk-iam' && raw.tls === false)
    fail(`${path}.tls`, 'cannot be false with auth aws-msk-iam (MSK IAM listeners are TLS only)');
  return { topic: raw.topic, bootstrapServers, auth, tls: auth === 'aws-msk-iam' || raw.tls === true };
}

/**
 * Parses a route's `aggregate` (`path` is where it sits, e.g. `routes[0].aggregate`) against the
 * route's topics and record schema.
 * @throws RouteConfigError (a ValidationError) listing the settings at fault, else naming the SQL
 *   clause at fault; retrying cannot help
 */
export function parseAggregateConfig(
  raw: unknown,
  path: string,
  route: { topics: readonly string[]; schema?: Schema },
): AggregateConfig {
  checkSettings(AggregateSettingsSchema, raw, path);
  const r = raw as AggregateSettings;
  const lateness = r.allowedLatenessSeconds ?? 0;
  const emit = r.emit === undefined ? undefined : parseEmit(r.emit, `${path}.emit`);
  const partitions = r.partitions;
  const label = `${path}.sql`;
  const query = parseAggregateSql(r.sql, label);
  if (!route.topics.includes(query.from)) {
    fail(label, `FROM ${query.from}: must be the route's topic (${route.topics.join(', ')})`);
  }
  if (!route.schema) {
    fail(path, "an aggregate route needs 'schema': the columns of its mapped records, which the SQL reads");
  }
  const plan = planAggregate(query, route.schema, label);
  let where: BoundExpression | undefined;
  if (query.where) {
    try {
      where = bindExpression(query.where, route.schema);
    } catch (error) {
      fail(`${label} WHERE`, error instanceof Error ? error.message : String(error));
    }
  }
  return {
    sql: r.sql,
    allowedLatenessSeconds: lateness,
    ...(emit ? { emit } : {}),
    ...(partitions === undefined ? {} : { partitions }),
    plan,
    ...(where ? { where } : {}),
  };
}
