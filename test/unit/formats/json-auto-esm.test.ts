import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RecordDecodeError, ValidationError } from '../../../functions/core/errors.js';
import { createPayloadDecoder, detectFormat } from '../../../functions/core/formats/payload-decoder.js';
import { JsonNumberText } from '../../../functions/core/records/json-to-value.js';
import {
  type SchemaRegistryServer,
  startSchemaRegistryServer,
} from '../../support/schema-registry-server.js';
import { confluentFrame, glueFrame, producerAvroType, rawRecord, valueContext } from './helpers.js';

const text = (s: string) => Buffer.from(s);

describe('JSON and text payloads', () => {
  it('parses plain JSON with exact big numbers', async () => {
    const decoder = createPayloadDecoder({ value: 'json' });
    const bytes = text('{"id": 9007199254740993, "amount": 12.30, "tags": ["a"]}');
    const decoded = await decoder.decode(bytes, valueContext(rawRecord(bytes)));
    expect(decoded).toStrictEqual({
      value: { id: new JsonNumberText('9007199254740993'), amount: 12.3, tags: ['a'] },
      format: 'json',
    });
  });

  it('dead-letters malformed JSON and invalid UTF-8', async () => {
    const decoder = createPayloadDecoder({ value: 'json', key: 'string' });
    const bad = text('{"id": ');
    await expect(decoder.decode(bad, valueContext(rawRecord(bad)))).rejects.toThrow(RecordDecodeError);
    const latin1 = Buffer.from([0x7b, 0xe9, 0x7d]);
    await expect(decoder.decode(latin1, valueContext(rawRecord(latin1)))).rejects.toThrow(
      'value is not valid UTF-8',
    );
    await expect(
      decoder.decode(latin1, { topic: 't', isKey: true, record: rawRecord(null) }),
    ).rejects.toThrow('key is not valid UTF-8');
  });

  it('keeps text keys as strings, numeric-looking ones included', async () => {
    const decoder = createPayloadDecoder({ value: 'json', key: 'string' });
    const key = text('00123');
    expect(await decoder.decode(key, { topic: 't', isKey: true, record: rawRecord(null, { key }) })).toEqual({
      value: '00123',
      format: 'string',
    });
  });

  it('refuses to decode keys when no key format is configured', async () => {
    const decoder = createPayloadDecoder({ value: 'json' });
    expect(decoder.decodesKeys).toBe(false);
    await expect(
      decoder.decode(text('k'), { topic: 't', isKey: true, record: rawRecord(null) }),
    ).rejects.toThrow(ValidationError);
  });
});

describe('auto-detection', () => {
  let registry: SchemaRegistryServer;
  beforeEach(async () => {
    registry = await startSchemaRegistryServer();
  });
  afterEach(async () => {
    await registry.close();
  });

  it.each([
    [Buffer.from([0, 0, 0, 0, 1, 2]), 'confluent'],
    [glueFrame('11111111-2222-4333-8444-555555555555', Buffer.from('{}')), 'glue'],
    [text('{"a":1}'), 'json'],
    [text('  \n[1,2]'), 'json'],
    [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), text('{"a":1}')]), 'json'],
    [text('order-17'), 'string'],
    [text('123'), 'string'],
    [Buffer.from([0, 1]), 'string'],
    [Buffer.from([]), 'string'],
  ])('detects %j as %s', (bytes, format) => {
    expect(detectFormat(bytes)).toBe(format);
  });

  it('decodes a mixed topic by each payload’s first byte', async () => {
    // Prepare
    const schema = { type: 'record', name: 'R', fields: [{ name: 'n', type: 'int' }] };
    const id = registry.register({ schema: JSON.stringify(schema) });
    const decoder = createPayloadDecoder({ value: 'auto', registry: { url: registry.url, timeoutMs: 1000 } });
    const avro = confluentFrame(id, producerAvroType(schema).toBuffer({ n: 5 }));
    const json = text('{"n": 6}');
    // Act
    const a = await decoder.decode(avro, valueContext(rawRecord(avro)));
    const j = await decoder.decode(json, valueContext(rawRecord(json)));
    // Assess
    expect([a.format, a.value]).toEqual(['avro', { n: 5 }]);
    expect([j.format, j.value]).toEqual(['json', { n: 6 }]);
  });

  it('dead-letters a Confluent-framed payload when no registry is configured', async () => {
    const decoder = createPayloadDecoder({ value: 'auto' });
    const bytes = Buffer.from([0, 0, 0, 0, 9, 2]);
    await expect(decoder.decode(bytes, valueContext(rawRecord(bytes)))).rejects.toThrow(
      'the payload is Confluent-framed but no schema registry is configured',
    );
  });

  it('decodes JSON Schema payloads after the header, without validating them', async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const id = registry.register({ schema: JSON.stringify(schema), schemaType: 'JSON' });
    const decoder = createPayloadDecoder({
      value: 'confluent',
      registry: { url: registry.url, timeoutMs: 1000 },
    });
    const bytes = confluentFrame(id, text('{"n": "not an integer"}'));
    const decoded = await decoder.decode(bytes, valueContext(rawRecord(bytes)));
    expect(decoded).toStrictEqual({
      value: { n: 'not an integer' },
      schemaId: id,
      format: 'json-schema',
      writerSchema: { type: 'JSON', schema },
    });
  });
});

describe('payloads the ESM already decoded', () => {
  it('parses the JSON and keeps the metadata’s schema id, whatever the route’s format', async () => {
    // Prepare: provisioned mode with a Confluent registry config delivers JSON plus metadata
    const decoder = createPayloadDecoder({
      value: 'confluent',
      key: 'string',
      registry: { url: 'http://127.0.0.1:9', timeoutMs: 100 },
    });
    const value = text('{"id": 12345678901234567, "name": "Ada"}');
    const key = text('{"id": 1}');
    const record = rawRecord(value, {
      key,
      valueSchemaMetadata: { dataFormat: 'AVRO', schemaId: '42' },
      keySchemaMetadata: { dataFormat: 'JSON', schemaId: '8f1c2b3a-0000-4000-8000-000000000001' },
    });
    // Act
    const v = await decoder.decode(value, valueContext(record));
    const k = await decoder.decode(key, { topic: record.topic, isKey: true, record });
    // Assess
    expect(v).toStrictEqual({
      value: { id: new JsonNumberText('12345678901234567'), name: 'Ada' },
      schemaId: 42,
      format: 'esm-decoded',
    });
    expect(k).toStrictEqual({
      value: { id: 1 },
      schemaId: '8f1c2b3a-0000-4000-8000-000000000001',
      format: 'esm-decoded',
    });
  });

  it('dead-letters a non-JSON payload with metadata, saying why', async () => {
    const decoder = createPayloadDecoder({ value: 'json' });
    const bytes = Buffer.from([0x02, 0x41]);
    const record = rawRecord(bytes, { valueSchemaMetadata: { dataFormat: 'AVRO', schemaId: '1' } });
    await expect(decoder.decode(bytes, valueContext(record))).rejects.toThrow(
      'EventRecordFormat must be JSON',
    );
  });
});
