import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RecordDecodeError } from '../../../functions/core/errors.js';
import {
  createPayloadDecoder,
  type PayloadDecoder,
} from '../../../functions/core/formats/payload-decoder.js';
import { JsonNumberText, jsonToRow } from '../../../functions/core/records/json-to-value.js';
import type { StructType } from '../../../functions/core/spec/types.js';
import {
  type SchemaRegistryServer,
  startSchemaRegistryServer,
} from '../../support/schema-registry-server.js';
import { confluentFrame, producerAvroType, rawRecord, valueContext } from './helpers.js';

const ORDER_SCHEMA = {
  type: 'record',
  name: 'Order',
  namespace: 'com.acme',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'small', type: 'long' },
    { name: 'min', type: 'long' },
    { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 12, scale: 2 } },
    {
      name: 'rate',
      type: { type: 'fixed', name: 'Rate', size: 8, logicalType: 'decimal', precision: 18, scale: 6 },
    },
    { name: 'created', type: { type: 'long', logicalType: 'timestamp-micros' } },
    { name: 'shipped', type: ['null', { type: 'long', logicalType: 'timestamp-millis' }], default: null },
    { name: 'observed', type: { type: 'long', logicalType: 'timestamp-nanos' } },
    { name: 'local', type: { type: 'long', logicalType: 'local-timestamp-micros' } },
    { name: 'day', type: { type: 'int', logicalType: 'date' } },
    { name: 'at', type: { type: 'int', logicalType: 'time-millis' } },
    { name: 'atMicros', type: { type: 'long', logicalType: 'time-micros' } },
    { name: 'ref', type: { type: 'string', logicalType: 'uuid' } },
    { name: 'refBytes', type: { type: 'fixed', name: 'Uuid16', size: 16, logicalType: 'uuid' } },
    { name: 'ttl', type: { type: 'fixed', name: 'Ttl', size: 12, logicalType: 'duration' } },
    { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['NEW', 'PAID'] } },
    {
      name: 'customer',
      type: {
        type: 'record',
        name: 'Customer',
        fields: [
          { name: 'name', type: 'string' },
          { name: 'vip', type: 'boolean' },
        ],
      },
    },
    {
      name: 'lines',
      type: {
        type: 'array',
        items: {
          type: 'record',
          name: 'Line',
          fields: [
            { name: 'sku', type: 'string' },
            { name: 'qty', type: 'int' },
          ],
        },
      },
    },
    { name: 'attrs', type: { type: 'map', values: 'long' } },
    { name: 'note', type: ['null', 'string'] },
    { name: 'choice', type: ['null', 'int', 'long', 'Customer', 'Rate'] },
    { name: 'blob', type: 'bytes' },
    { name: 'hash', type: { type: 'fixed', name: 'Hash', size: 4 } },
    { name: 'score', type: 'float' },
    { name: 'weight', type: 'double' },
    { name: 'nothing', type: 'null' },
    {
      name: 'chain',
      type: [
        'null',
        {
          type: 'record',
          name: 'Node',
          fields: [
            { name: 'v', type: 'int' },
            { name: 'next', type: ['null', 'Node'] },
          ],
        },
      ],
    },
  ],
};

const ORDER = {
  id: 9_007_199_254_740_993n,
  small: 42n,
  min: -(2n ** 63n),
  amount: Buffer.from([0xfe, 0x79, 0x60]), // -100000 → -1000.00
  rate: Buffer.from([0, 0, 0, 0, 0, 0x12, 0xd6, 0x87]), // 1234567 → 1.234567
  created: 1_709_294_400_123_456n,
  shipped: { long: 1_709_294_400_123n },
  observed: 1_709_294_400_123_456_789n,
  local: 1_709_294_400_000_001n,
  day: 19_783,
  at: 45_296_789,
  atMicros: 45_296_789_012n,
  ref: '6b8f2c1e-8c4a-4b1d-9a57-1c2d3e4f5a6b',
  refBytes: Buffer.from('6b8f2c1e8c4a4b1d9a571c2d3e4f5a6b', 'hex'),
  ttl: Buffer.from([1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]),
  status: 'PAID',
  customer: { name: 'Ada', vip: true },
  lines: [
    { sku: 'a', qty: 1 },
    { sku: 'b', qty: 2 },
  ],
  attrs: { x: 2n ** 62n, y: -1n },
  note: { string: 'fragile' },
  choice: { long: 2n ** 60n },
  blob: Buffer.from([0, 1, 2, 255]),
  hash: Buffer.from([0xde, 0xad, 0xbe, 0xef]),
  score: Number.NaN,
  weight: 0.1,
  nothing: null,
  chain: { 'com.acme.Node': { v: 1, next: { 'com.acme.Node': { v: 2, next: null } } } },
};

