import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RecordDecodeError } from '../../../functions/core/errors.js';
import {
  createPayloadDecoder,
  type PayloadDecoder,
} from '../../../functions/core/formats/payload-decoder.js';
import { mapEntryName } from '../../../functions/core/formats/protobuf-schema.js';
import { JsonNumberText, jsonToRow } from '../../../functions/core/records/json-to-value.js';
import type { StructType } from '../../../functions/core/spec/types.js';
import {
  type SchemaRegistryServer,
  startSchemaRegistryServer,
} from '../../support/schema-registry-server.js';
import { confluentFrame, rawRecord, valueContext } from './helpers.js';
import { encode, MONEY_PROTO, ORDER_PROTO, producerRoot } from './protobuf-fixtures.js';

const ORDER = {
  id: '9007199254740993',
  big: '18446744073709551615',
  neg: '-9223372036854775808',
  f64: '12345678901234567',
  sf64: '-2',
  qty: 3,
  u32: 4_294_967_295,
  paid: true,
  name: 'Ada',
  blob: Buffer.from([0, 1, 255]),
  score: 1.5,
  weight: 0.1,
  status: 'PAID',
  lines: [{ sku: 'a', qty: 1, tags: [{ t: 'x' }] }, { sku: 'b' }],
  attrs: { k: '9007199254740993' },
  by_id: { '9007199254740995': 'far', '-1': 'minus one' },
  flags: { true: 1 },
  note: 'fragile',
  account: '-9007199254740993',
  created: { seconds: '1709294400', nanos: 123_456_000 },
  maybe: { value: '5' },
  extra: {
    fields: {
      // protobufjs's built-in google.protobuf.Value names its fields in camelCase
      n: { numberValue: 2.5 },
      s: { stringValue: 'x' },
      l: { listValue: { values: [{ boolValue: true }, { nullValue: 0 }] } },
      o: { structValue: { fields: { deep: { stringValue: 'y' } } } },
    },
  },
  amount: { value: Buffer.from([0xfe, 0x79, 0x60]), precision: 12, scale: 2 },
  price: { currency: 'EUR', units: '12' },
  ids: ['1', '9223372036854775807'],
  parent: { id: '1', name: 'root' },
  ratio: Number.POSITIVE_INFINITY,
};

