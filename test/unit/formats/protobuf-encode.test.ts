/**
 * Rows back to Protobuf (kafka-serve's re-encoding): a message written by a producer (protobufjs, as
 * protoc's serializers write: field-number order, proto3 defaults left out), decoded by floe's decoder
 * and converted into a table's columns as the mapping does (jsonToRow) encodes back to the producer's
 * payload (message indexes + message), in declared and in inferred columns. Which message a record was
 * is not kept, so a schema with two root messages does not compile; neither does one the table lacks.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../../functions/core/formats/compiled-schema.js';
import { ShapeMismatch } from '../../../functions/core/formats/encode-values.js';
import { compileProtobufRowEncoder } from '../../../functions/core/formats/protobuf-encoder.js';
import { jsonToRow } from '../../../functions/core/records/json-to-value.js';
import type { IcebergType, StructType } from '../../../functions/core/spec/types.js';
import { encode, producerRoot } from './protobuf-fixtures.js';

const DATE_PROTO = `syntax = "proto3"; package google.type;
message Date { int32 year = 1; int32 month = 2; int32 day = 3; }`;

const SALE_PROTO = `syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "confluent/type/decimal.proto";
import "google/type/date.proto";
message Line { string sku = 1; int32 qty = 2; }
message Sale {
  int64 id = 1;
  uint64 big = 2;
  sint32 delta = 3;
  uint32 u32 = 4;
  sfixed32 sf32 = 6;
  bool paid = 7;
  string name = 8;
  bytes blob = 9;
  double price = 10;
  float ratio = 11;
  enum Status { NEW = 0; PAID = 1; }
  Status status = 12;
  repeated Line lines = 13;
  map<string, int64> counts = 14;
  optional string note = 15;
  google.protobuf.Timestamp at = 16;
  google.protobuf.Int64Value maybe = 17;
  confluent.type.Decimal amount = 18;
  google.type.Date day = 19;
  repeated int32 nums = 20;
  oneof pick { string a = 21; int32 b = 22; }
}
`;

const list = (element: IcebergType): IcebergType => ({
  type: 'list',
  'element-id': 900,
  'element-required': false,
  element,
});

function struct(columns: [string, IcebergType][]): StructType {
  return {
    type: 'struct',
    fields: columns.map(([name, type], i) => ({ id: i + 1, name, required: false, type })),
  };
}

const LINE = struct([
  ['sku', 'string'],
  ['qty', 'int'],
]);

const NATIVE = struct([
  ['id', 'long'],
  ['big', 'decimal(20, 0)'],
  ['delta', 'int'],
  ['u32', 'long'],
  ['sf32', 'int'],
  ['paid', 'boolean'],
  ['name', 'string'],
  ['blob', 'binary'],
  ['price', 'double'],
  ['ratio', 'float'],
  ['status', 'string'],
  ['lines', list(LINE)],
  [
    'counts',
    { type: 'map', 'key-id': 901, key: 'string', 'value-id': 902, 'value-required': false, value: 'long' },
  ],
  ['note', 'string'],
  ['at', 'timestamptz'],
  ['maybe', 'long'],
  ['amount', 'decimal(12, 2)'],
  ['day', 'date'],
  ['nums', list('int')],
  ['a', 'string'],
  ['b', 'int'],
]);

/** What schema evolution infers from the decoded values (no decimal column: a Decimal's scale is needed). */
const INFERRED = struct(
  NATIVE.fields
    .filter((f) => f.name !== 'amount')
    .map((f): [string, IcebergType] => {
      const inferred: Record<string, IcebergType> = {
        big: 'long',
        delta: 'long',
        sf32: 'long',
        blob: 'string',
        ratio: 'double',
        lines: list(
          struct([
            ['sku', 'string'],
            ['qty', 'long'],
          ]),
        ),
        counts: struct([
          ['x', 'long'],
          ['y', 'long'],
        ]),
        at: 'string',
        day: 'string',
        nums: list('long'),
        b: 'long',
      };
      return [f.name, inferred[f.name] ?? f.type];
    }),
);

const root = producerRoot(DATE_PROTO, SALE_PROTO);
const decoder = compileSchema('PROTOBUF', SALE_PROTO, [
  { name: 'google/type/date.proto', schemaType: 'PROTOBUF', schema: DATE_PROTO },
]);

