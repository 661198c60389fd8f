import type { GetSchemaVersionCommand, GetSchemaVersionCommandOutput } from '@aws-sdk/client-glue';
import { describe, expect, it } from 'vitest';
import { LakeError, RecordDecodeError, TransientIOError } from '../../../functions/core/errors.js';
import type { GlueClientLike } from '../../../functions/core/formats/glue-schema-source.js';
import { createPayloadDecoder } from '../../../functions/core/formats/payload-decoder.js';
import { JsonNumberText } from '../../../functions/core/records/json-to-value.js';
import { glueFrame, producerAvroType, rawRecord, valueContext } from './helpers.js';
import { encode, producerRoot } from './protobuf-fixtures.js';

const ARN = 'arn:aws:glue:eu-west-1:123456789012:schema/orders-registry/orders';

/** A GlueClient stand-in: versions by id, errors by id, and every command it was sent. */
function stubGlue(
  versions: Record<string, { DataFormat: string; SchemaDefinition: string; SchemaArn?: string }>,
  errors: Record<string, string> = {},
) {
  const sent: Array<GetSchemaVersionCommand['input']> = [];
  const client: GlueClientLike = {
    async send(command: GetSchemaVersionCommand): Promise<GetSchemaVersionCommandOutput> {
      sent.push(command.input);
      const id = command.input.SchemaVersionId ?? '';
      if (errors[id]) throw Object.assign(new Error(`stubbed ${errors[id]}`), { name: errors[id] });
      const v = versions[id];
      if (!v)
        throw Object.assign(new Error('Schema version is not found.'), { name: 'EntityNotFoundException' });
      return { SchemaVersionId: id, SchemaArn: ARN, ...v, $metadata: {} } as GetSchemaVersionCommandOutput;
    },
  };
  return { client, sent };
}

const AVRO_ID = '11111111-2222-4333-8444-555555555555';
const JSON_ID = '22222222-3333-4444-8555-666666666666';
const PROTO_ID = '33333333-4444-4555-8666-777777777777';
const AVRO_SCHEMA = {
  type: 'record',
  name: 'Order',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'at', type: { type: 'long', logicalType: 'timestamp-micros' } },
  ],
};
const PROTO = `syntax = "proto3"; package shop;
message Zeta { string z = 1; }
message Alpha {
  message Inner { int32 i = 1; }
  map<string, int32> counts = 1;
  Inner inner = 2;
  int64 big = 3;
}`;

const versions = {
  [AVRO_ID]: { DataFormat: 'AVRO', SchemaDefinition: JSON.stringify(AVRO_SCHEMA) },
  [JSON_ID]: { DataFormat: 'JSON', SchemaDefinition: '{"type": "object"}' },
  [PROTO_ID]: { DataFormat: 'PROTOBUF', SchemaDefinition: PROTO },
};

