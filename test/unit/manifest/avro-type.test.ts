import avro from 'avsc';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeAvroContainer } from '../../../functions/core/manifest/avro-container.js';
import { type AvroSchema, avroTypeOf, createAvroType } from '../../../functions/core/manifest/avro-type.js';
import { ValidationError } from '../../../functions/core/errors.js';
import { zigzagVarintBytes } from '../../support/zigzag-varint.js';

const LONGS = [
  0n,
  1n,
  -1n,
  63n,
  -64n,
  64n,
  2n ** 31n - 1n,
  -(2n ** 31n),
  2n ** 48n,
  -(2n ** 48n) - 1n,
  2n ** 52n - 1n,
  -(2n ** 52n),
  2n ** 52n,
  -(2n ** 52n) - 1n,
  2n ** 53n + 1n,
  2n ** 62n + 12345n,
  2n ** 63n - 1n,
  -(2n ** 63n),
  3211351389039909707n,
];

const record = (name: string, fields: { name: string; type: AvroSchema }[]): AvroSchema => ({
  type: 'record',
  name,
  fields,
});

describe('Avro long as bigint', () => {
  it('writes the bytes the Avro spec gives and reads them back, across the int64 range', () => {
    const type = createAvroType('long');
    for (const n of LONGS) {
      const bytes = type.toBuffer(n);
      expect([...bytes], String(n)).toEqual(zigzagVarintBytes(n));
      expect(type.fromBuffer(bytes)).toBe(n);
    }
  });

  it('writes the spec bytes for any 64-bit value and reads them back (property)', () => {
    const type = createAvroType('long');
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (n) => {
        const bytes = type.toBuffer(n);
        expect([...bytes]).toEqual(zigzagVarintBytes(n));
        expect(type.decode(Buffer.concat([bytes, Buffer.from([0x01])]), 0)).toEqual({
          value: n,
          offset: bytes.length,
        });
      }),
      { numRuns: 2000 },
    );
  });

  it('writes what avsc writes for a JS number long, inside records and unions too', () => {
    const ours = createAvroType(
      record('r', [
        { name: 'a', type: 'long' },
        { name: 'b', type: ['null', 'long'] },
      ]),
    );
    const stock = avro.Type.forSchema(
      record('r', [
        { name: 'a', type: 'long' },
        { name: 'b', type: ['null', 'long'] },
      ]) as avro.Schema,
    );
    // avsc's number long is exact only while the zig-zag value fits a double's 53 bits
    for (const n of LONGS.filter((v) => v >= -(2n ** 52n) && v < 2n ** 52n)) {
      const bytes = ours.toBuffer({ a: n, b: -n });
      expect(bytes.equals(stock.toBuffer({ a: Number(n), b: Number(-n) })), String(n)).toBe(true);
      expect({ ...(ours.fromBuffer(bytes) as object) }).toEqual({ a: n, b: -n });
    }
  });

  it('reads an overlong encoding of a long and reports one that runs past the end of the data', () => {
    const type = createAvroType('long');
    // 5 written with a redundant continuation byte
    expect(type.decode(Buffer.from([0x8a, 0x00]), 0)).toEqual({ value: 5n, offset: 2 });
    // a continuation bit on the last byte: the long does not end inside the data
    expect(type.decode(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), 0).offset).toBe(-1);
    expect(type.decode(Buffer.from([0x80]), 0).offset).toBe(-1);
  });

  it('refuses a value that is not a 64-bit bigint', () => {
    const type = createAvroType('long');
    for (const bad of [1, 2n ** 63n, -(2n ** 63n) - 1n, '1', null]) {
      expect(() => type.toBuffer(bad), String(bad)).toThrow(/long/);
      expect(type.isValid(bad)).toBe(false);
    }
  });
});