const SALE = {
  id: '9007199254740993',
  big: '18446744073709551615',
  delta: -3,
  u32: 4_294_967_295,
  sf32: -8,
  paid: true,
  name: 'Ada',
  blob: Buffer.from([0, 1, 255]),
  price: 12.5,
  ratio: Math.fround(0.1),
  status: 'PAID',
  lines: [{ sku: 'a', qty: 2 }, { sku: 'b' }],
  counts: { x: '-5', y: '9007199254740993' },
  note: '',
  at: { seconds: '1709294400', nanos: 123_456_000 },
  maybe: { value: '0' },
  amount: { value: Buffer.from([0xfe, 0x79, 0x60]), precision: 6, scale: 2 },
  day: { year: 2024, month: 2, day: 29 },
  nums: [1, -1, 300],
  b: 0,
};

/** Producer payload (indexes [1] + message) → floe's decoder → the table's row → the encoder's payload. */
function roundTrip(columns: StructType, value: Record<string, unknown>) {
  const payload = Buffer.concat([Buffer.from([2, 2]), encode(root, 'shop.Sale', value)]);
  const row = jsonToRow(
    columns,
    decoder.decode(payload, 'confluent', 'value').value as Record<string, unknown>,
  );
  const encoder = compileProtobufRowEncoder(
    SALE_PROTO,
    new Map([['google/type/date.proto', DATE_PROTO]]),
    columns,
  );
  if (encoder instanceof ShapeMismatch) throw new Error(encoder.reason);
  return { payload, encoded: encoder(row) };
}

describe('Protobuf re-encoding', () => {
  it('gives back the producer payload from declared and from inferred columns', () => {
    // Act
    const native = roundTrip(NATIVE, SALE);
    const inferred = roundTrip(INFERRED, { ...SALE, big: '0', amount: undefined });
    const empty = roundTrip(NATIVE, {});
    // Assess
    expect(native.encoded?.toString('hex')).toBe(native.payload.toString('hex'));
    expect(inferred.encoded?.toString('hex')).toBe(inferred.payload.toString('hex'));
    expect(empty.encoded?.toString('hex')).toBe(empty.payload.toString('hex'));
  });

  it('round-trips generated messages (fixed seed)', () => {
    const arbitrary = fc.record({
      id: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      delta: fc.integer(),
      name: fc.string(),
      price: fc.double({ noNaN: true }),
      blob: fc.uint8Array({ maxLength: 6 }),
      micros: fc.bigInt({ min: 0n, max: 10n ** 16n }),
      note: fc.option(fc.string(), { nil: undefined }),
      nums: fc.array(fc.integer(), { maxLength: 4 }),
    });
    fc.assert(
      fc.property(arbitrary, (v) => {
        const value = {
          ...SALE,
          id: v.id.toString(),
          delta: v.delta,
          name: v.name,
          price: v.price,
          blob: Buffer.from(v.blob),
          at: { seconds: (v.micros / 1_000_000n).toString(), nanos: Number(v.micros % 1_000_000n) * 1000 },
          note: v.note,
          nums: v.nums,
        };
        const { payload, encoded } = roundTrip(NATIVE, value);
        expect(encoded?.toString('hex')).toBe(payload.toString('hex'));
      }),
      { numRuns: 60, seed: 20261205 },
    );
  });

  it('does not compile a schema with two root messages, or one whose fields the table lacks', () => {
    // Prepare
    const twoRoots = 'syntax = "proto3"; message A { int32 x = 1; } message B { int32 y = 1; }';
    const renamed = struct(NATIVE.fields.map((f) => [f.name === 'name' ? 'title' : f.name, f.type]));
    // Act
    const ambiguous = compileProtobufRowEncoder(twoRoots, new Map(), struct([['x', 'int']]));
    const missing = compileProtobufRowEncoder(
      SALE_PROTO,
      new Map([['google/type/date.proto', DATE_PROTO]]),
      renamed,
    );
    // Assess
    expect((ambiguous as ShapeMismatch).reason).toContain('2 top-level messages');
    expect((missing as ShapeMismatch).reason).toBe('name: the table has no column of that name');
  });
});