describe('Confluent Protobuf', () => {
  let registry: SchemaRegistryServer;
  let decoder: PayloadDecoder;
  let orderId: number;
  const root = producerRoot(MONEY_PROTO, ORDER_PROTO);

  beforeEach(async () => {
    registry = await startSchemaRegistryServer();
    registry.register({ schema: MONEY_PROTO, schemaType: 'PROTOBUF', subject: 'money' });
    orderId = registry.register({
      schema: ORDER_PROTO,
      schemaType: 'PROTOBUF',
      references: [{ name: 'acme/common/money.proto', subject: 'money', version: 1 }],
    });
    decoder = createPayloadDecoder({ value: 'confluent', registry: { url: registry.url, timeoutMs: 2000 } });
  });
  afterEach(async () => {
    await registry.close();
  });

  it('decodes the message named by the indexes, with exact 64-bit values and well-known types', async () => {
    // Prepare: Order is the second message of the file → indexes [1]
    const bytes = confluentFrame(orderId, encode(root, 'acme.orders.Order', ORDER), [1]);
    // Act
    const decoded = await decoder.decode(bytes, valueContext(rawRecord(bytes)));
    // Assess
    expect(decoded.format).toBe('protobuf');
    expect(decoded.schemaId).toBe(orderId);
    expect(decoded.writerSchema).toMatchObject({
      type: 'PROTOBUF',
      schema: ORDER_PROTO,
      messageName: 'acme.orders.Order',
    });
    expect(decoded.value).toStrictEqual({
      id: new JsonNumberText('9007199254740993'),
      big: new JsonNumberText('18446744073709551615'),
      neg: new JsonNumberText('-9223372036854775808'),
      f64: new JsonNumberText('12345678901234567'),
      sf64: -2,
      qty: 3,
      u32: 4_294_967_295,
      paid: true,
      name: 'Ada',
      blob: 'AAH/',
      score: 1.5,
      weight: 0.1,
      status: 'PAID',
      lines: [
        { sku: 'a', qty: 1, tags: [{ t: 'x' }] },
        { sku: 'b', qty: 0, tags: [] },
      ],
      attrs: { k: new JsonNumberText('9007199254740993') },
      by_id: expect.arrayContaining([
        { key: new JsonNumberText('9007199254740995'), value: 'far' },
        { key: -1, value: 'minus one' },
      ]),
      flags: [{ key: true, value: 1 }],
      note: 'fragile',
      card: null,
      account: new JsonNumberText('-9007199254740993'),
      created: '2024-03-01T12:00:00.123456Z',
      maybe: 5,
      missing_wrapper: null,
      extra: { n: 2.5, s: 'x', l: [true, null], o: { deep: 'y' } },
      amount: new JsonNumberText('-1000.00'),
      price: { currency: 'EUR', units: 12 },
      first: null,
      ids: [1, new JsonNumberText('9223372036854775807')],
      parent: expect.objectContaining({
        id: 1,
        name: 'root',
        parent: null,
        lines: [],
        note: null,
        created: null,
      }),
      ratio: 'Infinity',
    });
    expect((decoded.value as { by_id: unknown[] }).by_id).toHaveLength(2);
  });

  it('fills proto3 defaults for absent scalars and null for absent messages and optionals', async () => {
    const bytes = confluentFrame(orderId, encode(root, 'acme.orders.Order', {}), [1]);
    const { value } = await decoder.decode(bytes, valueContext(rawRecord(bytes)));
    expect(value).toMatchObject({
      id: 0,
      big: 0,
      name: '',
      blob: '',
      paid: false,
      status: 'NEW',
      lines: [],
      attrs: {},
      by_id: [],
      note: null,
      card: null,
      account: null,
      created: null,
      amount: null,
    });
  });

  it('emits values the mapper turns into exact Iceberg values', async () => {
    const bytes = confluentFrame(orderId, encode(root, 'acme.orders.Order', ORDER), [1]);
    const { value } = await decoder.decode(bytes, valueContext(rawRecord(bytes)));
    const table: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'neg', required: true, type: 'long' },
        { id: 3, name: 'created', required: true, type: 'timestamptz' },
        { id: 4, name: 'amount', required: true, type: 'decimal(12, 2)' },
        { id: 5, name: 'big', required: true, type: 'decimal(20, 0)' },
        { id: 6, name: 'blob', required: true, type: 'binary' },
        {
          id: 7,
          name: 'by_id',
          required: true,
          type: {
            type: 'map',
            'key-id': 8,
            key: 'long',
            'value-id': 9,
            value: 'string',
            'value-required': false,
          },
        },
      ],
    };
    const row = jsonToRow(table, value as Record<string, unknown>);
    expect(row).toEqual({
      id: 9_007_199_254_740_993n,
      neg: -(2n ** 63n),
      created: 1_709_294_400_123_456n,
      amount: -100_000n,
      big: 18_446_744_073_709_551_615n,
      blob: Uint8Array.from([0, 1, 255]),
      by_id: new Map([
        [9_007_199_254_740_995n, 'far'],
        [-1n, 'minus one'],
      ]),
    });
  });

  it.each([
    [[0], 'acme.orders.Other', { x: 'o' }],
    [[1, 0], 'acme.orders.Order.Line', { sku: 's', qty: 2, tags: [] }],
    [[1, 0, 0], 'acme.orders.Order.Line.Tag', { t: 'deep' }],
  ])('resolves message indexes %j to %s', async (indexes, name, value) => {
    const bytes = confluentFrame(orderId, encode(root, name, value), indexes);
    const decoded = await decoder.decode(bytes, valueContext(rawRecord(bytes)));
    expect(decoded.writerSchema?.messageName).toBe(name);
    expect(decoded.value).toEqual(value);
  });

  it('dead-letters indexes that name no message, and bytes that are not the message', async () => {
    const noSuch = confluentFrame(orderId, encode(root, 'acme.orders.Other', {}), [5]);
    await expect(decoder.decode(noSuch, valueContext(rawRecord(noSuch)))).rejects.toThrow(
      'message indexes [5] name no message type',
    );
    const garbage = confluentFrame(orderId, Buffer.from([0x0a, 0xff, 0xff]), [1]);
    await expect(decoder.decode(garbage, valueContext(rawRecord(garbage)))).rejects.toThrow(
      RecordDecodeError,
    );
  });

  it('compiles schemas that use Confluent field options (meta.proto is option-only)', async () => {
    const source = `syntax = "proto3";
package acme;
import "confluent/meta.proto";
message M {
  string a = 1 [(confluent.field_meta).doc = "documented", (confluent.field_meta).params = { key: "k" value: "v" }];
}`;
    const id = registry.register({ schema: source, schemaType: 'PROTOBUF' });
    const bytes = confluentFrame(
      id,
      encode(producerRoot('syntax = "proto3"; package acme; message M { string a = 1; }'), 'acme.M', {
        a: 'x',
      }),
      [0],
    );
    expect((await decoder.decode(bytes, valueContext(rawRecord(bytes)))).value).toEqual({ a: 'x' });
  });

  it('dead-letters a schema whose import is not among its references', async () => {
    const id = registry.register({
      schema: 'syntax = "proto3"; import "acme/nowhere.proto"; message M { acme.X x = 1; }',
      schemaType: 'PROTOBUF',
    });
    const bytes = confluentFrame(id, Buffer.from([]), [0]);
    await expect(decoder.decode(bytes, valueContext(rawRecord(bytes)))).rejects.toThrow(
      'import "acme/nowhere.proto" is neither among the schema\'s references nor built in',
    );
  });
});

describe('mapEntryName', () => {
  it.each([
    ['attrs', 'AttrsEntry'],
    ['by_id', 'ById'],
    ['a_b_c', 'ABC'],
    ['x1_y', 'X1Y'],
  ])('names the map entry of %s as protoc does', (field, prefix) => {
    expect(mapEntryName(field)).toBe(prefix.endsWith('Entry') ? prefix : `${prefix}Entry`);
  });
});
