/**
 * floe's one Thrift compact reader, read against hyparquet's decoder (a reader no one here wrote): the
 * same schema-less objects for anything floe's ThriftWriter writes, for footers, page indexes and page
 * headers of files floe's writer wrote, and for i64s and doubles past what the writer emits; and a
 * ValidationError, never a value, for bytes cut short.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LakeError, ValidationError } from '../../../functions/core/errors.js';
import {
  readFileFooter,
  thriftInt,
  thriftStruct,
  thriftStructs,
} from '../../../functions/core/data/parquet/read/file-footer.js';
import {
  CompactReader,
  decodeThrift,
  readThriftStruct,
  T,
} from '../../../functions/core/data/parquet/thrift/compact-reader.js';
import { CT, ThriftWriter } from '../../../functions/core/data/parquet/thrift/compact-writer.js';
import { encodeBatchAsParquet } from '../../../functions/core/data/parquet/write/write-batch.js';
import type { StructType } from '../../../functions/core/spec/types.js';
import {
  checkHyparquetVersion,
  deserializeTCompactProtocol,
  HYPARQUET_VERSION,
} from '../../support/hyparquet-internals.js';
import { zigzagVarintBytes } from '../../support/zigzag-varint.js';
import { batchOf } from './parquet/read-back.js';

function theirs(bytes: Uint8Array, offset = 0, length = bytes.byteLength - offset): unknown {
  return deserializeTCompactProtocol({
    view: new DataView(bytes.buffer, bytes.byteOffset + offset, length),
    offset: 0,
  });
}

/** A field of a generated struct: its id gap and its value. */
type Field =
  | { kind: 'i32' | 'i16'; value: number }
  | { kind: 'i64'; value: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'binary'; value: Uint8Array }
  | { kind: 'struct'; value: GenStruct }
  | { kind: 'ints'; value: number[] }
  | { kind: 'bools'; value: boolean[] }
  | { kind: 'binaries'; value: Uint8Array[] }
  | { kind: 'structs'; value: GenStruct[] };
type GenStruct = { gap: number; field: Field }[];

const { struct: structArb } = fc.letrec<{ struct: GenStruct; field: Field }>((tie) => ({
  struct: fc.array(
    fc.record({
      gap: fc.oneof(fc.integer({ min: 1, max: 15 }), fc.integer({ min: 16, max: 300 })),
      field: tie('field'),
    }),
    {
      maxLength: 6,
    },
  ),
  field: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('i32' as const), value: fc.integer() }),
    fc.record({ kind: fc.constant('i16' as const), value: fc.integer({ min: -32768, max: 32767 }) }),
    fc.record({
      kind: fc.constant('i64' as const),
      value: fc.maxSafeInteger().map((n) => n * (n % 2 ? -1 : 1)),
    }),
    fc.record({ kind: fc.constant('bool' as const), value: fc.boolean() }),
    fc.record({ kind: fc.constant('binary' as const), value: fc.uint8Array({ maxLength: 40 }) }),
    fc.record({ kind: fc.constant('ints' as const), value: fc.array(fc.integer(), { maxLength: 20 }) }),
    fc.record({ kind: fc.constant('bools' as const), value: fc.array(fc.boolean(), { maxLength: 20 }) }),
    fc.record({
      kind: fc.constant('binaries' as const),
      value: fc.array(fc.uint8Array({ maxLength: 5 }), { maxLength: 5 }),
    }),
    fc.record({ kind: fc.constant('struct' as const), value: tie('struct') as fc.Arbitrary<GenStruct> }),
    fc.record({
      kind: fc.constant('structs' as const),
      value: fc.array(tie('struct') as fc.Arbitrary<GenStruct>, { maxLength: 3 }),
    }),
  ),
}));

function writeStruct(w: ThriftWriter, s: GenStruct): void {
  let id = 0;
  for (const { gap, field } of s) {
    id += gap;
    switch (field.kind) {
      case 'i32':
        w.i32(id, field.value);
        break;
      case 'i16':
        w.i16(id, field.value);
        break;
      case 'i64':
        w.i64(id, field.value);
        break;
      case 'bool':
        w.bool(id, field.value);
        break;
      case 'binary':
        w.binary(id, field.value);
        break;
      case 'struct':
        w.beginStruct(id);
        writeStruct(w, field.value);
        break;
      case 'ints':
        w.beginList(id, CT.I32, field.value.length);
        for (const v of field.value) w.listI32(v);
        break;
      case 'bools':
        w.beginList(id, CT.TRUE, field.value.length);
        for (const v of field.value) w.listBool(v);
        break;
      case 'binaries':
        w.beginList(id, CT.BINARY, field.value.length);
        for (const v of field.value) w.listBinary(v);
        break;
      case 'structs':
        w.beginList(id, CT.STRUCT, field.value.length);
        for (const v of field.value) {
          w.beginListStruct();
          writeStruct(w, v);
        }
        break;
    }
  }
  w.endStruct();
}

