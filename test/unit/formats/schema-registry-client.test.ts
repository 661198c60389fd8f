import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LakeError, RecordDecodeError, TransientIOError } from '../../../functions/core/errors.js';
import { createPayloadDecoder } from '../../../functions/core/formats/payload-decoder.js';
import { createSchemaRegistryClient } from '../../../functions/core/formats/schema-registry-client.js';
import {
  type SchemaRegistryServer,
  startSchemaRegistryServer,
} from '../../support/schema-registry-server.js';
import { confluentFrame, producerAvroType, rawRecord, valueContext } from './helpers.js';

const SCHEMA = { type: 'record', name: 'R', fields: [{ name: 's', type: 'string' }] };

describe('schema registry client', () => {
  let registry: SchemaRegistryServer;

  beforeEach(async () => {
    registry = await startSchemaRegistryServer();
  });
  afterEach(async () => {
    await registry.close();
  });

  const client = (extra: Partial<Parameters<typeof createSchemaRegistryClient>[0]> = {}) =>
    createSchemaRegistryClient({ url: registry.url, timeoutMs: 500, retryDelayMs: 1, ...extra });

  it('answers schemas by id with their type and references', async () => {
    const id = registry.register({ schema: 'syntax = "proto3"; message M {}', schemaType: 'PROTOBUF' });
    expect(await client().getSchemaById(id)).toEqual({
      schemaType: 'PROTOBUF',
      schema: 'syntax = "proto3"; message M {}',
      references: [],
    });
  });

  it('makes an unknown schema id a RecordDecodeError, and asks once within the failure window', async () => {
    // Prepare
    const c = client();
    // Act
    const first = c.getSchemaById(42);
    // Assess
    await expect(first).rejects.toThrow(RecordDecodeError);
    await expect(first).rejects.toThrow('unknown schema id 42');
    await expect(c.getSchemaById(42)).rejects.toThrow('unknown schema id 42');
    expect(registry.count('/schemas/ids/42')).toBe(1);
  });

  it('makes 503s after every retry a retryable TransientIOError, and caches nothing', async () => {
    // Prepare
    const id = registry.register({ schema: JSON.stringify(SCHEMA) });
    registry.failNext(3, 503);
    const c = client({ maxAttempts: 3 });
    // Act
    const attempt = c.getSchemaById(id);
    // Assess
    await expect(attempt).rejects.toThrow(TransientIOError);
    await expect(attempt).rejects.toMatchObject({ retryable: true });
    expect(registry.count('/schemas/ids/')).toBe(3);
    // the registry is back: the next lookup asks again and succeeds
    expect((await c.getSchemaById(id)).schemaType).toBe('AVRO');
    expect(registry.count('/schemas/ids/')).toBe(4);
  });

  it('retries a transient failure within a lookup', async () => {
    const id = registry.register({ schema: JSON.stringify(SCHEMA) });
    registry.failNext(1, 502);
    expect((await client().getSchemaById(id)).schema).toBe(JSON.stringify(SCHEMA));
    expect(registry.count('/schemas/ids/')).toBe(2);
  });

  it('makes a registry that does not answer in time a retryable error', async () => {
    const id = registry.register({ schema: JSON.stringify(SCHEMA) });
    registry.hangNext(2);
    const attempt = client({ timeoutMs: 100, maxAttempts: 2 }).getSchemaById(id);
    await expect(attempt).rejects.toThrow(TransientIOError);
    await expect(attempt).rejects.toThrow('did not answer GET /schemas/ids/1 within 100 ms');
  });

  it('makes an unreachable registry a retryable error', async () => {
    const url = registry.url;
    await registry.close();
    const attempt = createSchemaRegistryClient({ url, timeoutMs: 500, maxAttempts: 1 }).getSchemaById(1);
    await expect(attempt).rejects.toThrow(TransientIOError);
    await expect(attempt).rejects.toThrow('is unreachable');
    registry = await startSchemaRegistryServer(); // for afterEach
  });

  it('sends basic auth and fails the batch (retryable, not dead-lettered) when it is refused', async () => {
    // Prepare
    await registry.close();
    registry = await startSchemaRegistryServer({ basicAuth: 'floe:s3cret' });
    const id = registry.register({ schema: JSON.stringify(SCHEMA) });
    // Act
    const good = await client({ basicAuth: 'floe:s3cret' }).getSchemaById(id);
    const bad = client({ basicAuth: 'floe:wrong' }).getSchemaById(id);
    // Assess
    expect(good.schemaType).toBe('AVRO');
    expect(registry.requests[0].authorization).toBe(`Basic ${Buffer.from('floe:s3cret').toString('base64')}`);
    await expect(bad).rejects.toThrow(TransientIOError);
    await expect(bad).rejects.toThrow('answered 401');
    expect(registry.count()).toBe(2); // refused credentials are not retried within the lookup
  });

  it('sends a bearer token', async () => {
    await registry.close();
    registry = await startSchemaRegistryServer({ bearerToken: 'tok' });
    const id = registry.register({ schema: JSON.stringify(SCHEMA) });
    expect((await client({ bearerToken: 'tok' }).getSchemaById(id)).schemaType).toBe('AVRO');
    expect(registry.requests[0].authorization).toBe('Bearer tok');
  });

  it('keeps a path prefix of the registry URL, and fails the batch for a 404 that is not the registry’s', async () => {
    const id = registry.register({ schema: JSON.stringify(SCHEMA) });
    // The test server knows no /api prefix: a 404 without a registry error code fails the batch.
    const attempt = client({ url: `${registry.url}/api/` }).getSchemaById(id);
    await expect(attempt).rejects.toThrow(LakeError);
    await expect(attempt).rejects.not.toThrow(RecordDecodeError);
    await expect(attempt).rejects.toThrow('without a registry error code — is registry.url right?');
    expect(registry.requests.at(-1)?.path).toBe(`/api/schemas/ids/${id}`);
  });

  it('evicts the least recently used schema beyond its capacity', async () => {
    const ids = [1, 2, 3].map(() => registry.register({ schema: JSON.stringify(SCHEMA) }));
    const c = client({ cacheSize: 2 });
    await c.getSchemaById(ids[0]);
    await c.getSchemaById(ids[1]);
    await c.getSchemaById(ids[0]); // ids[0] is now the most recent
    await c.getSchemaById(ids[2]); // evicts ids[1]
    await c.getSchemaById(ids[0]);
    await c.getSchemaById(ids[1]);
    expect(registry.requests.map((r) => r.path)).toEqual([
      `/schemas/ids/${ids[0]}`,
      `/schemas/ids/${ids[1]}`,
      `/schemas/ids/${ids[2]}`,
      `/schemas/ids/${ids[1]}`,
    ]);
  });
});

