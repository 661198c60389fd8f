/**
 * The C Data Interface reader on structs laid out by hand in a fake 32-bit memory: offsets on every
 * level (not byte-aligned in validity bitmaps, a struct's offset applying to its children, list offsets
 * into an offset child), so arrays parquet-wasm hands over sliced read the same as unsliced ones.
 */
import { describe, expect, it } from 'vitest';
import { readFfiBatches, UnsupportedArrowFormatError } from '../../../functions/core/data/arrow/arrow-ffi.js';
import { batchRows, type DataBatch } from '../../../functions/core/data/parquet/read/data-batch.js';
import { getArrowFieldId } from '../../../functions/core/data/arrow/arrow-schema.js';
import type { StructType } from '../../../functions/core/spec/types.js';

/** A bump allocator over one ArrayBuffer, 8-byte aligned, address 0 left unused (null). */
class FakeMemory {
  readonly buffer = new ArrayBuffer(1 << 16);
  private readonly view = new DataView(this.buffer);
  private next = 8;

  alloc(bytes: number): number {
    const at = this.next;
    this.next += Math.ceil(bytes / 8) * 8;
    return at;
  }
  bytes(data: Uint8Array): number {
    const at = this.alloc(data.length + 1);
    new Uint8Array(this.buffer).set(data, at);
    return at;
  }
  text(s: string): number {
    return this.bytes(new TextEncoder().encode(s)); // zero-terminated: the byte after is 0
  }
  pointers(ptrs: number[]): number {
    const at = this.alloc(4 * Math.max(1, ptrs.length));
    ptrs.forEach((p, k) => {
      this.view.setUint32(at + 4 * k, p, true);
    });
    return at;
  }
  metadata(pairs: [string, string][]): number {
    const enc = new TextEncoder();
    const parts = pairs.flatMap(([k, v]) => [enc.encode(k), enc.encode(v)]);
    const at = this.alloc(4 + parts.reduce((n, p) => n + 4 + p.length, 0));
    this.view.setInt32(at, pairs.length, true);
    let o = at + 4;
    for (const p of parts) {
      this.view.setInt32(o, p.length, true);
      new Uint8Array(this.buffer).set(p, o + 4);
      o += 4 + p.length;
    }
    return at;
  }
  schema(format: string, name: string, id: number | undefined, children: number[]): number {
    const at = this.alloc(48);
    this.view.setUint32(at, this.text(format), true);
    this.view.setUint32(at + 4, this.text(name), true);
    this.view.setUint32(
      at + 8,
      id === undefined ? 0 : this.metadata([['PARQUET:field_id', String(id)]]),
      true,
    );
    this.view.setBigInt64(at + 16, 2n, true); // nullable
    this.view.setBigInt64(at + 24, BigInt(children.length), true);
    this.view.setUint32(at + 32, this.pointers(children), true);
    return at;
  }
  array(length: number, offset: number, buffers: number[], children: number[] = []): number {
    const at = this.alloc(64);
    this.view.setBigInt64(at, BigInt(length), true);
    this.view.setBigInt64(at + 16, BigInt(offset), true);
    this.view.setBigInt64(at + 24, BigInt(buffers.length), true);
    this.view.setBigInt64(at + 32, BigInt(children.length), true);
    this.view.setUint32(at + 40, this.pointers(buffers), true);
    this.view.setUint32(at + 44, this.pointers(children), true);
    return at;
  }
  int32s(values: number[]): number {
    return this.bytes(new Uint8Array(Int32Array.from(values).buffer));
  }
  /** A validity bitmap: bit i set when valid[i]. */
  bits(valid: boolean[]): number {
    const out = new Uint8Array(Math.ceil(valid.length / 8));
    valid.forEach((v, i) => {
      if (v) out[i >> 3] |= 1 << (i & 7);
    });
    return this.bytes(out);
  }
}

const SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'a', required: false, type: 'int' },
    { id: 2, name: 's', required: false, type: 'string' },
    {
      id: 3,
      name: 'st',
      required: false,
      type: { type: 'struct', fields: [{ id: 4, name: 'n', required: false, type: 'int' }] },
    },
    {
      id: 5,
      name: 'xs',
      required: false,
      type: { type: 'list', 'element-id': 6, element: 'int', 'element-required': false },
    },
  ],
};