describe('Confluent Avro', () => {
  let registry: SchemaRegistryServer;
  let decoder: PayloadDecoder;

  beforeEach(async () => {
    registry = await startSchemaRegistryServer();
    decoder = createPayloadDecoder({ value: 'confluent', registry: { url: registry.url, timeoutMs: 2000 } });
  });
  afterEach(async () => {
    await registry.close();
  });

  it('decodes every Avro type and logical type to exact JSON-like values', async () => {
    // Prepare
    const id = registry.register({ schema: JSON.stringify(ORDER_SCHEMA) });
    const record = rawRecord(confluentFrame(id, producerAvroType(ORDER_SCHEMA).toBuffer(ORDER)));
    // Act
    const decoded = await decoder.decode(record.value!, valueContext(record));
    // Assess
    expect(decoded.format).toBe('avro');
    expect(decoded.schemaId).toBe(id);
    expect(decoded.writerSchema).toEqual({ type: 'AVRO', schema: ORDER_SCHEMA });
    expect(decoded.value).toStrictEqual({
      id: new JsonNumberText('9007199254740993'),
      small: 42,
      min: new JsonNumberText('-9223372036854775808'),
      amount: new JsonNumberText('-1000.00'),
      rate: new JsonNumberText('1.234567'),
      created: '2024-03-01T12:00:00.123456Z',
      shipped: '2024-03-01T12:00:00.123Z',
      observed: '2024-03-01T12:00:00.123456789Z',
      local: '2024-03-01T12:00:00.000001',
      day: '2024-03-01',
      at: '12:34:56.789',
      atMicros: '12:34:56.789012',
      ref: '6b8f2c1e-8c4a-4b1d-9a57-1c2d3e4f5a6b',
      refBytes: '6b8f2c1e-8c4a-4b1d-9a57-1c2d3e4f5a6b',
      ttl: { months: 1, days: 2, milliseconds: 3 },
      status: 'PAID',
      customer: { name: 'Ada', vip: true },
      lines: [
        { sku: 'a', qty: 1 },
        { sku: 'b', qty: 2 },
      ],
      attrs: { x: new JsonNumberText('4611686018427387904'), y: -1 },
      note: 'fragile',
      choice: new JsonNumberText('1152921504606846976'),
      blob: 'AAEC/w==',
      hash: '3q2+7w==',
      score: 'NaN',
      weight: 0.1,
      nothing: null,
      chain: { v: 1, next: { v: 2, next: null } },
    });
  });

  it('emits values the mapper turns into exact Iceberg values', async () => {
    // Prepare
    const id = registry.register({ schema: JSON.stringify(ORDER_SCHEMA) });
    const record = rawRecord(confluentFrame(id, producerAvroType(ORDER_SCHEMA).toBuffer(ORDER)));
    const table: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'amount', required: true, type: 'decimal(12, 2)' },
        { id: 3, name: 'rate', required: true, type: 'decimal(18, 6)' },
        { id: 4, name: 'created', required: true, type: 'timestamptz' },
        { id: 5, name: 'shipped', required: false, type: 'timestamptz' },
        { id: 6, name: 'observed', required: true, type: 'timestamptz' },
        { id: 7, name: 'local', required: true, type: 'timestamp' },
        { id: 8, name: 'day', required: true, type: 'date' },
        { id: 9, name: 'atMicros', required: true, type: 'time' },
        { id: 10, name: 'ref', required: true, type: 'uuid' },
        { id: 11, name: 'blob', required: true, type: 'binary' },
        { id: 12, name: 'hash', required: true, type: 'fixed[4]' },
        { id: 13, name: 'min', required: true, type: 'long' },
        { id: 14, name: 'score', required: true, type: 'float' },
      ],
    };
    // Act
    const decoded = await decoder.decode(record.value!, valueContext(record));
    const row = jsonToRow(table, decoded.value as Record<string, unknown>);
    // Assess
    expect(row).toEqual({
      id: 9_007_199_254_740_993n,
      amount: -100_000n,
      rate: 1_234_567n,
      created: 1_709_294_400_123_456n,
      shipped: 1_709_294_400_123_000n,
      observed: 1_709_294_400_123_456n,
      local: 1_709_294_400_000_001n,
      day: 19_783,
      atMicros: 45_296_789_012n,
      ref: '6b8f2c1e-8c4a-4b1d-9a57-1c2d3e4f5a6b',
      blob: Uint8Array.from([0, 1, 2, 255]),
      hash: Uint8Array.from([0xde, 0xad, 0xbe, 0xef]),
      min: -(2n ** 63n),
      score: Number.NaN,
    });
  });

  it.each([
    ['"string"', 'order-17', 'order-17'],
    ['"long"', 2n ** 62n, new JsonNumberText('4611686018427387904')],
    ['{"type": "long", "logicalType": "timestamp-millis"}', 0n, '1970-01-01T00:00:00.000Z'],
  ])('decodes keys with the primitive schema %s', async (schema, input, expected) => {
    const keyDecoder = createPayloadDecoder({
      value: 'json',
      key: 'confluent',
      registry: { url: registry.url, timeoutMs: 2000 },
    });
    const id = registry.register({ schema });
    const key = confluentFrame(id, producerAvroType(JSON.parse(schema)).toBuffer(input));
    const decoded = await keyDecoder.decode(key, {
      topic: 'orders',
      isKey: true,
      record: rawRecord(null, { key }),
    });
    expect(decoded.value).toStrictEqual(expected);
  });

  it('asks the registry once for 100 records with one schema id', async () => {
    // Prepare
    const schema = { type: 'record', name: 'R', fields: [{ name: 'n', type: 'long' }] };
    const id = registry.register({ schema: JSON.stringify(schema) });
    const type = producerAvroType(schema);
    const records = Array.from({ length: 100 }, (_, i) =>
      rawRecord(confluentFrame(id, type.toBuffer({ n: BigInt(i) }))),
    );
    // Act
    const values = [];
    for (const r of records) values.push((await decoder.decode(r.value!, valueContext(r))).value);
    // Assess
    expect(values.map((v) => (v as { n: number }).n)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(registry.count('/schemas/ids/')).toBe(1);
  });

  it('shares one registry request between concurrent decodes of a new id', async () => {
    const schema = { type: 'record', name: 'R', fields: [{ name: 's', type: 'string' }] };
    const id = registry.register({ schema: JSON.stringify(schema) });
    registry.delayMs = 50;
    const payload = confluentFrame(id, producerAvroType(schema).toBuffer({ s: 'x' }));
    const results = await Promise.all(
      Array.from({ length: 20 }, () => decoder.decode(payload, valueContext(rawRecord(payload)))),
    );
    expect(results.every((r) => (r.value as { s: string }).s === 'x')).toBe(true);
    expect(registry.count('/schemas/ids/')).toBe(1);
  });

  it('resolves schema references (dependencies first) through subject versions', async () => {
    // Prepare: Order references com.acme.Address, which references com.acme.Country
    const country = { type: 'enum', name: 'Country', namespace: 'com.acme', symbols: ['FR', 'NZ'] };
    const address = {
      type: 'record',
      name: 'Address',
      namespace: 'com.acme',
      fields: [
        { name: 'city', type: 'string' },
        { name: 'country', type: 'com.acme.Country' },
      ],
    };
    const order = {
      type: 'record',
      name: 'Order',
      namespace: 'com.acme',
      fields: [
        { name: 'ship', type: 'Address' },
        { name: 'bill', type: ['null', 'Address'] },
      ],
    };
    registry.register({ schema: JSON.stringify(country), subject: 'country' });
    registry.register({
      schema: JSON.stringify(address),
      subject: 'address',
      references: [{ name: 'com.acme.Country', subject: 'country', version: 1 }],
    });
    const id = registry.register({
      schema: JSON.stringify(order),
      references: [{ name: 'com.acme.Address', subject: 'address', version: 1 }],
    });
    const registryTypes = {};
    producerAvroType(country, registryTypes);
    producerAvroType(address, registryTypes);
    const bytes = producerAvroType(order, registryTypes).toBuffer({
      ship: { city: 'Paris', country: 'FR' },
      bill: { 'com.acme.Address': { city: 'Wellington', country: 'NZ' } },
    });
    // Act
    const decoded = await decoder.decode(confluentFrame(id, bytes), valueContext(rawRecord(null)));
    // Assess
    expect(decoded.value).toEqual({
      ship: { city: 'Paris', country: 'FR' },
      bill: { city: 'Wellington', country: 'NZ' },
    });
    expect(Object.keys((decoded.writerSchema as { references: object }).references)).toEqual([
      'com.acme.Country',
      'com.acme.Address',
    ]);
  });

  it('dead-letters a payload that does not match its writer schema', async () => {
    const schema = { type: 'record', name: 'R', fields: [{ name: 's', type: 'string' }] };
    const id = registry.register({ schema: JSON.stringify(schema) });
    const truncated = producerAvroType(schema).toBuffer({ s: 'hello' }).subarray(0, 3);
    const attempt = decoder.decode(confluentFrame(id, truncated), valueContext(rawRecord(null)));
    await expect(attempt).rejects.toThrow(RecordDecodeError);
    await expect(attempt).rejects.toThrow('Avro payload does not match its writer schema');
  });

  it('dead-letters records whose registered schema does not compile, asking once', async () => {
    const id = registry.register({
      schema: '{"type": "record", "name": "R", "fields": [{"name": "x", "type": "nope"}]}',
    });
    for (let i = 0; i < 3; i++) {
      const attempt = decoder.decode(confluentFrame(id, Buffer.from([0])), valueContext(rawRecord(null)));
      await expect(attempt).rejects.toThrow(`schema id ${id} (AVRO) does not compile`);
    }
    expect(registry.count('/schemas/ids/')).toBe(1);
  });
});
