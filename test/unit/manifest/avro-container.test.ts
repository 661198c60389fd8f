import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { decodeAvroContainer, encodeAvroContainer } from '../../../functions/core/manifest/avro-container.js';
import type { AvroSchema } from '../../../functions/core/manifest/avro-type.js';

const schema: AvroSchema = {
  type: 'record',
  name: 'thing',
  fields: [
    { name: 'id', type: 'long', 'field-id': 1 },
    { name: 'label', type: ['null', 'string'], default: null, 'field-id': 2 },
    { name: 'payload', type: 'bytes', 'field-id': 3 },
  ],
};

function things(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    id: 2n ** 62n + BigInt(i),
    label: i % 3 === 0 ? null : `label-${i}`,
    payload: Buffer.alloc(50, i & 0xff),
  }));
}

describe('Avro object container framing', () => {
  for (const codec of ['null', 'deflate'] as const) {
    it(`round-trips records and metadata with the ${codec} codec`, () => {
      // Prepare
      const records = things(10);
      // Act
      const bytes = encodeAvroContainer({ schema, records, codec, metadata: { 'format-version': '2' } });
      const decoded = decodeAvroContainer(bytes);
      // Assess
      expect(Buffer.from(bytes.subarray(0, 4)).toString('latin1')).toBe('Obj\x01');
      expect(decoded.metadata['avro.codec']).toBe(codec);
      expect(decoded.metadata['format-version']).toBe('2');
      expect(decoded.schema).toEqual(schema); // verbatim, field ids included
      expect(decoded.records.map((r) => ({ ...(r as object) }))).toEqual(records);
    });
  }

  it('keeps longs beyond 2^53 exact, at both ends of the int64 range', () => {
    const records = [
      { id: -(2n ** 63n), label: null, payload: Buffer.alloc(0) },
      { id: 2n ** 63n - 1n, label: 'max', payload: Buffer.alloc(0) },
      { id: 2n ** 53n + 1n, label: 'odd', payload: Buffer.alloc(0) },
    ];
    const decoded = decodeAvroContainer(
      encodeAvroContainer({ schema, records, codec: 'null', metadata: {} }),
    );
    expect(decoded.records.map((r) => (r as { id: bigint }).id)).toEqual(records.map((r) => r.id));
  });

  it('closes a block once it reaches the block size and reads every block back in order', () => {
    const records = things(100); // ~60 bytes each
    const decoded = decodeAvroContainer(
      encodeAvroContainer({ schema, records, codec: 'deflate', metadata: {}, blockSizeBytes: 1_000 }),
    );
    expect(decoded.blocks).toBeGreaterThanOrEqual(5);
    expect(decoded.records.map((r) => (r as { id: bigint }).id)).toEqual(records.map((r) => r.id));
  });

  it('writes records larger than the block buffer whole, each closing its block, and the rest after them', () => {
    // Prepare: 3 small, one of 200 KB (past the block size and any scratch buffer), 3 small
    const records = things(7).map((r, i) => (i === 3 ? { ...r, payload: Buffer.alloc(200_000, 7) } : r));
    // Act
    const bytes = encodeAvroContainer({
      schema,
      records,
      codec: 'null',
      metadata: {},
      blockSizeBytes: 1_000,
    });
    const decoded = decodeAvroContainer(bytes);
    // Assess: the big record ends the block it joins; the three after it share the next
    expect(decoded.blocks).toBe(2);
    expect(decoded.records.map((r) => ({ ...(r as object) }))).toEqual(records);
  });

  it('writes no block for no records', () => {
    const decoded = decodeAvroContainer(
      encodeAvroContainer({ schema, records: [], codec: 'deflate', metadata: {} }),
    );
    expect(decoded.blocks).toBe(0);
    expect(decoded.records).toEqual([]);
  });

  it('names the offending field when a record does not match the schema', () => {
    const bad = { id: 5, label: null, payload: Buffer.alloc(0) }; // a number where a bigint long belongs
    expect(() => encodeAvroContainer({ schema, records: [bad], codec: 'null', metadata: {} })).toThrow(
      /record 0 .* at id/,
    );
  });

  it('rejects a file whose block is not followed by the sync marker', () => {
    const bytes = encodeAvroContainer({ schema, records: things(3), codec: 'null', metadata: {} });
    const corrupt = Uint8Array.from(bytes);
    corrupt[corrupt.length - 1] ^= 0xff; // last byte of the trailing sync marker
    expect(() => decodeAvroContainer(corrupt)).toThrow(ValidationError);
    expect(() => decodeAvroContainer(corrupt)).toThrow(/sync marker/);
  });

  it('rejects bytes that are not an Avro container, and truncated ones', () => {
    const bytes = encodeAvroContainer({ schema, records: things(3), codec: 'deflate', metadata: {} });
    expect(() => decodeAvroContainer(new TextEncoder().encode('PAR1....'))).toThrow(/bad magic/);
    expect(() => decodeAvroContainer(bytes.subarray(0, bytes.length - 20))).toThrow(ValidationError);
  });
});