describe('AWS Glue Schema Registry', () => {
  const avroBytes = producerAvroType(AVRO_SCHEMA).toBuffer({ id: 2n ** 60n, at: 1_709_294_400_000_001n });

  it.each([false, true])(
    'decodes Avro (compressed: %s) by the schema version in the header',
    async (compress) => {
      // Prepare
      const glue = stubGlue(versions);
      const decoder = createPayloadDecoder({ value: 'glue' }, { glueClient: glue.client });
      const bytes = glueFrame(AVRO_ID, avroBytes, { compress });
      // Act
      const decoded = await decoder.decode(bytes, valueContext(rawRecord(bytes)));
      // Assess
      expect(decoded).toStrictEqual({
        value: { id: new JsonNumberText('1152921504606846976'), at: '2024-03-01T12:00:00.000001Z' },
        schemaId: AVRO_ID,
        format: 'avro',
        writerSchema: { type: 'AVRO', schema: AVRO_SCHEMA },
      });
      expect(glue.sent).toEqual([{ SchemaVersionId: AVRO_ID }]);
    },
  );

  it('decodes zlib-compressed JSON', async () => {
    const glue = stubGlue(versions);
    const decoder = createPayloadDecoder({ value: 'glue' }, { glueClient: glue.client });
    const bytes = glueFrame(JSON_ID, Buffer.from('{"n": 12345678901234567890, "s": "x"}'), {
      compress: true,
    });
    const decoded = await decoder.decode(bytes, valueContext(rawRecord(bytes)));
    expect(decoded.format).toBe('json-schema');
    expect(decoded.value).toStrictEqual({ n: new JsonNumberText('12345678901234567890'), s: 'x' });
  });

  it.each([
    // Glue numbers every message type of the file (map entries included) in name order:
    // shop.Alpha 0, shop.Alpha.CountsEntry 1, shop.Alpha.Inner 2, shop.Zeta 3
    [
      0,
      'shop.Alpha',
      { counts: { a: 1 }, inner: { i: 7 }, big: '9007199254740993' },
      { counts: { a: 1 }, inner: { i: 7 }, big: new JsonNumberText('9007199254740993') },
    ],
    [2, 'shop.Alpha.Inner', { i: 3 }, { i: 3 }],
    [3, 'shop.Zeta', { z: 'last' }, { z: 'last' }],
  ])('decodes Protobuf message index %i as %s', async (index, name, input, expected) => {
    const glue = stubGlue(versions);
    const decoder = createPayloadDecoder({ value: 'glue' }, { glueClient: glue.client });
    const bytes = glueFrame(PROTO_ID, encode(producerRoot(PROTO), name, input), {
      messageIndex: index,
      compress: true,
    });
    const decoded = await decoder.decode(bytes, valueContext(rawRecord(bytes)));
    expect(decoded.writerSchema?.messageName).toBe(name);
    expect(decoded.value).toStrictEqual(expected);
  });

  it('dead-letters a message index that names a map entry', async () => {
    const decoder = createPayloadDecoder({ value: 'glue' }, { glueClient: stubGlue(versions).client });
    const bytes = glueFrame(PROTO_ID, Buffer.from([]), { messageIndex: 1 });
    await expect(decoder.decode(bytes, valueContext(rawRecord(bytes)))).rejects.toThrow(
      'message index 1 names the map entry of counts, not a message',
    );
  });

  it('calls GetSchemaVersion once for 100 records of one version', async () => {
    const glue = stubGlue(versions);
    const decoder = createPayloadDecoder({ value: 'glue' }, { glueClient: glue.client });
    const bytes = glueFrame(AVRO_ID, avroBytes);
    await Promise.all(
      Array.from({ length: 100 }, () => decoder.decode(bytes, valueContext(rawRecord(bytes)))),
    );
    expect(glue.sent).toHaveLength(1);
  });

  it('dead-letters an unknown version and fails the batch when Glue throttles', async () => {
    // Prepare
    const throttled = '44444444-5555-4666-8777-888888888888';
    const glue = stubGlue(versions, { [throttled]: 'ThrottlingException' });
    const decoder = createPayloadDecoder({ value: 'glue' }, { glueClient: glue.client });
    const unknown = glueFrame('99999999-9999-4999-8999-999999999999', avroBytes);
    const slow = glueFrame(throttled, avroBytes);
    // Act / Assess
    await expect(decoder.decode(unknown, valueContext(rawRecord(unknown)))).rejects.toThrow(
      RecordDecodeError,
    );
    await expect(decoder.decode(unknown, valueContext(rawRecord(unknown)))).rejects.toThrow(
      'unknown Glue schema version 99999999-9999-4999-8999-999999999999',
    );
    const attempt = decoder.decode(slow, valueContext(rawRecord(slow)));
    await expect(attempt).rejects.toThrow(TransientIOError);
    await expect(attempt).rejects.toMatchObject({ retryable: true });
  });

  it('fails the batch without calling it retryable when Glue denies access', async () => {
    // Prepare: the SDK's AccessDeniedException (HTTP 400 in Glue's protocol)
    const denied = '55555555-6666-4777-8888-999999999999';
    const glue = stubGlue(versions, { [denied]: 'AccessDeniedException' });
    const decoder = createPayloadDecoder({ value: 'glue' }, { glueClient: glue.client });
    const bytes = glueFrame(denied, avroBytes);
    // Act
    const attempt = decoder.decode(bytes, valueContext(rawRecord(bytes)));
    // Assess: not a record problem (no dead letter), and no retry can help
    await expect(attempt).rejects.toBeInstanceOf(LakeError);
    await expect(attempt).rejects.not.toBeInstanceOf(TransientIOError);
    await expect(attempt).rejects.not.toBeInstanceOf(RecordDecodeError);
    await expect(attempt).rejects.toMatchObject({ retryable: false });
    await expect(attempt).rejects.toThrow(/AccessDeniedException/);
  });

  it('refuses a schema version from another registry than the configured one', async () => {
    const decoder = createPayloadDecoder(
      { value: 'glue', glue: { registryName: 'payments' } },
      { glueClient: stubGlue(versions).client },
    );
    const bytes = glueFrame(AVRO_ID, avroBytes);
    await expect(decoder.decode(bytes, valueContext(rawRecord(bytes)))).rejects.toThrow(
      "belongs to registry 'orders-registry', not the configured 'payments'",
    );
  });
});
