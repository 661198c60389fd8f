/**
 * routes.schema.json is generated from the route schema (`npm run schema`) and checked in, so editors
 * and the package have it: it must be what the schema says today, and a JSON Schema validator no one
 * here wrote (Ajv) must read it and agree with floe's own check.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parseRoutes } from '../../../functions/core/routing/routes.js';
import {
  ROUTES_SCHEMA_FILE,
  routesJsonSchemaText,
} from '../../../functions/core/routing/routes-json-schema.js';

const CHECKED_IN = path.resolve(import.meta.dirname, '../../../functions/core/routing', ROUTES_SCHEMA_FILE);
const checkedIn = () => JSON.parse(readFileSync(CHECKED_IN, 'utf8'));

const ORDERS = { table: 'sales.orders', topics: ['orders'] };

describe('routes.schema.json', () => {
  it('is up to date with the route schema (else run `npm run schema`)', () => {
    // Act
    const generated = JSON.parse(routesJsonSchemaText());

    // Assess
    expect(checkedIn()).toEqual(generated);
  });

  it('is ready for editors: a draft-07 schema whose routes are completable objects', () => {
    // Act
    const schema = checkedIn();

    // Assess
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(Object.keys(schema.definitions.route.properties)).toEqual(
      expect.arrayContaining(['table', 'topics', 'partitionBy', 'mapping', 'format', 'aggregate', 'when']),
    );
    expect(JSON.stringify(schema)).not.toContain('"expected"');
  });

  it.each([
    ['a plain list', [{ ...ORDERS, partitionBy: 'day(order_ts)' }], true],
    ['a document naming its schema', { $schema: './routes.schema.json', routes: [ORDERS] }, true],
    ['a wrong-typed setting', [{ ...ORDERS, partitionBy: 5 }], false],
    ['an unknown setting', [{ ...ORDERS, partitonBy: 'day(order_ts)' }], false],
    ['a nested unknown setting', [{ ...ORDERS, mapping: { columns: { a: { fromm: 'b' } } } }], false],
    ['a bad enum', [{ ...ORDERS, format: { value: 'avro' } }], false],
    ['properties that are not text', [{ ...ORDERS, properties: 'abc' }], false],
    ['a document without routes', { $schema: './routes.schema.json' }, false],
  ])('Ajv and parseRoutes agree on %s', (_name, routes, valid) => {
    // Prepare
    const validate = new Ajv({ strict: true, allErrors: true }).compile(checkedIn());

    // Act
    const ajvSays = validate(routes);
    let floeSays = true;
    try {
      parseRoutes(routes);
    } catch {
      floeSays = false;
    }

    // Assess
    expect(ajvSays).toBe(valid);
    expect(floeSays).toBe(valid);
  });
});
