/**
 * Rows back to Avro (kafka-serve's re-encoding): a record written by a producer (avsc), decoded by
 * floe's decoder and converted into a table's columns the way the mapping does (jsonToRow) encodes back
 * to the producer's bytes, for every type the mapping supports, in the columns a route declares (native
 * Iceberg types) and in the ones it infers from the decoded values (text, base64, doubles). A schema the
 * table does not hold does not compile; a row whose value cannot be given back is refused.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileAvroCodec } from '../../../functions/core/formats/avro-codec.js';
import { compileAvroRowEncoder, ShapeMismatch } from '../../../functions/core/formats/avro-encoder.js';
import { jsonToRow } from '../../../functions/core/records/json-to-value.js';
import type { IcebergType, StructType } from '../../../functions/core/spec/types.js';
import { producerAvroType } from './helpers.js';

const SCHEMA = {
  type: 'record',
  name: 'Order',
  namespace: 'acme',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'qty', type: 'int' },
    { name: 'ratio', type: 'float' },
    { name: 'price', type: 'double' },
    { name: 'paid', type: 'boolean' },
    { name: 'name', type: 'string' },
    { name: 'blob', type: 'bytes' },
    { name: 'code', type: { type: 'fixed', name: 'Code', size: 4 } },
    { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['NEW', 'PAID'] } },
    { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 12, scale: 2 } },
    {
      name: 'fee',
      type: { type: 'fixed', name: 'Fee', size: 8, logicalType: 'decimal', precision: 10, scale: 3 },
    },
    { name: 'day', type: { type: 'int', logicalType: 'date' } },
    { name: 'opens', type: { type: 'int', logicalType: 'time-millis' } },
    { name: 'closes', type: { type: 'long', logicalType: 'time-micros' } },
    { name: 'at_ms', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'at_us', type: { type: 'long', logicalType: 'timestamp-micros' } },
    { name: 'at_ns', type: { type: 'long', logicalType: 'timestamp-nanos' } },
    { name: 'local_us', type: { type: 'long', logicalType: 'local-timestamp-micros' } },
    { name: 'uid', type: { type: 'string', logicalType: 'uuid' } },
    { name: 'note', type: ['null', 'string'] },
    { name: 'tags', type: { type: 'array', items: 'string' } },
    { name: 'counts', type: { type: 'map', values: 'long' } },
    {
      name: 'ship',
      type: {
        type: 'record',
        name: 'Ship',
        fields: [
          { name: 'city', type: 'string' },
          { name: 'zip', type: ['null', 'int'] },
        ],
      },
    },
  ],
};

const field = (name: string, type: IcebergType, id: number) => ({ id, name, required: false, type });

function struct(columns: [string, IcebergType][]): StructType {
  return { type: 'struct', fields: columns.map(([n, t], i) => field(n, t, i + 1)) };
}

const SHIP: IcebergType = struct([
  ['city', 'string'],
  ['zip', 'int'],
]);

/** The columns a route would declare for the schema. */
const NATIVE = struct([
  ['id', 'long'],
  ['qty', 'int'],
  ['ratio', 'float'],
  ['price', 'double'],
  ['paid', 'boolean'],
  ['name', 'string'],
  ['blob', 'binary'],
  ['code', 'fixed[4]'],
  ['status', 'string'],
  ['amount', 'decimal(12, 2)'],
  ['fee', 'decimal(10, 3)'],
  ['day', 'date'],
  ['opens', 'time'],
  ['closes', 'time'],
  ['at_ms', 'timestamptz'],
  ['at_us', 'timestamptz'],
  // A v2 table has no nanosecond timestamps: the decoder's text keeps every digit.
  ['at_ns', 'string'],
  ['local_us', 'timestamp'],
  ['uid', 'uuid'],
  ['note', 'string'],
  ['tags', { type: 'list', 'element-id': 100, 'element-required': false, element: 'string' }],
  [
    'counts',
    { type: 'map', 'key-id': 101, key: 'string', 'value-id': 102, 'value-required': false, value: 'long' },
  ],
  ['ship', SHIP],
]);

