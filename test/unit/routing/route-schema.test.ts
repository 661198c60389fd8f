/**
 * What a user sees for a route that cannot work: each problem with its path, what was expected and
 * what came; every problem at once; a "did you mean" for a near name; the checks no schema can say
 * (a `when`, SQL, a type name) after the schema, with their paths too.
 */
import { describe, expect, it } from 'vitest';
import { RouteConfigError, ValidationError } from '../../../functions/core/errors.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';

const ORDERS = { table: 'sales.orders', topics: ['orders'] };

function messageOf(json: unknown): string {
  try {
    parseRoutes(json);
  } catch (error) {
    expect(error).toBeInstanceOf(RouteConfigError);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as RouteConfigError).retryable).toBe(false);
    return (error as Error).message;
  }
  throw new Error('parseRoutes took the routes');
}

describe('route errors', () => {
  it.each([
    [{ partitionBy: 5 }, 'routes[0].partitionBy: expected a non-empty string, got 5'],
    [{ dlqTable: ['x'] }, 'routes[0].dlqTable: expected a non-empty string, got ["x"]'],
    [
      { properties: 'abc' },
      'routes[0].properties: expected an object whose values are each a string, got "abc"',
    ],
    [
      { properties: null },
      'routes[0].properties: expected an object whose values are each a string, got null',
    ],
    [{ properties: { 'write.x': 5 } }, 'routes[0].properties.write.x: expected a string, got 5'],
    [{ kafkaLineage: 'no' }, 'routes[0].kafkaLineage: expected true or false, got "no"'],
    [{ targetFileSizeBytes: 0 }, 'routes[0].targetFileSizeBytes: expected a positive integer, got 0'],
    [{ topics: [] }, 'routes[0].topics: expected a non-empty array, each a topic name, got []'],
    [{ mode: 'merge' }, 'routes[0].mode: expected one of append, debezium, upsert, got "merge"'],
    [{ when: 'type = order' }, 'routes[0].when: expected a condition'],
    [
      { mapping: { timestamp: 5 } },
      'routes[0].mapping.timestamp: expected a column name or an object { column }, got 5',
    ],
  ])('%j: %s', (settings, message) => {
    expect(messageOf([{ ...ORDERS, ...settings }])).toContain(message);
  });

  it('names a missing setting', () => {
    expect(messageOf([{ topics: ['orders'] }])).toBe('routes[0].table: missing; expected "namespace.table"');
  });

  it('lists every problem of every route at once', () => {
    // Act
    const message = messageOf([
      { ...ORDERS, partitionBy: 5, dlqTable: ['x'] },
      { table: 'sales.refunds', topics: 'refunds', format: { value: 'avro' } },
    ]);

    // Assess
    expect(message).toBe(
      [
        '4 problems:',
        '  routes[0].partitionBy: expected a non-empty string, got 5',
        '  routes[0].dlqTable: expected a non-empty string, got ["x"]',
        '  routes[1].topics: expected a non-empty array, each a topic name, got "refunds"',
        '  routes[1].format.value: expected one of json, string, confluent, glue, auto, got "avro"',
      ].join('\n'),
    );
  });

  it.each([
    ['partitonBy', 'partitionBy'],
    ['sortby', 'sortBy'],
    ['identifierColumn', 'identifierColumns'],
    ['schemaPolicy', undefined],
  ])('refuses the unknown key %s (did you mean %s?)', (key, near) => {
    // Act
    const message = messageOf([{ ...ORDERS, [key]: 'x' }]);

    // Assess
    expect(message).toContain(`routes[0].${key}: unknown setting`);
    if (near) expect(message).toContain(`(did you mean '${near}'?)`);
    else expect(message).not.toContain('did you mean');
  });

  it('takes a document naming its schema for editors, and names paths within it', () => {
    // Act
    const routes = parseRoutes({ $schema: './routes.schema.json', routes: [ORDERS] });
    const message = messageOf({ $schema: './routes.schema.json', routes: [{ ...ORDERS, sortBy: 1 }] });

    // Assess
    expect(routes.map((r) => r.table.name)).toEqual(['orders']);
    expect(message).toBe('routes[0].sortBy: expected a non-empty string, got 1');
    expect(messageOf({ routes: [ORDERS], route: [] })).toContain(
      "route: unknown setting (did you mean 'routes'?)",
    );
    expect(messageOf('[]')).toContain(
      'routes: expected a JSON array of routes (or an object { "$schema", "routes": [...] }), got "[]"',
    );
  });

  it("lists one route's schema problems and another's that only reading it finds", () => {
    // Act
    const message = messageOf([
      { ...ORDERS, partitionBy: 5 },
      { ...ORDERS, when: { field: 'type', equal: 'order' } },
    ]);

    // Assess
    expect(message).toBe(
      [
        '2 problems:',
        '  routes[0].partitionBy: expected a non-empty string, got 5',
        '  routes[1].when: needs exactly one of "equals", "in", "exists"',
      ].join('\n'),
    );
  });

  it('checks what no schema can say after it, naming the path, for every route', () => {
    // Act
    const message = messageOf([
      { ...ORDERS, when: { field: 'type', equal: 'order' } },
      { ...ORDERS, table: 'orders' },
      { ...ORDERS, mapping: { columns: { x: { type: 'strin' } } } },
    ]);

    // Assess
    expect(message).toContain('3 problems:');
    expect(message).toContain('routes[0].when: needs exactly one of "equals", "in", "exists"');
    expect(message).toContain("routes[1].table: table identifier 'orders' must look like NAMESPACE.TABLE");
    expect(message).toContain("routes[2].mapping.columns.x.type: unknown type 'strin'");
  });

  it('never repeats a credential it refuses', () => {
    // Act
    const message = messageOf([
      {
        ...ORDERS,
        format: { value: 'confluent', registry: { url: 'http://r', bearerToken: ['tok-4f9a2c'] } },
      },
    ]);

    // Assess
    expect(message).toBe(
      'routes[0].format.registry.bearerToken: expected a non-empty string, got a value of type array',
    );
    expect(message).not.toContain('tok-4f9a2c');
  });

  it('reads what it accepts unchanged: text properties, the target file size beside them', () => {
    // Act
    const [route] = parseRoutes([{ ...ORDERS, targetFileSizeBytes: 1024, properties: { 'write.x': 'y' } }]);

    // Assess
    expect(route.properties).toEqual({ 'write.x': 'y', 'write.target-file-size-bytes': '1024' });
  });
});

