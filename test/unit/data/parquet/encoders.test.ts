import { deserializeTCompactProtocol, readRleBitPackedHybrid } from '../../../support/hyparquet-internals.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteSink } from '../../../../functions/core/data/parquet/write/byte-sink.js';
import { bitWidth, encodeHybrid } from '../../../../functions/core/data/parquet/write/rle-hybrid.js';
import { CT, ThriftWriter } from '../../../../functions/core/data/parquet/thrift/compact-writer.js';

/** hyparquet's decoder (not ours) reads back `count` values. */
function decodeHybrid(bytes: Uint8Array, width: number, count: number): number[] {
  const out = new Array<number>(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  readRleBitPackedHybrid({ view, offset: 0 }, width, out, bytes.byteLength);
  return out;
}

function encode(values: number[], width: number): Uint8Array {
  const sink = new ByteSink(4);
  encodeHybrid(Int32Array.from(values), 0, values.length, width, sink);
  return sink.view().slice();
}

describe('encodeHybrid (RLE / bit-packed hybrid)', () => {
  it('round-trips runs and literals of every width through hyparquet’s decoder', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 40 })), { maxLength: 60 }),
        (width, runs) => {
          // Prepare: runs of equal values, long and short, so both encodings and the padding meet.
          const values = runs.flatMap(([v, n]) => new Array<number>(n).fill(v % 2 ** width));

          // Act
          const bytes = encode(values, width);

          // Assess
          expect(decodeHybrid(bytes, width, values.length)).toEqual(values);
        },
      ),
    );
  });

  it('encodes only [start, end) of the array', () => {
    // Prepare
    const values = Int32Array.from([7, 7, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 7]);
    const sink = new ByteSink();

    // Act
    encodeHybrid(values, 2, 13, 3, sink);

    // Assess
    expect(decodeHybrid(sink.view(), 3, 11)).toEqual([1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3]);
  });

  it('writes one RLE run for repeated values and splits long literal stretches at 63 groups', () => {
    // Act
    const run = encode(new Array(10_000).fill(1), 1);
    const literal = Array.from({ length: 1000 }, (_, i) => i % 2);
    const packed = encode(literal, 1);

    // Assess
    expect(Array.from(run)).toEqual([0xa0, 0x9c, 0x01, 0x01]); // varint(10000 << 1), value 1
    expect(packed[0]).toBe((63 << 1) | 1);
    expect(decodeHybrid(packed, 1, 1000)).toEqual(literal);
  });

  it('gives the bit width of the largest value', () => {
    expect([0, 1, 2, 3, 4, 255, 256].map(bitWidth)).toEqual([0, 1, 2, 2, 3, 8, 9]);
  });
});

describe('ThriftWriter (compact protocol)', () => {
  it('writes what hyparquet’s Thrift reader reads', () => {
    // Prepare
    const w = new ThriftWriter(2);
    w.i32(1, -5);
    w.i64(2, 2 ** 40 + 3);
    w.bool(3, true);
    w.bool(4, false);
    w.string(5, 'héllo');
    w.beginStruct(7);
    w.i16(1, 300);
    w.binary(20, Uint8Array.from([1, 2, 255])); // id jump over 15: long field header
    w.endStruct();
    w.beginList(8, CT.I32, 20);
    for (let i = 0; i < 20; i++) w.listI32(i - 10);
    w.beginList(9, CT.STRUCT, 2);
    for (const name of ['a', 'b']) {
      w.beginListStruct();
      w.string(1, name);
      w.endStruct();
    }
    w.beginList(10, CT.BINARY, 1);
    w.listString('x');
    w.i64(40, -(2 ** 50));
    w.endStruct();
    const bytes = w.view();

    // Act
    const decoded = deserializeTCompactProtocol({
      view: new DataView(bytes.buffer, 0, bytes.length),
      offset: 0,
    });

    // Assess
    const text = new TextDecoder();
    expect(decoded.field_1).toBe(-5);
    expect(decoded.field_2).toBe(2n ** 40n + 3n);
    expect(decoded.field_3).toBe(true);
    expect(decoded.field_4).toBe(false);
    expect(text.decode(decoded.field_5)).toBe('héllo');
    expect(decoded.field_7.field_1).toBe(300);
    expect(Array.from(decoded.field_7.field_20)).toEqual([1, 2, 255]);
    expect(decoded.field_8).toEqual(Array.from({ length: 20 }, (_, i) => i - 10));
    expect(decoded.field_9.map((s: { field_1: Uint8Array }) => text.decode(s.field_1))).toEqual(['a', 'b']);
    expect(text.decode(decoded.field_10[0])).toBe('x');
    expect(decoded.field_40).toBe(-(2n ** 50n));
  });

  it('writes every string as its UTF-8 bytes, ASCII or not, short or long', () => {
    const samples = [
      '',
      'a',
      'order_id',
      'héllo',
      'ß',
      '日本',
      '\u{1f600}',
      '\ud800',
      'x'.repeat(63),
      'x'.repeat(64),
      `${'y'.repeat(70)}é`,
      '\u007f\u0080',
    ];
    for (const value of samples) {
      // Prepare
      const w = new ThriftWriter(2);
      w.string(1, value);
      w.beginList(2, CT.BINARY, 1);
      w.listString(value);
      w.endStruct();
      const bytes = w.view();

      // Act
      const decoded = deserializeTCompactProtocol({
        view: new DataView(bytes.buffer, 0, bytes.length),
        offset: 0,
      });

      // Assess
      const expected = Array.from(new TextEncoder().encode(value));
      expect(Array.from(decoded.field_1 as Uint8Array), value).toEqual(expected);
      expect(Array.from(decoded.field_2[0] as Uint8Array), value).toEqual(expected);
    }
  });

  it('refuses an i64 beyond 2^53 rather than writing a wrong value', () => {
    expect(() => new ThriftWriter().i64(1, 2 ** 60)).toThrow(RangeError);
  });
});