/** The columns schema evolution infers from the decoded values (text, base64, doubles, a struct for the map). */
const INFERRED = struct([
  ['id', 'long'],
  ['qty', 'long'],
  ['ratio', 'double'],
  ['price', 'double'],
  ['paid', 'boolean'],
  ['name', 'string'],
  ['blob', 'string'],
  ['code', 'string'],
  ['status', 'string'],
  ['amount', 'double'],
  ['fee', 'double'],
  ['day', 'string'],
  ['opens', 'string'],
  ['closes', 'string'],
  ['at_ms', 'string'],
  ['at_us', 'string'],
  ['at_ns', 'string'],
  ['local_us', 'string'],
  ['uid', 'string'],
  ['note', 'string'],
  ['tags', { type: 'list', 'element-id': 100, 'element-required': false, element: 'string' }],
  [
    'counts',
    struct([
      ['a', 'long'],
      ['b', 'long'],
    ]),
  ],
  [
    'ship',
    struct([
      ['city', 'string'],
      ['zip', 'long'],
    ]),
  ],
]);

const producer = producerAvroType(SCHEMA);
const decoder = compileAvroCodec(JSON.stringify(SCHEMA));

/** A producer's record (underlying Avro values; longs as bigint, unions wrapped). */
function record(over: Record<string, unknown> = {}): Record<string, unknown> {
  const decimal = (n: bigint, size?: number) => {
    const hex = BigInt.asUintN((size ?? 8) * 8, n)
      .toString(16)
      .padStart((size ?? 8) * 2, '0');
    const full = Buffer.from(hex, 'hex');
    if (size !== undefined) return full;
    // Java's BigInteger.toByteArray: the fewest bytes that keep the sign.
    let i = 0;
    while (
      i < full.length - 1 &&
      ((full[i] === 0 && !(full[i + 1] & 0x80)) || (full[i] === 0xff && full[i + 1] & 0x80))
    )
      i++;
    return full.subarray(i);
  };
  return {
    id: 9_007_199_254_740_993n,
    qty: -7,
    ratio: Math.fround(0.1),
    price: 12.5,
    paid: true,
    name: 'caf\u00e9 \u0000',
    blob: Buffer.from([0, 255, 10]),
    code: Buffer.from('AB\u0000C'),
    status: 'PAID',
    amount: decimal(-123_456n),
    fee: decimal(1_500n, 8),
    day: 19_723,
    opens: 32_400_123,
    closes: 61_200_000_001n,
    at_ms: 1_700_000_000_123n,
    at_us: -1_000_001n,
    at_ns: 1_700_000_000_123_456_789n,
    local_us: 1_700_000_000_000_001n,
    uid: '123e4567-e89b-12d3-a456-426614174000',
    note: { string: 'n' },
    tags: ['x', ''],
    counts: { a: 1n, b: -2n },
    ship: { city: 'Lyon', zip: { int: 69_001 } },
    ...over,
  };
}

/** Producer bytes → floe's decoder → the table's row → the encoder's bytes. */
function roundTrip(
  columns: StructType,
  value: Record<string, unknown>,
): { original: Buffer; encoded: Buffer | undefined } {
  const original = producer.toBuffer(value);
  const row = jsonToRow(columns, decoder.decode(original) as Record<string, unknown>);
  const encoder = compileAvroRowEncoder(JSON.stringify(SCHEMA), [], columns);
  if (encoder instanceof ShapeMismatch) throw new Error(encoder.reason);
  return { original, encoded: encoder(row) };
}

