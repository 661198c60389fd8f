/**
 * No route setting of the wrong type is ever dropped or mangled: every setting the route schema has
 * (found by walking the schema, so a setting added later is covered too) is given random values of
 * another JSON type, and each time parseRoutes refuses the route with a RouteConfigError naming that
 * setting's path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RouteConfigError } from '../../../functions/core/errors.js';
import { RouteSettingsSchema } from '../../../functions/core/routing/route-schema.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';

type Json = Record<string, unknown>;
type Path = (string | number)[];

const SCHEMA = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'user_id', required: true, type: 'long' },
    { id: 2, name: 'status', required: false, type: 'string' },
    { id: 3, name: 'amount', required: true, type: 'decimal(10, 2)' },
    { id: 4, name: 'order_ts', required: true, type: 'timestamptz' },
  ],
};

/** A route with every record setting set (valid: the first test checks it). */
const RECORD_ROUTE = {
  table: 'sales.orders',
  topics: ['orders'],
  schema: SCHEMA,
  partitionBy: 'day(order_ts)',
  sortBy: 'user_id',
  mode: 'append',
  identifierColumns: ['user_id'],
  format: {
    value: 'confluent',
    key: 'string',
    registry: { url: 'http://registry:8081', timeoutMs: 1000, credentialsSecretArnEnv: 'SECRET_ARN' },
    glue: { registryName: 'r', region: 'eu-west-1' },
  },
  mapping: {
    value: 'fields',
    flatten: { separator: '_', maxDepth: 4 },
    exclude: ['debug'],
    key: { column: 'k', as: 'string', required: false },
    headers: [{ header: 'h', column: 'h', as: 'string', required: false }],
    timestamp: { column: 'kafka_ts' },
    columns: {
      amount: { from: 'amt', type: 'decimal(10, 2)', default: '0' },
      order_ts: { type: 'timestamptz', format: 'yyyy-MM-dd HH:mm:ss', zone: '+01:00' },
      day: { type: 'date', epoch: 'days' },
    },
  },
  when: { field: 'type', equals: 'order' },
  schemaEvolution: 'evolve',
  kafkaLineage: true,
  dlqTable: 'dead',
  targetFileSizeBytes: 1024,
  properties: { 'write.parquet.compression-codec': 'zstd' },
};

/** A route with every aggregate setting set. */
const AGGREGATE_ROUTE = {
  table: 'sales.paid_per_user',
  topics: ['orders'],
  schema: SCHEMA,
  aggregate: {
    sql: "SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id, TUMBLE(order_ts, INTERVAL '1' MINUTE)",
    allowedLatenessSeconds: 60,
    partitions: 3,
    emit: { topic: 'out', bootstrapServers: 'b-1:9092', auth: 'none', tls: false },
  },
};

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The JSON types a schema node takes (undefined: any). */
function typesOf(schema: Json): Set<string> | undefined {
  if (Array.isArray(schema.anyOf)) {
    const all = (schema.anyOf as Json[]).map(typesOf);
    return all.some((t) => t === undefined) ? undefined : new Set(all.flatMap((t) => [...t!]));
  }
  if (schema.const !== undefined) return new Set([jsonTypeOf(schema.const)]);
  if (schema.type === 'number') return new Set(['number', 'integer']);
  return typeof schema.type === 'string' ? new Set([schema.type]) : undefined;
}

interface Setting {
  path: Path;
  types: Set<string>;
}

/** Every setting of `schema` reachable in `value`: the node itself and what is inside it. */
function settingsOf(schema: Json, value: unknown, path: Path): Setting[] {
  const types = typesOf(schema);
  const own: Setting[] = path.length > 0 && types ? [{ path, types }] : [];
  if (Array.isArray(schema.anyOf)) {
    // Inside a union: the variant the value is written in (its keys are all that variant's).
    const variant = (schema.anyOf as Json[]).find(
      (v) =>
        v.type === jsonTypeOf(value) &&
        (v.properties === undefined || Object.keys(value as Json).every((k) => k in (v.properties as Json))),
    );
    return variant ? [...own, ...settingsOf(variant, value, path).filter((s) => s.path !== path)] : own;
  }
  if (schema.type === 'object' && value !== null && typeof value === 'object') {
    const properties = (schema.properties ?? {}) as Json;
    const record = Object.values((schema.patternProperties ?? {}) as Json)[0] as Json | undefined;
    const inner = Object.entries(properties).flatMap(([key, child]) =>
      settingsOf(child as Json, (value as Json)[key], [...path, key]),
    );
    const entries = record
      ? Object.entries(value as Json).flatMap(([key, v]) => settingsOf(record, v, [...path, key]))
      : [];
    return [...own, ...inner, ...entries];
  }
  if (schema.type === 'array' && Array.isArray(value) && value.length > 0) {
    return [...own, ...settingsOf(schema.items as Json, value[0], [...path, 0])];
  }
  return own;
}

function withValue(route: object, path: Path, value: unknown): object {
  const copy = structuredClone(route) as Json;
  let at: Json = copy;
  for (const key of path.slice(0, -1)) {
    at[key] ??= {};
    at = at[key] as Json;
  }
  at[path.at(-1)!] = value;
  return copy;
}

const userPath = (path: Path) => path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('');

const anyJson = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string(),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);

const SETTINGS = [
  ...settingsOf(RouteSettingsSchema as unknown as Json, RECORD_ROUTE, []).map((s) => ({
    ...s,
    route: RECORD_ROUTE,
  })),
  ...settingsOf(RouteSettingsSchema as unknown as Json, AGGREGATE_ROUTE, [])
    .filter((s) => s.path[0] === 'aggregate')
    .map((s) => ({ ...s, route: AGGREGATE_ROUTE })),
];

describe('wrong-typed route settings', () => {
  it('starts from routes floe takes, and reaches every kind of setting', () => {
    // Act
    const routes = parseRoutes([RECORD_ROUTE, AGGREGATE_ROUTE]);
    const paths = SETTINGS.map((s) => userPath(s.path));

    // Assess
    expect(routes).toHaveLength(2);
    expect(paths).toEqual(
      expect.arrayContaining([
        '.partitionBy',
        '.dlqTable',
        '.properties',
        '.properties.write.parquet.compression-codec',
        '.topics[0]',
        '.format.registry.timeoutMs',
        '.mapping.key.as',
        '.mapping.flatten.separator',
        '.mapping.headers[0].required',
        '.mapping.columns.day.epoch',
        '.aggregate.emit.tls',
        '.aggregate.partitions',
      ]),
    );
  });

  it('refuses each with its path, never dropping or mangling it', () => {
    for (const { route, path, types } of SETTINGS) {
      const wrong = anyJson.filter(
        (v) => !types.has(jsonTypeOf(v)) && !(types.has('number') && typeof v === 'number'),
      );
      fc.assert(
        fc.property(wrong, (value) => {
          // Act
          let error: unknown;
          try {
            parseRoutes([withValue(route, path, value)]);
          } catch (e) {
            error = e;
          }

          // Assess
          expect(error).toBeInstanceOf(RouteConfigError);
          expect((error as RouteConfigError).retryable).toBe(false);
          expect((error as Error).message).toContain(`routes[0]${userPath(path)}: `);
        }),
        { numRuns: 25 },
      );
    }
  });
});