describe('decoder failures by kind', () => {
  let registry: SchemaRegistryServer;
  beforeEach(async () => {
    registry = await startSchemaRegistryServer();
  });
  afterEach(async () => {
    await registry.close();
  });

  it('dead-letters an unknown schema id, and fails the batch for a registry outage', async () => {
    // Prepare
    const decoder = createPayloadDecoder({
      value: 'confluent',
      registry: { url: registry.url, timeoutMs: 300 },
    });
    const unknown = confluentFrame(42, Buffer.from([2, 0x61]));
    const id = registry.register({ schema: JSON.stringify(SCHEMA) });
    const known = confluentFrame(id, producerAvroType(SCHEMA).toBuffer({ s: 'a' }));
    registry.failNext(3, 503);
    // Act
    const outage = decoder.decode(known, valueContext(rawRecord(known)));
    // Assess
    await expect(outage).rejects.toThrow(TransientIOError);
    await expect(decoder.decode(unknown, valueContext(rawRecord(unknown)))).rejects.toThrow(
      expect.objectContaining({
        name: 'RecordDecodeError',
        stage: 'decode',
        message: expect.stringContaining('unknown schema id 42'),
      }),
    );
    expect((await decoder.decode(known, valueContext(rawRecord(known)))).value).toEqual({ s: 'a' });
  });
});