describe('Avro re-encoding', () => {
  it('gives back the producer bytes from native columns and from inferred ones', () => {
    // Act
    const native = roundTrip(NATIVE, record());
    const inferred = roundTrip(INFERRED, record());
    const nulls = roundTrip(
      NATIVE,
      record({ note: null, ship: { city: '', zip: null }, tags: [], counts: {} }),
    );
    // Assess
    expect(native.encoded?.toString('hex')).toBe(native.original.toString('hex'));
    expect(inferred.encoded?.toString('hex')).toBe(inferred.original.toString('hex'));
    expect(nulls.encoded?.toString('hex')).toBe(nulls.original.toString('hex'));
  });

  it('round-trips generated records (fixed seed)', () => {
    const arbitrary = fc.record({
      id: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      qty: fc.integer(),
      ratio: fc.float({ noNaN: true }),
      price: fc.double({ noNaN: true }),
      name: fc.string(),
      blob: fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b)),
      amount: fc.bigInt({ min: -(10n ** 11n), max: 10n ** 11n }),
      at_us: fc.bigInt({ min: -(10n ** 15n), max: 10n ** 16n }),
      day: fc.integer({ min: -700_000, max: 2_000_000 }),
      note: fc.option(fc.string(), { nil: null }),
      tags: fc.array(fc.string(), { maxLength: 3 }),
    });
    fc.assert(
      fc.property(arbitrary, (v) => {
        const value = record({
          ...v,
          amount: Buffer.from(twos(v.amount)),
          at_ms: v.at_us / 1000n,
          note: v.note === null ? null : { string: v.note },
        });
        for (const columns of [NATIVE, INFERRED]) {
          const { original, encoded } = roundTrip(columns, value);
          expect(encoded?.toString('hex')).toBe(original.toString('hex'));
        }
      }),
      { numRuns: 100, seed: 20261205 },
    );
  });

  it('does not compile a schema whose fields the table lacks or holds as another type', () => {
    // Prepare
    const renamed = struct(NATIVE.fields.map((f) => [f.name === 'name' ? 'title' : f.name, f.type]));
    const coerced = struct(NATIVE.fields.map((f) => [f.name, f.name === 'at_ms' ? 'long' : f.type]));
    // Act
    const missing = compileAvroRowEncoder(JSON.stringify(SCHEMA), [], renamed);
    const retyped = compileAvroRowEncoder(JSON.stringify(SCHEMA), [], coerced);
    // Assess
    expect(missing).toBeInstanceOf(ShapeMismatch);
    expect((missing as ShapeMismatch).reason).toContain('name: the table has no column');
    expect((retyped as ShapeMismatch).reason).toMatch(/^at_ms: /);
  });

  it('refuses a row whose values cannot be given back exactly (JSON is served instead)', () => {
    // Prepare
    const encoder = compileAvroRowEncoder(JSON.stringify(SCHEMA), [], INFERRED);
    if (encoder instanceof ShapeMismatch) throw new Error(encoder.reason);
    const row = jsonToRow(INFERRED, decoder.decode(producer.toBuffer(record())) as Record<string, unknown>);
    // Act / Assess: digits past the decimal's scale, text that is not what the decoder wrote, a symbol not in the enum
    expect(encoder({ ...row, amount: 1.005 })).toBeUndefined();
    expect(encoder({ ...row, at_ms: '2023-11-14T22:13:20.123456Z' })).toBeUndefined();
    expect(encoder({ ...row, blob: 'not base64!' })).toBeUndefined();
    expect(encoder({ ...row, status: 'LOST' })).toBeUndefined();
    expect(encoder({ ...row, name: null })).toBeUndefined();
    expect(encoder(row)).toBeInstanceOf(Buffer);
  });
});

/** Minimal big-endian two's complement, as Java's BigInteger.toByteArray writes decimals. */
function twos(n: bigint): number[] {
  const out: number[] = [];
  let v = n;
  for (;;) {
    const byte = Number(v & 0xffn);
    out.unshift(byte);
    v >>= 8n;
    if ((v === 0n && !(byte & 0x80)) || (v === -1n && byte & 0x80)) return out;
  }
}
