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
import { ValidationError } from '../errors.js';
import { bindExpression } from '../scan/bind-expression.js';
import type { BoundExpression } from '../scan/expression.js';
import type { Schema } from '../spec/types.js';
import { type AggregatePlan, planAggregate } from './aggregate-schema.js';
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

export const EMIT_AUTHS = ['none', 'aws-msk-iam'] as const;
export type EmitAuth = (typeof EMIT_AUTHS)[number];
const EMIT_KEYS = ['topic', 'bootstrapServers', 'auth', 'tls'];

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

const KEYS = ['sql', 'allowedLatenessSeconds', 'partitions', 'emit'];

function fail(path: string, message: string): never {
  throw new ValidationError(`${path}: ${message}`);
}

function parseBootstrap(value: unknown, path: string): string[] | undefined {
  if (value === undefined) return undefined;
  const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    !list.every((b) => typeof b === 'string' && /^[^:\s]+:\d{1,5}$/.test(b))
  ) {
    fail(path, 'must be "host:port[,host:port...]" or an array of host:port');
  }
  return list;
}

function parseEmit(raw: unknown, path: string): EmitConfig | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    fail(path, 'must be an object { topic, bootstrapServers, auth?, tls? }');
  const r = raw as Record<string, unknown>;
  for (const key of Object.keys(r)) {
    if (!EMIT_KEYS.includes(key))
      fail(`${path}.${key}`, `unknown setting (emit takes: ${EMIT_KEYS.join(', ')})`);
  }
  if (typeof r.topic !== 'string' || !/^[A-Za-z0-9._-]{1,249}$/.test(r.topic))
    fail(`${path}.topic`, 'must be a Kafka topic name');
  const bootstrapServers = parseBootstrap(r.bootstrapServers, `${path}.bootstrapServers`);
  // Required: a Lambda has no other broker address to produce to, and an emit that silently never
  // happens would be worse than a start-up error.
  if (!bootstrapServers)
    fail(`${path}.bootstrapServers`, 'is required: the brokers the closed windows are produced to');
  const auth = r.auth ?? 'none';
  if (typeof auth !== 'string' || !EMIT_AUTHS.includes(auth as EmitAuth))
    fail(`${path}.auth`, `must be one of ${EMIT_AUTHS.join(', ')}`);
  if (r.tls !== undefined && typeof r.tls !== 'boolean') fail(`${path}.tls`, 'must be true or false');
  // MSK's IAM listeners speak TLS only; turning TLS off with them would only fail at the first emit.
  if (auth === 'aws-msk-iam' && r.tls === false)
    fail(`${path}.tls`, 'cannot be false with auth aws-msk-iam (MSK IAM listeners are TLS only)');
  return {
    topic: r.topic,
    bootstrapServers,
    auth: auth as EmitAuth,
    tls: auth === 'aws-msk-iam' || r.tls === true,
  };
}

/**
 * Parses a route's `aggregate` (`path` is where it sits, e.g. `routes[0].aggregate`) against the
 * route's topics and record schema.
 * @throws ValidationError naming the setting or SQL clause at fault; retrying cannot help
 */
export function parseAggregateConfig(
  raw: unknown,
  path: string,
  route: { topics: readonly string[]; schema?: Schema },
): AggregateConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    fail(path, 'must be an object { sql, allowedLatenessSeconds?, emit? }');
  const r = raw as Record<string, unknown>;
  for (const key of Object.keys(r)) {
    if (!KEYS.includes(key)) fail(`${path}.${key}`, `unknown setting (aggregate takes: ${KEYS.join(', ')})`);
  }
  if (typeof r.sql !== 'string' || r.sql.trim() === '')
    fail(`${path}.sql`, 'must be a SELECT ... GROUP BY ..., TUMBLE(...) query');
  const lateness = r.allowedLatenessSeconds ?? 0;
  if (typeof lateness !== 'number' || !Number.isSafeInteger(lateness) || lateness < 0) {
    fail(`${path}.allowedLatenessSeconds`, 'must be a whole number of seconds, 0 or more');
  }
  const emit = parseEmit(r.emit, `${path}.emit`);
  if (r.partitions !== undefined && (!Number.isSafeInteger(r.partitions) || (r.partitions as number) < 1)) {
    fail(`${path}.partitions`, "must be the source topic's partition count (a positive whole number)");
  }
  const partitions = r.partitions as number | undefined;
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
