import { describe, expect, it } from 'vitest';
import { RecordDecodeError, ValidationError } from '../../../functions/core/errors.js';
import { JsonNumberText } from '../../../functions/core/records/json-to-value.js';
import { withKafkaLineage } from '../../../functions/core/records/kafka-lineage.js';
import { parseMappingConfig } from '../../../functions/core/mapping/mapping-config.js';
import { compileMapping } from '../../../functions/core/mapping/record-mapper.js';
import { parseIsoTimestamp } from '../../../functions/core/records/parse-temporal.js';
import type { Schema } from '../../../functions/core/spec/types.js';
import { bytes, decoded, header } from './support.js';

const ORDERS: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'order_id', required: true, type: 'long' },
    { id: 2, name: 'order_ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'amount', required: false, type: 'decimal(12, 2)' },
    { id: 4, name: 'city', required: false, type: 'string' },
    {
      id: 5,
      name: 'shipping',
      required: false,
      type: { type: 'struct', fields: [{ id: 6, name: 'zip', required: false, type: 'int' }] },
    },
    {
      id: 7,
      name: 'lines',
      required: false,
      type: {
        type: 'list',
        'element-id': 8,
        'element-required': true,
        element: {
          type: 'struct',
          fields: [{ id: 9, name: 'price', required: true, type: 'decimal(10, 2)' }],
        },
      },
    },
    { id: 10, name: 'status', required: true, type: 'string' },
  ],
};

const ts = (iso: string) => parseIsoTimestamp(iso);