function encodeStruct(s: GenStruct): Uint8Array {
  const w = new ThriftWriter(4);
  writeStruct(w, s);
  return w.view().slice();
}

/** A one-field struct of raw compact bytes: field 1 of `type`, then `value`, then the stop byte. */
function oneField(type: number, value: number[]): Uint8Array {
  return Uint8Array.from([0x10 | type, ...value, 0]);
}

describe('the Thrift compact reader', () => {
  it('reads whatever the writer writes as hyparquet reads it', () => {
    fc.assert(
      fc.property(structArb, (s) => {
        // Prepare
        const bytes = encodeStruct(s);

        // Act
        const r = new CompactReader(bytes, 0, bytes.byteLength);
        const ours = readThriftStruct(r);

        // Assess
        expect(ours).toEqual(theirs(bytes));
        expect(r.pos).toBe(bytes.byteLength);
      }),
      { numRuns: 300 },
    );
  });

  it('reads i64s over their whole range exactly, and bytes and doubles', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
        fc.integer({ min: -128, max: 127 }),
        fc.double(),
        (long, byte, double) => {
          // Prepare
          const eight = new Uint8Array(new Float64Array([double]).buffer);
          const cases = [
            oneField(T.I64, zigzagVarintBytes(long)),
            oneField(T.BYTE, [byte & 0xff]),
            oneField(T.DOUBLE, [...eight]),
          ];

          for (const bytes of cases) {
            // Act
            const ours = decodeThrift(bytes);

            // Assess
            expect(ours).toEqual(theirs(bytes));
          }
          expect(decodeThrift(cases[0]).field_1).toBe(long);
        },
      ),
    );
  });

  it('reads the footer, page index and page headers of a file floe wrote as hyparquet does', () => {
    // Prepare
    const schema: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'name', required: false, type: 'string' },
        { id: 3, name: 'at', required: false, type: 'timestamptz' },
      ],
    };
    const rows = Array.from({ length: 700 }, (_, i) => ({
      id: BigInt(i) * 7_000_000_000n,
      name: i % 9 === 0 ? null : `n${i % 13}`,
      at: BigInt(i) * 1_000_000n,
    }));
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), {
      codec: 'zstd',
      rowGroupRows: 300,
      pageRows: 100,
      keyValueMetadata: new Map([['k', 'v']]),
    });
    const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(bytes.byteLength - 8, true);

    // Act
    const footer = readFileFooter(bytes);

    // Assess
    expect(footer).toEqual(theirs(bytes, bytes.byteLength - 8 - length, length));
    let headers = 0;
    for (const group of thriftStructs(footer, 4)) {
      for (const chunk of thriftStructs(group, 1)) {
        for (const [offset, size] of [
          [thriftInt(chunk, 4), thriftInt(chunk, 5)],
          [thriftInt(chunk, 6), thriftInt(chunk, 7)],
        ]) {
          expect(decodeThrift(bytes, offset!, offset! + size!)).toEqual(theirs(bytes, offset, size));
        }
        const first = thriftInt(thriftStruct(chunk, 3), 9)!;
        const r = new CompactReader(bytes, first, bytes.byteLength);
        const header = readThriftStruct(r);
        const cursor = { view: new DataView(bytes.buffer, bytes.byteOffset + first), offset: 0 };
        expect(header).toEqual(deserializeTCompactProtocol(cursor));
        expect(r.pos - first).toBe(cursor.offset);
        headers++;
      }
    }
    expect(headers).toBe(9);
  });

  it('throws a ValidationError for every struct cut short, never a value', () => {
    fc.assert(
      fc.property(
        structArb.filter((s) => s.length > 0),
        fc.nat(),
        (s, cut) => {
          // Prepare
          const bytes = encodeStruct(s);
          const end = cut % bytes.byteLength;

          // Act / Assess
          expect(() => decodeThrift(bytes, 0, end)).toThrow(ValidationError);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses sets and maps, which parquet.thrift does not use', () => {
    expect(() => decodeThrift(oneField(T.SET, [0x05]))).toThrow(/Thrift type 10/);
    expect(() => decodeThrift(oneField(T.MAP, [0x00]))).toThrow(/Thrift type 11/);
  });
});

describe('the hyparquet internals the tests use', () => {
  it('are checked against the version they were written for', () => {
    // Act / Assess
    expect(() => checkHyparquetVersion(HYPARQUET_VERSION)).not.toThrow();
    const other = () => checkHyparquetVersion('1.34.0');
    expect(other).toThrow(LakeError);
    expect(other).toThrow(/hyparquet 1\.34\.0 is installed.*written for hyparquet 1\.33\.0/);
  });
});