describe('avroTypeOf', () => {
  it('compiles a schema once and hands the same type to every later use of the same text', () => {
    const schema = record('cached_once', [{ name: 'id', type: 'long' }]);
    expect(avroTypeOf(schema)).toBe(avroTypeOf(JSON.parse(JSON.stringify(schema)) as AvroSchema));
  });

  it('keeps two schemas that name a record alike but differ in fields apart', () => {
    // Prepare: the same record name (as every manifest's partition record is r102), other fields
    const first = record('r102', [{ name: 'day', type: ['null', 'int'] }]);
    const second = record('r102', [
      { name: 'day', type: ['null', 'int'] },
      { name: 'country', type: ['null', 'string'] },
    ]);
    // Act
    const a = avroTypeOf(first);
    const b = avroTypeOf(second);
    // Assess
    expect(a).not.toBe(b);
    expect({ ...(a.fromBuffer(a.toBuffer({ day: 3 })) as object) }).toEqual({ day: 3 });
    expect({ ...(b.fromBuffer(b.toBuffer({ day: 3, country: 'DE' })) as object) }).toEqual({
      day: 3,
      country: 'DE',
    });
    expect(() => a.toBuffer({ day: 'x' })).toThrow();
  });

  it('does not cache a schema avsc refuses: it throws each time', () => {
    const bad = { type: 'record', name: 'broken', fields: [{ name: 'x', type: 'nope' }] } as AvroSchema;
    expect(() => avroTypeOf(bad)).toThrow();
    expect(() => avroTypeOf(bad)).toThrow();
  });
});

describe('Iceberg int maps (arrays of key/value records)', () => {
  const intMaps = record('stats', [
    { name: 'sizes', type: { type: 'array', items: record('k1_v2', kvFields('long')), logicalType: 'map' } },
    { name: 'bounds', type: ['null', { type: 'array', items: record('k3_v4', kvFields('bytes')) }] },
  ]);
  function kvFields(value: AvroSchema) {
    return [
      { name: 'key', type: 'int' },
      { name: 'value', type: value },
    ];
  }

  it('decode as Maps of bigints and copied bytes, written from key/value arrays', () => {
    // Prepare
    const type = createAvroType(intMaps);
    const bytes = type.toBuffer({
      sizes: [
        { key: 1, value: 2n ** 40n },
        { key: 7, value: -3n },
      ],
      bounds: [{ key: 2, value: Buffer.from('abc') }],
    });
    // Act
    const decoded = type.fromBuffer(bytes) as { sizes: Map<number, bigint>; bounds: Map<number, Uint8Array> };
    // Assess
    expect(decoded.sizes).toEqual(
      new Map([
        [1, 2n ** 40n],
        [7, -3n],
      ]),
    );
    expect(decoded.bounds).toEqual(new Map([[2, new Uint8Array([0x61, 0x62, 0x63])]]));
    expect(decoded.bounds.get(2)?.buffer).not.toBe(bytes.buffer); // a copy, not a view of the block
  });

  it('write from Maps the bytes avsc writes from key/value arrays', () => {
    const type = createAvroType(intMaps);
    const asArrays = type.toBuffer({
      sizes: [
        { key: 3, value: 10n },
        { key: -1, value: 2n ** 62n },
      ],
      bounds: [{ key: 9, value: Buffer.from([1, 2, 3]) }],
    });
    const asMaps = type.toBuffer({
      sizes: new Map([
        [3, 10n],
        [-1, 2n ** 62n],
      ]),
      bounds: new Map([[9, new Uint8Array([1, 2, 3])]]),
    });
    expect(asMaps.equals(asArrays)).toBe(true);
    expect(
      type.toBuffer({ sizes: new Map(), bounds: null }).equals(type.toBuffer({ sizes: [], bounds: null })),
    ).toBe(true);
  });

  it('refuse a Map holding a value of the wrong kind, naming the field', () => {
    for (const sizes of [new Map([[1, 5]]), new Map([[1.5, 5n]])]) {
      const write = () =>
        encodeAvroContainer({
          schema: intMaps,
          records: [{ sizes, bounds: null }],
          metadata: {},
          codec: 'null',
        });
      expect(write).toThrow(ValidationError);
      expect(write).toThrow(/record 0 does not match its schema at sizes/);
    }
    const badBytes = { sizes: new Map(), bounds: new Map([[1, 'abc']]) };
    expect(() =>
      encodeAvroContainer({ schema: intMaps, records: [badBytes], metadata: {}, codec: 'null' }),
    ).toThrow(/at bounds/);
  });

  it('report a garbled pair count as data cut short, without reading on', () => {
    const type = createAvroType(intMaps);
    // a count of 2^34 pairs, then one pair and the end of the data
    const garbled = Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x02, 0x04, 0x00, 0x00]);
    expect(type.decode(garbled, 0).offset).toBe(-1);
    // a byte length past the end of the data
    expect(type.decode(Buffer.from([0x00, 0x02, 0x02, 0x02, 0x7e, 0x61, 0x00, 0x00]), 0).offset).toBe(-1);
  });
});