describe('compileMapping → map', () => {
  it('renames, coerces with a format, keeps decimals exact, applies defaults and nested rules', () => {
    const mapper = compileMapping(
      parseMappingConfig({
        columns: {
          order_ts: { from: 'created', type: 'timestamptz', format: 'dd/MM/yyyy HH:mm:ss', zone: '+01:00' },
          city: { from: 'shipping.city' },
          'shipping.zip': { type: 'int' },
          'lines.price': { type: 'decimal(10, 2)' },
          status: { default: 'NEW' },
        },
      }),
      ORDERS,
    );
    const value = {
      order_id: new JsonNumberText('9007199254740993'),
      created: '20/11/2026 11:00:00',
      amount: '1234567890.10',
      shipping: { city: 'Berlin', zip: '10115' },
      lines: [{ price: 0.1 }, { price: '19.90' }],
    };
    const row = mapper.map(decoded(value));
    expect(row).toEqual({
      order_id: 9007199254740993n,
      order_ts: ts('2026-11-20T10:00:00Z'),
      amount: 123456789010n,
      city: 'Berlin',
      shipping: { zip: 10115 },
      lines: [{ price: 10n }, { price: 1990n }],
      status: 'NEW',
    });
    // The decoded value is left as it was (routing and dead letters still need it).
    expect(value.shipping).toEqual({ city: 'Berlin', zip: '10115' });
    expect(value.created).toBe('20/11/2026 11:00:00');
  });

  it('takes the key, chosen headers and the record timestamp as columns', () => {
    const schema: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'order_id', required: true, type: 'long' },
        { id: 2, name: 'k', required: false, type: 'long' },
        { id: 3, name: 'entity', required: false, type: 'string' },
        { id: 4, name: 'trace', required: false, type: 'binary' },
        { id: 5, name: 'kafka_ts', required: false, type: 'timestamptz' },
      ],
    };
    const mapper = compileMapping(
      parseMappingConfig({
        key: { column: 'k', as: 'long' },
        headers: [{ header: 'entity' }, { header: 'trace', as: 'binary' }],
        timestamp: 'kafka_ts',
      }),
      schema,
    );
    const row = mapper.map(
      decoded(
        { order_id: 1 },
        {
          key: bytes('12345678901234567'),
          headers: [
            header('entity', 'order'),
            header('trace', Uint8Array.of(0, 255)),
            header('entity', 'refund'),
          ],
        },
      ),
    );
    expect(row).toEqual({
      order_id: 1n,
      k: 12345678901234567n,
      entity: 'refund', // the last of repeated headers, as Kafka's lastHeader()
      trace: Uint8Array.of(0, 255),
      kafka_ts: 1_795_168_800_123_000n,
    });
    expect(mapper.typeHints).toEqual(
      new Map([
        ['k', 'long'],
        ['entity', 'string'],
        ['trace', 'binary'],
        ['kafka_ts', 'timestamptz'],
      ]),
    );
  });

  it('spreads a JSON-object key into columns; the same value in key and value is no conflict', () => {
    const schema: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'order_id', required: true, type: 'long' },
        { id: 2, name: 'region', required: false, type: 'string' },
      ],
    };
    const mapper = compileMapping(parseMappingConfig({ key: { fields: true } }), schema);
    expect(mapper.map(decoded({ order_id: 7 }, { key: bytes('{"order_id":7,"region":"eu"}') }))).toEqual({
      order_id: 7n,
      region: 'eu',
    });
    expect(() => mapper.map(decoded({ order_id: 8 }, { key: bytes('{"order_id":7}') }))).toThrow(
      "key field 'order_id' is number 7 but the value's 'order_id' is number 8",
    );
    expect(() => mapper.map(decoded({ order_id: 8 }, { key: bytes('"x"') }))).toThrow(
      'key: expected a JSON object',
    );
  });

  it('flattens nested objects with a separator, lists stay lists', () => {
    const schema: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'shipping_city', required: false, type: 'string' },
        { id: 2, name: 'shipping_geo_lat', required: false, type: 'double' },
        {
          id: 3,
          name: 'tags',
          required: false,
          type: { type: 'list', 'element-id': 4, 'element-required': false, element: 'string' },
        },
      ],
    };
    const mapper = compileMapping(parseMappingConfig({ flatten: true, exclude: ['debug'] }), schema);
    const projected = mapper.project(
      decoded({ shipping: { city: 'Paris', geo: { lat: 48.8 } }, tags: ['a'], debug: { x: 1 } }),
    );
    expect(projected).toEqual({ shipping_city: 'Paris', shipping_geo_lat: 48.8, tags: ['a'] });
    expect(mapper.toRow(projected, decoded({}).record)).toEqual({
      shipping_city: 'Paris',
      shipping_geo_lat: 48.8,
      tags: ['a'],
    });
    expect(() => mapper.project(decoded({ shipping: { city: 'x' }, shipping_city: 'y' }))).toThrow(
      "flattening gives column 'shipping_city' twice (from 'shipping.city' and 'shipping_city')",
    );
  });

  it('maps a whole non-object value into one column', () => {
    const schema: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [{ id: 1, name: 'payload', required: false, type: 'string' }],
    };
    const mapper = compileMapping(parseMappingConfig({ value: { column: 'payload' } }), schema);
    expect(mapper.map(decoded('plain text'))).toEqual({ payload: 'plain text' });
    expect(mapper.map(decoded(null))).toEqual({ payload: null });
  });

  it('adds the _kafka lineage struct when the schema has it, and refuses a value field of that name', () => {
    const schema = withKafkaLineage({
      type: 'struct',
      'schema-id': 0,
      fields: [{ id: 1, name: 'id', required: true, type: 'long' }],
    });
    const mapper = compileMapping(parseMappingConfig({}), schema);
    const d = decoded({ id: 1 }, { offset: 42n, key: bytes('k'), headers: [header('h', 'v')] });
    expect(mapper.map(d)).toEqual({
      id: 1n,
      _kafka: {
        topic: 'orders',
        partition: 0,
        offset: 42n,
        timestamp: 1_795_168_800_123_000n,
        timestamp_type: 'CREATE_TIME',
        key: bytes('k'),
        headers: [{ key: 'h', value: bytes('v') }],
      },
    });
    expect(() => mapper.map(decoded({ id: 1, _kafka: {} }))).toThrow("the value has a field '_kafka'");
  });

  it.each([
    [{}, null, 'value is null (a tombstone)'],
    [{}, [1, 2], 'value is not an object (an array)'],
    [{}, 'text', 'value is not an object (the string "text")'],
    [{}, { order_id: 'x', status: 's' }, 'order_id: expected an integer'],
    [{}, { order_id: 1 }, 'status: is required but missing or null'],
    [
      {},
      { order_id: 1, status: 's', lines: [{ price: '1.234' }] },
      'lines[0].price: 1.234 has more than 2 decimal places',
    ],
    [{}, { order_id: 1, status: 's', lines: [null] }, 'lines[0]: element is required but null'],
    [{}, { order_id: 1, status: 's', shipping: 'x' }, 'shipping: expected an object'],
    [
      { columns: { city: { from: 'shipping.city' } } },
      { order_id: 1, status: 's', city: 'a', shipping: { city: 'b' } },
      "'city' is both a field of the value and the target of a rename",
    ],
    [
      { key: { column: 'k', required: true } },
      { order_id: 1, status: 's' },
      'key is null, but the mapping requires a key',
    ],
    [
      { headers: [{ header: 'e', required: true }] },
      { order_id: 1, status: 's' },
      "header 'e' is missing, but the mapping requires it",
    ],
    [
      { columns: { order_ts: { type: 'timestamptz', format: 'dd/MM/yyyy' } } },
      { order_id: 1, status: 's', order_ts: '2026-11-20' },
      "order_ts: '2026-11-20' does not match the format 'dd/MM/yyyy'",
    ],
  ])('mapping %j refuses %j: %s', (config, value, message) => {
    const mapper = compileMapping(parseMappingConfig(config), ORDERS);
    expect(() => mapper.map(decoded(value))).toThrow(RecordDecodeError);
    expect(() => mapper.map(decoded(value))).toThrow(message);
  });

  it('refuses a key or header that is not valid UTF-8 when read as text', () => {
    const schema: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [{ id: 1, name: 'k', required: false, type: 'string' }],
    };
    const mapper = compileMapping(
      parseMappingConfig({ key: { column: 'k' }, headers: [{ header: 'h' }] }),
      schema,
    );
    expect(() => mapper.map(decoded({}, { key: Uint8Array.of(0xff) }))).toThrow('key is not valid UTF-8');
    expect(() => mapper.map(decoded({}, { headers: [header('h', Uint8Array.of(0xc3))] }))).toThrow(
      "header 'h' is not valid UTF-8",
    );
  });

  it.each([
    [
      { columns: { city: { type: 'long' } } },
      "mapping.columns.city.type: the mapping makes 'city' a long, but the table column is string",
    ],
    [
      { columns: { shipping: { type: 'string' } } },
      "mapping.columns.shipping.type: column 'shipping' is a struct",
    ],
    [{ columns: { amount: { type: 'decimal(12, 3)' } } }, 'not a compatible change'],
    [{ timestamp: 'city' }, "mapping.timestamp: the mapping makes 'city' a timestamptz"],
    [{ columns: { status: { default: 5 } } }, 'mapping.columns.status.default: status: expected a string'],
    [
      { columns: { order_ts: { type: 'timestamptz', format: 'dd/MM/yyyy', default: 'soon' } } },
      'mapping.columns.order_ts.default',
    ],
  ])('refuses %j against the table at start-up', (config, message) => {
    expect(() => compileMapping(parseMappingConfig(config), ORDERS)).toThrow(ValidationError);
    expect(() => compileMapping(parseMappingConfig(config), ORDERS)).toThrow(message);
  });

  it('names errors after the route the mapping belongs to', () => {
    expect(() =>
      compileMapping(
        parseMappingConfig({ columns: { city: { type: 'long' } } }, 'routes[2].mapping'),
        ORDERS,
        'routes[2].mapping',
      ),
    ).toThrow("routes[2].mapping.columns.city.type: the mapping makes 'city' a long");
    expect(() => parseMappingConfig({ key: 1 }, 'routes[2].mapping')).toThrow(
      'routes[2].mapping.key: expected an object { column, as, required } or an object { fields, prefix, required }, got 1',
    );
  });

  it('accepts type rules the column can be promoted to, or that widen into the column', () => {
    expect(() =>
      compileMapping(parseMappingConfig({ columns: { 'shipping.zip': { type: 'long' } } }), ORDERS),
    ).not.toThrow();
    expect(() =>
      compileMapping(parseMappingConfig({ columns: { amount: { type: 'decimal(10, 2)' } } }), ORDERS),
    ).not.toThrow();
    const mapper = compileMapping(
      parseMappingConfig({ columns: { amount: { type: 'decimal(10, 2)' } } }),
      ORDERS,
    );
    expect(mapper.map(decoded({ order_id: 1, status: 's', amount: '12345678.91' })).amount).toBe(1234567891n);
    expect(() => mapper.map(decoded({ order_id: 1, status: 's', amount: '123456789.91' }))).toThrow(
      'does not fit decimal(10, 2)',
    );
  });
});
