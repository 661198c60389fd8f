/** FLOE_TABLES routes: every key a route may have is read; any other is refused, never ignored. */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';

const base = { table: 'sales.orders', topics: ['orders'] };

describe('parseRoutes', () => {
  it('reads every setting of a route', () => {
    // Act
    const [route] = parseRoutes([
      {
        ...base,
        partitionBy: 'day(order_ts)',
        sortBy: 'order_id',
        schemaEvolution: 'dlq',
        kafkaLineage: false,
        dlqTable: 'dead',
        targetFileSizeBytes: 1024,
        properties: { 'write.parquet.compression-codec': 'snappy' },
        when: { field: 'type', equals: 'order' },
        mapping: { exclude: ['debug'] },
        format: { value: 'json' },
      },
    ]);

    // Assess
    expect(route).toMatchObject({
      partitionBy: 'day(order_ts)',
      sortBy: 'order_id',
      schemaEvolution: 'dlq',
      kafkaLineage: false,
      dlqTable: 'dead',
      properties: { 'write.parquet.compression-codec': 'snappy', 'write.target-file-size-bytes': '1024' },
      when: { field: 'type', equals: 'order' },
    });
    expect(route.mapping?.exclude).toEqual(['debug']);
  });

  it.each([
    [{ ...base, schemaPolicy: 'dlq' }, 'routes[0].schemaPolicy: unknown setting; allowed: table, topics,'],
    [
      { ...base, partitonBy: 'day(ts)' },
      "routes[0].partitonBy: unknown setting (did you mean 'partitionBy'?)",
    ],
    [
      { ...base, identifierColumn: ['id'] },
      "routes[0].identifierColumn: unknown setting (did you mean 'identifierColumns'?)",
    ],
  ])('refuses a key it does not know: %j', (route, message) => {
    expect(() => parseRoutes([route])).toThrow(ValidationError);
    expect(() => parseRoutes([route])).toThrow(message);
  });

  it('refuses a route that is not an object', () => {
    expect(() => parseRoutes([['sales.orders']])).toThrow(
      'routes[0]: expected a route (an object { "table", "topics", ... }), got ["sales.orders"]',
    );
    expect(() => parseRoutes([null])).toThrow(
      'routes[0]: expected a route (an object { "table", "topics", ... }), got null',
    );
  });
});
