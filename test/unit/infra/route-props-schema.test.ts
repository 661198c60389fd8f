/**
 * The construct's route props and the one route schema agree: every prop (bar the construct's own,
 * `registryCredentials`, and `schemaPolicy`, rendered as `schemaEvolution`) is a setting of the schema
 * with a type the schema's static type takes, and the names of modes and policies are the same sets.
 * The type checks fail `npm run typecheck` (tsc covers test/); the rendered routes are checked at run
 * time too.
 */
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { type RouteSettings, RoutesSchema } from '../../../functions/core/routing/route-schema.js';
import type { AggregateRouteProps, IngestMode, SchemaPolicy, TableRoute } from '../../../infra/props.js';
import { checkRoutes, renderRoutes } from '../../../infra/table-routes.js';

type DeepMutable<T> = T extends readonly (infer U)[]
  ? DeepMutable<U>[]
  : T extends object
    ? { -readonly [K in keyof T]: DeepMutable<T[K]> }
    : T;

/** The props as the handlers' keys name them. */
type PropsAsSettings = DeepMutable<Omit<TableRoute, 'schemaPolicy' | 'registryCredentials'>> & {
  schemaEvolution?: SchemaPolicy;
};

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

// Every prop is a setting whose type the schema takes...
const propsFit: PropsAsSettings extends RouteSettings ? true : false = true;
// ...and the schema has no setting the props lack.
const sameKeys: Same<keyof PropsAsSettings, keyof RouteSettings> = true;
const sameModes: Same<IngestMode, NonNullable<RouteSettings['mode']>> = true;
const samePolicies: Same<SchemaPolicy, NonNullable<RouteSettings['schemaEvolution']>> = true;
const aggregateFits: DeepMutable<AggregateRouteProps> extends NonNullable<RouteSettings['aggregate']>
  ? true
  : false = true;

describe('construct route props and the route schema', () => {
  it('agree in their static types', () => {
    expect([propsFit, sameKeys, sameModes, samePolicies, aggregateFits]).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  it('render every prop into a route the schema takes', () => {
    // Prepare: a route with every prop the schema knows
    const route: TableRoute = {
      topics: ['orders'],
      table: 'sales.orders',
      schema: {
        type: 'struct',
        'schema-id': 0,
        fields: [{ id: 1, name: 'id', required: true, type: 'long' }],
      },
      partitionBy: 'bucket(4, id)',
      mode: 'upsert',
      identifierColumns: ['id'],
      targetFileSizeBytes: 1024,
      schemaPolicy: 'dlq',
      sortBy: 'id',
      format: { value: 'json', key: 'string' },
      mapping: { columns: { id: { type: 'long' } } },
      when: { field: 'type', equals: 'order' },
      properties: { 'write.parquet.compression-codec': 'zstd' },
      kafkaLineage: false,
      dlqTable: 'dead',
    };

    // Act
    const rendered = JSON.parse(JSON.stringify(renderRoutes([route])));

    // Assess
    expect([...Value.Errors(RoutesSchema, rendered)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
    expect(Object.keys(rendered[0]).sort()).toEqual(
      Object.keys(route)
        .map((k) => (k === 'schemaPolicy' ? 'schemaEvolution' : k))
        .sort(),
    );
  });

  it.each([
    [{ partitionBy: 5 }, 'routes[0].partitionBy: expected a non-empty string, got 5'],
    [{ topics: 'orders' }, 'routes[0].topics: expected a non-empty array, each a topic name, got "orders"'],
    [
      { properties: 'abc' },
      'routes[0].properties: expected an object whose values are each a string, got "abc"',
    ],
    [{ identifierColumns: 'id', mode: 'upsert' }, 'routes[0].identifierColumns: expected an array'],
    [{ dlqTable: ['x'] }, 'routes[0].dlqTable: expected a non-empty string, got ["x"]'],
  ])(
    "fails synth for %j, as untyped JavaScript could pass it, with the schema's message",
    (props, message) => {
      // Prepare
      const route = { topics: ['orders'], table: 'sales.orders', ...props } as unknown as TableRoute;

      // Act / Assess
      expect(() => checkRoutes([route])).toThrow(message);
    },
  );
});