describe('dead-letter tables', () => {
  it('refuses one dead-letter table for two tables, naming both routes', () => {
    // Prepare
    const routes = [
      { ...ORDERS, table: 'sales.orders_eu', dlqTable: 'sales.errors' },
      { ...ORDERS, table: 'sales.orders_rest', dlqTable: 'sales.errors' },
    ];

    // Act
    const message = messageOf(routes);

    // Assess
    expect(message).toContain(
      'routes[1].dlqTable: sales.errors is already the dead-letter table of routes[0] (sales.orders_eu)',
    );
  });

  it("refuses a dlqTable that is another table's default dead-letter table, or a route's table", () => {
    // Prepare
    const routes = [
      { ...ORDERS, table: 'sales.orders' },
      { ...ORDERS, table: 'sales.returns', dlqTable: 'sales.orders__dlq' },
      { ...ORDERS, table: 'sales.refunds', dlqTable: 'sales.orders' },
    ];

    // Act
    const message = messageOf(routes);

    // Assess
    expect(message).toContain(
      'routes[1].dlqTable: sales.orders__dlq is already the dead-letter table of routes[0]',
    );
    expect(message).toContain("routes[2].dlqTable: sales.orders is a route's table, not a dead-letter table");
  });

  it('takes a dead-letter table per table, named or by default', () => {
    // Prepare
    const routes = [
      { ...ORDERS, table: 'sales.orders_eu', dlqTable: 'sales.errors_eu' },
      { ...ORDERS, table: 'sales.orders_rest' },
    ];

    // Act
    const parsed = parseRoutes(routes);

    // Assess
    expect(parsed.map((r) => r.dlqTable)).toEqual(['sales.errors_eu', undefined]);
  });
});
