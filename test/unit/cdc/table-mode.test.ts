import { describe, expect, it } from 'vitest';
import {
  IDENTIFIER_PROPERTY,
  MODE_PROPERTY,
  resolveCdcSettings,
  resolveMode,
  SOURCE_COLUMN_PROPERTY,
} from '../../../functions/core/routing/table-mode.js';
import { ValidationError } from '../../../functions/core/errors.js';
import { creationRequest } from '../../../functions/core/ingest/load-or-create-table.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import type { Schema } from '../../../functions/core/spec/types.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'score', required: true, type: 'double' },
    { id: 3, name: 'note', required: false, type: 'string' },
    {
      id: 4,
      name: 'pk',
      required: true,
      type: { type: 'struct', fields: [{ id: 5, name: 'tenant', required: true, type: 'string' }] },
    },
  ],
};

function route(extra: Partial<TableRoute> = {}): TableRoute {
  return {
    table: { namespace: ['db'], name: 't' },
    topics: ['t'],
    schema: SCHEMA,
    kafkaLineage: false,
    properties: {},
    ...extra,
  };
}

describe('table mode and key', () => {
  it('stores the mode and key with a table floe creates', () => {
    // Act
    const { schema, properties } = creationRequest(
      route({ mode: 'upsert', identifierColumns: ['pk.tenant', 'id'], kafkaLineage: true }),
    );

    // Assess
    expect(schema['identifier-field-ids']).toEqual([5, 1]);
    expect(schema.fields.map((f) => f.name)).toEqual(['id', 'score', 'note', 'pk', '_kafka']);
    expect(properties).toEqual({ [MODE_PROPERTY]: 'upsert', [IDENTIFIER_PROPERTY]: 'pk.tenant,id' });
  });

  it('appends a source column when the route asks for one the schema lacks', () => {
    const { schema } = creationRequest(
      route({
        mode: 'debezium',
        identifierColumns: ['id'],
        properties: { [SOURCE_COLUMN_PROPERTY]: '_source' },
      }),
    );
    const source = schema.fields.find((f) => f.name === '_source')!;
    expect(source.id).toBe(6);
    expect(source.type).toMatchObject({ type: 'struct' });
  });

  it('refuses keys Iceberg refuses, and CDC modes without a key', () => {
    const create = (extra: Partial<TableRoute>) => () => creationRequest(route(extra));
    expect(create({ mode: 'upsert', identifierColumns: ['note'] })).toThrow(
      /'note' \(id 3\) must be required/,
    );
    expect(create({ mode: 'upsert', identifierColumns: ['score'] })).toThrow(/must not be a float or double/);
    expect(create({ mode: 'debezium', identifierColumns: ['nope'] })).toThrow(
      /column 'nope' is not in the schema/,
    );
    expect(create({ mode: 'debezium' })).toThrow(/mode 'debezium' needs identifier columns/);
    expect(create({ mode: 'debezium' })).toThrow(ValidationError);
  });

  it('reads the mode from the table when the route does not say, and refuses a conflicting one', () => {
    expect(resolveMode(route(), { [MODE_PROPERTY]: 'debezium' })).toBe('debezium');
    expect(resolveMode(route({ mode: 'upsert' }), {})).toBe('upsert');
    expect(resolveMode(route(), {})).toBe('append');
    expect(() => resolveMode(route({ mode: 'append' }), { [MODE_PROPERTY]: 'upsert' })).toThrow(
      /route mode 'append' conflicts with the table's floe.mode='upsert'/,
    );
    expect(() => resolveMode(route(), { [MODE_PROPERTY]: 'merge' })).toThrow(ValidationError);
  });

  it("takes the key from the schema's identifier fields, else the route, else the property", () => {
    const keyed: Schema = { ...SCHEMA, 'identifier-field-ids': [1] };
    expect(resolveCdcSettings('upsert', keyed, route(), {}).key).toEqual([
      { id: 1, name: 'id', path: ['id'], type: 'long' },
    ]);
    expect(resolveCdcSettings('upsert', SCHEMA, route({ identifierColumns: ['pk.tenant'] }), {}).key).toEqual(
      [{ id: 5, name: 'pk.tenant', path: ['pk', 'tenant'], type: 'string' }],
    );
    expect(resolveCdcSettings('upsert', SCHEMA, route(), { [IDENTIFIER_PROPERTY]: 'id' }).key[0].id).toBe(1);
    expect(() =>
      resolveCdcSettings('upsert', keyed, route({ identifierColumns: ['pk.tenant'] }), {}),
    ).toThrow(/differ from the table's identifier fields/);
    expect(() => resolveCdcSettings('upsert', SCHEMA, route(), {})).toThrow(/needs identifier columns/);
    expect(() =>
      resolveCdcSettings('debezium', keyed, route(), { [SOURCE_COLUMN_PROPERTY]: 'note' }),
    ).toThrow(/must name a top-level struct column/);
  });
});