describe('readFfiBatches', () => {
  it('applies the offsets of every level, as the C Data Interface defines them', () => {
    // Prepare: 3 rows, each array sliced.
    const m = new FakeMemory();
    const schema = m.schema('+s', '', undefined, [
      m.schema('i', 'a', 1, []),
      m.schema('u', 's', 2, []),
      m.schema('+s', 'st', 3, [m.schema('i', 'n', 4, [])]),
      m.schema('+l', 'xs', 5, [m.schema('i', 'element', 6, [])]),
    ]);
    // a: physical [9, 10, null, 12, 13] (validity), offset 1 → 10, null, 12
    const a = m.array(3, 1, [m.bits([true, true, false, true, true]), m.int32s([9, 10, 11, 12, 13])]);
    // s: offset 2 into ["x", "yy", "zzz", "", "w"] → "zzz", "", "w"
    const s = m.array(3, 2, [0, m.int32s([0, 1, 3, 6, 6, 7]), m.text('xyyzzzw')]);
    // st: offset 1 (own validity: [v, v, null, v]) → rows 1..3; child n offset 1 plus the struct's 1.
    const n = m.array(5, 1, [0, m.int32s([100, 101, 102, 103, 104])]);
    const st = m.array(3, 1, [m.bits([true, true, false, true])], [n]);
    // xs: offset 1 into offsets [0, 1, 3, 3, 5]; elements [7, 8, 9, 5, 6] with element offset 0.
    const element = m.array(5, 0, [0, m.int32s([7, 8, 9, 5, 6])]);
    const xs = m.array(3, 1, [0, m.int32s([0, 1, 3, 3, 5])], [element]);
    const batch = m.array(3, 0, [0], [a, s, st, xs]);

    // Act
    const [read] = readFfiBatches({ buffer: m.buffer }, schema, [batch]);
    const columns = new Map(read.fields.map((f, k) => [getArrowFieldId(f) as number, read.columns[k]]));
    const rows = batchRows(SCHEMA, { length: read.length, columns } satisfies DataBatch);

    // Assess
    expect(rows).toEqual([
      { a: 10, s: 'zzz', st: { n: 102 }, xs: [8, 9] },
      { a: null, s: '', st: null, xs: [] },
      { a: 12, s: 'w', st: { n: 104 }, xs: [5, 6] },
    ]);
  });

  it('copies the small buffers of an export into shared, 8-byte-aligned ranges that do not overlap', () => {
    // Prepare: an int column and a string column, 3 rows, every buffer present.
    const m = new FakeMemory();
    const schema = m.schema('+s', '', undefined, [m.schema('l', 'a', 1, []), m.schema('u', 's', 2, [])]);
    const longs = m.bytes(new Uint8Array(BigInt64Array.from([1n, -2n, 3n]).buffer));
    const a = m.array(3, 0, [m.bits([true, false, true]), longs]);
    const s = m.array(3, 0, [m.bits([true, true, true]), m.int32s([0, 1, 3, 6]), m.text('xyyzzz')]);
    const batch = m.array(3, 0, [0], [a, s]);

    // Act
    const [read] = readFfiBatches({ buffer: m.buffer }, schema, [batch]);

    // Assess: the values read back, five copies in one ArrayBuffer, none of them overlapping.
    const [ints, strings] = read.columns;
    expect(Array.from(ints.values as BigInt64Array)).toEqual([1n, -2n, 3n]);
    expect(ints.nullCount).toBe(1);
    expect(Array.from(strings.valueOffsets as Int32Array)).toEqual([0, 1, 3, 6]);
    expect(new TextDecoder().decode(strings.values as Uint8Array)).toBe('xyyzzz');
    const copies = [ints.nullBitmap, ints.values, strings.nullBitmap, strings.valueOffsets, strings.values]
      .filter((b): b is NonNullable<typeof b> => b !== undefined)
      .map((b) => ({ buffer: b.buffer, from: b.byteOffset, to: b.byteOffset + b.byteLength }));
    expect(copies).toHaveLength(5);
    expect(new Set(copies.map((c) => c.buffer)).size).toBe(1);
    expect(copies.map((c) => c.buffer)).not.toContain(m.buffer);
    for (const c of copies) expect(c.from % 8).toBe(0);
    const sorted = [...copies].sort((x, y) => x.from - y.from);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i].from).toBeGreaterThanOrEqual(sorted[i - 1].to);
  });

  it('reuses the Fields of a schema already read, and reads a different one anew', () => {
    // Prepare: the same schema twice (separate bytes), and one that differs only in a field id.
    const m = new FakeMemory();
    const schemaWith = (id: number) =>
      m.schema('+s', '', undefined, [m.schema('i', 'a', 1, []), m.schema('u', 's', id, [])]);
    const first = schemaWith(2);
    const again = schemaWith(2);
    const other = schemaWith(3);
    const a = m.array(1, 0, [0, m.int32s([7])]);
    const s = m.array(1, 0, [0, m.int32s([0, 1]), m.text('x')]);
    const batch = m.array(1, 0, [0], [a, s]);

    // Act
    const read = (schema: number) => readFfiBatches({ buffer: m.buffer }, schema, [batch])[0].fields;
    const [f1, f2, f3] = [read(first), read(again), read(other)];

    // Assess
    expect(f2).toBe(f1);
    expect(f3).not.toBe(f1);
    expect(f3.map((f) => getArrowFieldId(f))).toEqual([1, 3]);
    expect(f1.map((f) => getArrowFieldId(f))).toEqual([1, 2]);
  });

  it('refuses a format it does not know, so the caller takes the IPC route', () => {
    // Prepare
    const m = new FakeMemory();
    const schema = m.schema('+s', '', undefined, [m.schema('vu', 'view', 1, [])]);

    // Act / Assess
    expect(() => readFfiBatches({ buffer: m.buffer }, schema, [])).toThrow(UnsupportedArrowFormatError);
  });
});
