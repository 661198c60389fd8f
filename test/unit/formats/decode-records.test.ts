import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TransientIOError } from '../../../functions/core/errors.js';
import { decodeRecords } from '../../../functions/core/formats/decode-records.js';
import { createPayloadDecoder } from '../../../functions/core/formats/payload-decoder.js';
import {
  type SchemaRegistryServer,
  startSchemaRegistryServer,
} from '../../support/schema-registry-server.js';
import { confluentFrame, producerAvroType, rawRecord } from './helpers.js';

const SCHEMA = { type: 'record', name: 'R', fields: [{ name: 'n', type: 'long' }] };

describe('decodeRecords', () => {
  let registry: SchemaRegistryServer;
  beforeEach(async () => {
    registry = await startSchemaRegistryServer();
  });
  afterEach(async () => {
    await registry.close();
  });

  it('decodes good records, dead-letters bad ones with stage decode, and keeps order', async () => {
    // Prepare
    const id = registry.register({ schema: JSON.stringify(SCHEMA) });
    const decoder = createPayloadDecoder({
      value: 'confluent',
      key: 'string',
      registry: { url: registry.url, timeoutMs: 1000 },
    });
    const good = (n: bigint, offset: bigint) =>
      rawRecord(confluentFrame(id, producerAvroType(SCHEMA).toBuffer({ n })), {
        offset,
        key: Buffer.from(`k${n}`),
      });
    const records = [
      good(1n, 1n),
      rawRecord(confluentFrame(777, Buffer.from([2])), { offset: 2n }), // unknown schema id
      rawRecord(Buffer.from('{"n": 3}'), { offset: 3n }), // not framed
      rawRecord(null, { offset: 4n }), // tombstone
      rawRecord(null, { offset: 5n, decodeError: 'value is not valid base64' }),
      good(6n, 6n),
    ];
    // Act
    const { decoded, deadLetters } = await decodeRecords(decoder, records);
    // Assess
    expect(decoded.map((d) => [d.record.offset, d.value?.value ?? null, d.key?.value ?? null])).toEqual([
      [1n, { n: 1 }, 'k1'],
      [4n, null, null],
      [6n, { n: 6 }, 'k6'],
    ]);
    expect(deadLetters.map((d) => [d.record.offset, d.stage, d.error])).toEqual([
      [2n, 'decode', expect.stringContaining('unknown schema id 777')],
      [3n, 'decode', expect.stringContaining('not in the Confluent wire format: first byte is 123')],
      [5n, 'decode', 'value is not valid base64'],
    ]);
  });

  it('leaves keys undecoded when the route has no key format', async () => {
    const decoder = createPayloadDecoder({ value: 'json' });
    const { decoded } = await decodeRecords(decoder, [
      rawRecord(Buffer.from('{}'), { key: Buffer.from([0xff]) }),
    ]);
    expect(decoded[0].key).toBeUndefined();
  });

  it('fails the whole batch, dead-lettering nothing, when the registry is down', async () => {
    const id = registry.register({ schema: JSON.stringify(SCHEMA) });
    const decoder = createPayloadDecoder({
      value: 'confluent',
      registry: { url: registry.url, timeoutMs: 1000 },
    });
    registry.failNext(10, 503);
    const records = [rawRecord(confluentFrame(id, producerAvroType(SCHEMA).toBuffer({ n: 1n })))];
    await expect(decodeRecords(decoder, records)).rejects.toThrow(TransientIOError);
  });
});
