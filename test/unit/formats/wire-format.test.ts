import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { RecordDecodeError } from '../../../functions/core/errors.js';
import {
  readConfluentFrame,
  readConfluentMessageIndexes,
  readGlueFrame,
} from '../../../functions/core/formats/wire-format.js';
import { confluentFrame, glueFrame } from './helpers.js';

describe('Confluent framing', () => {
  it('reads the schema id and the payload', () => {
    const frame = readConfluentFrame(confluentFrame(0x01020304, Buffer.from('abc')), 'value');
    expect(frame.schemaId).toBe(0x01020304);
    expect(Buffer.from(frame.payload).toString()).toBe('abc');
  });

  it.each([
    [Buffer.from([0, 0, 0]), 'too short for the Confluent wire format'],
    [Buffer.from([1, 0, 0, 0, 1, 9]), 'first byte is 1, expected 0'],
    [Buffer.from([0, 0xff, 0xff, 0xff, 0xff]), 'negative schema id'],
  ])('refuses %j', (bytes, message) => {
    expect(() => readConfluentFrame(bytes, 'value')).toThrow(RecordDecodeError);
    expect(() => readConfluentFrame(bytes, 'value')).toThrow(message);
  });

  it.each([[[0]], [[1]], [[0, 2]], [[3, 1, 70]], [[200]]])(
    'reads message indexes %j written as zig-zag varints',
    (indexes) => {
      // Prepare
      const framed = readConfluentFrame(confluentFrame(7, Buffer.from([0xaa]), indexes), 'value');
      // Act
      const [read, offset] = readConfluentMessageIndexes(framed.payload, 'value');
      // Assess
      expect(read).toEqual(indexes);
      expect(framed.payload[offset]).toBe(0xaa);
    },
  );

  it('refuses truncated message indexes', () => {
    expect(() => readConfluentMessageIndexes(Buffer.from([0x04, 0x80]), 'value')).toThrow('truncated varint');
  });
});

describe('Glue framing', () => {
  const id = '0f8e1b7a-3c2d-4e5f-8a9b-0c1d2e3f4a5b';

  it('reads the version UUID and an uncompressed payload', () => {
    const frame = readGlueFrame(glueFrame(id, Buffer.from('{"a":1}')), 'value');
    expect(frame.schemaVersionId).toBe(id);
    expect(Buffer.from(frame.payload).toString()).toBe('{"a":1}');
  });

  it('inflates zlib-compressed payloads', () => {
    const frame = readGlueFrame(glueFrame(id, Buffer.from('x'.repeat(1000)), { compress: true }), 'value');
    expect(Buffer.from(frame.payload).toString()).toBe('x'.repeat(1000));
  });

  it.each([
    [Buffer.from([3, 0, 1]), 'too short'],
    [
      Buffer.concat([Buffer.from([3, 7]), Buffer.alloc(16), Buffer.from('x')]),
      'unknown Glue compression byte 7',
    ],
    [Buffer.concat([Buffer.from([3, 5]), Buffer.alloc(16), Buffer.from('not zlib')]), 'does not inflate'],
    [Buffer.concat([Buffer.from([2, 0]), Buffer.alloc(16)]), 'first byte is 2, expected 3'],
  ])('refuses %j', (bytes, message) => {
    expect(() => readGlueFrame(bytes, 'value')).toThrow(RecordDecodeError);
    expect(() => readGlueFrame(bytes, 'value')).toThrow(message);
  });

  it('refuses a compressed payload that inflates beyond the limit', () => {
    const bomb = Buffer.concat([
      Buffer.from([3, 5]),
      Buffer.alloc(16),
      deflateSync(Buffer.alloc(65 * 1024 * 1024)),
    ]);
    expect(() => readGlueFrame(bomb, 'value')).toThrow('does not inflate');
  });
});
