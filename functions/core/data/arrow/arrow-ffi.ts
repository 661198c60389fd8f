/**
 * Arrow arrays parquet-wasm decoded, taken from its WebAssembly memory through the Arrow C Data
 * Interface (ArrowSchema / ArrowArray structs, 32-bit pointers) into Arrow JS `Data`, buffers copied.
 * The other way out, an IPC stream written in WASM and parsed by Arrow JS, cost ~0.7 ms per small file
 * (most of a 250-row file's read). Every array comes out with offset 0: a parent's offset is applied to
 * its buffers (and a struct's to its children), so readers index slots directly.
 *
 * Formats read: the ones an Iceberg data file decodes to (null, booleans, ints, floats, decimals,
 * dates, times, timestamps, (large) utf8 / binary, fixed-size binary, structs, (large) lists, maps).
 * Anything else (views, dictionaries, unions, ...) throws UnsupportedArrowFormatError, and the caller takes
 * the IPC route.
 */
import * as arrow from 'apache-arrow';
import { readSchemaFields, UnsupportedArrowFormatError } from './arrow-ffi-schema.js';

export { UnsupportedArrowFormatError };

/** Bytes of the shared buffers small copies are cut from. */
const SLAB_BYTES = 64 << 10;
/** Copies above this get a buffer of their own (a slab would mostly waste its rest). */
const OWN_BUFFER_BYTES = 16 << 10;

/**
 * Zeroed, 8-byte-aligned byte ranges for the copies of one export: the small buffers of a file's
 * columns (a 250-row file has ~60 of a few hundred bytes) share a few ArrayBuffers instead of one
 * each — an ArrayBuffer costs an allocation, external-memory accounting and a sweep when it dies,
 * which for small files cost more than the copy. The ranges never overlap and are never reused.
 */
export class Slab {
  private buffer = new ArrayBuffer(0);
  private at = 0;

  take(length: number): Uint8Array {
    if (length > OWN_BUFFER_BYTES) return new Uint8Array(length);
    if (this.at + length > this.buffer.byteLength) {
      this.buffer = new ArrayBuffer(SLAB_BYTES);
      this.at = 0;
    }
    const out = new Uint8Array(this.buffer, this.at, length);
    this.at += (length + 7) & ~7;
    return out;
  }
}

/** A copy of `count` bits starting at bit `from` of the bitmap at `ptr`, realigned to bit 0. */
function copyBits(slab: Slab, mem: Uint8Array, ptr: number, from: number, count: number): Uint8Array {
  const out = slab.take((count + 7) >> 3);
  if (from % 8 === 0) {
    out.set(mem.subarray(ptr + (from >> 3), ptr + (from >> 3) + out.length));
    return out;
  }
  for (let i = 0; i < count; i++) {
    const bit = from + i;
    if ((mem[ptr + (bit >> 3)] >> (bit & 7)) & 1) out[i >> 3] |= 1 << (i & 7);
  }
  return out;
}

/** Bytes per value of a fixed-width buffer, or 0 for bit-packed booleans. */
function valueWidth(type: arrow.DataType): number {
  if (type instanceof arrow.Bool) return 0;
  if (type instanceof arrow.FixedSizeBinary) return type.byteWidth;
  if (type instanceof arrow.Decimal) return type.bitWidth / 8;
  if (type instanceof arrow.Int || type instanceof arrow.Time) return type.bitWidth / 8;
  if (type instanceof arrow.Float) return [2, 4, 8][type.precision];
  if (type instanceof arrow.DateDay) return 4;
  return 8; // Date64, Timestamp
}

/** Typed view constructors for the fixed-width value buffers, as Arrow JS keeps them. */
function typedValues(type: arrow.DataType, bytes: Uint8Array): ArrayBufferView {
  const { buffer, byteOffset, byteLength } = bytes;
  if (type instanceof arrow.Int) {
    const n = byteLength / (type.bitWidth / 8);
    if (type.bitWidth === 64)
      return type.isSigned
        ? new BigInt64Array(buffer, byteOffset, n)
        : new BigUint64Array(buffer, byteOffset, n);
    if (type.bitWidth === 32)
      return type.isSigned ? new Int32Array(buffer, byteOffset, n) : new Uint32Array(buffer, byteOffset, n);
    if (type.bitWidth === 16)
      return type.isSigned ? new Int16Array(buffer, byteOffset, n) : new Uint16Array(buffer, byteOffset, n);
    return type.isSigned ? new Int8Array(buffer, byteOffset, n) : bytes;
  }
  if (type instanceof arrow.Float) {
    if (type.precision === arrow.Precision.DOUBLE)
      return new Float64Array(buffer, byteOffset, byteLength / 8);
    if (type.precision === arrow.Precision.SINGLE)
      return new Float32Array(buffer, byteOffset, byteLength / 4);
    return new Uint16Array(buffer, byteOffset, byteLength / 2);
  }
  if (type instanceof arrow.Time) {
    return type.bitWidth === 64
      ? new BigInt64Array(buffer, byteOffset, byteLength / 8)
      : new Int32Array(buffer, byteOffset, byteLength / 4);
  }
  if (type instanceof arrow.DateDay) return new Int32Array(buffer, byteOffset, byteLength / 4);
  if (type instanceof arrow.Timestamp || type instanceof arrow.DateMillisecond) {
    return new BigInt64Array(buffer, byteOffset, byteLength / 8);
  }
  if (type instanceof arrow.Decimal) return new Uint32Array(buffer, byteOffset, byteLength / 4);
  return bytes; // fixed-size binary
}

/** A copy of `length` bytes at `ptr`, 8-byte-aligned. */
function copyBytes(slab: Slab, mem: Uint8Array, ptr: number, length: number): Uint8Array {
  const out = slab.take(length);
  out.set(mem.subarray(ptr, ptr + length));
  return out;
}

function readArray(
  slab: Slab,
  view: DataView,
  mem: Uint8Array,
  ptr: number,
  type: arrow.DataType,
  extraOffset: number,
  parentLength?: number,
): arrow.Data {
  const length = parentLength ?? Number(view.getBigInt64(ptr, true));
  const offset = Number(view.getBigInt64(ptr + 16, true)) + extraOffset;
  const nBuffers = Number(view.getBigInt64(ptr + 24, true));
  const buffersPtr = view.getUint32(ptr + 40, true);
  const childrenPtr = view.getUint32(ptr + 44, true);
  const buffer = (k: number) => (k < nBuffers ? view.getUint32(buffersPtr + 4 * k, true) : 0);
  const child = (k: number) => view.getUint32(childrenPtr + 4 * k, true);
  if (type instanceof arrow.Null) return arrow.makeData({ type, length });
  const validityPtr = buffer(0);
  const nullBitmap = validityPtr === 0 ? undefined : copyBits(slab, mem, validityPtr, offset, length);
  const nullCount = nullBitmap ? countNulls(nullBitmap, length) : 0;
  const common = { offset: 0, length, nullCount, nullBitmap };
  if (type instanceof arrow.Struct) {
    // A struct's offset applies to its children as well as to its own validity.
    const children = type.children.map((f, k) =>
      readArray(slab, view, mem, child(k), f.type, offset, length),
    );
    return arrow.makeData({ ...common, type, children });
  }
  if (type instanceof arrow.List || type instanceof arrow.LargeList || type instanceof arrow.Map_) {
    const large = type instanceof arrow.LargeList;
    const offsets = copyOffsets(slab, mem, buffer(1), offset, length, large);
    const childData = readArray(slab, view, mem, child(0), type.children[0].type, 0);
    if (type instanceof arrow.Map_) {
      return arrow.makeData({ ...common, type, valueOffsets: offsets as Int32Array, child: childData });
    }
    return arrow.makeData({
      ...common,
      type: type as arrow.List,
      valueOffsets: offsets as Int32Array,
      child: childData,
    });
  }
  if (
    type instanceof arrow.Utf8 ||
    type instanceof arrow.LargeUtf8 ||
    type instanceof arrow.Binary ||
    type instanceof arrow.LargeBinary
  ) {
    const large = type instanceof arrow.LargeUtf8 || type instanceof arrow.LargeBinary;
    const offsets = copyOffsets(slab, mem, buffer(1), offset, length, large);
    const end = Number(offsets[length]);
    // Offsets stay absolute into the data buffer, which is copied from its start to the last end.
    const data = copyBytes(slab, mem, buffer(2), end);
    return arrow.makeData({ ...common, type: type as arrow.Utf8, valueOffsets: offsets as Int32Array, data });
  }
  const width = valueWidth(type);
  const values =
    width === 0
      ? copyBits(slab, mem, buffer(1), offset, length)
      : typedValues(type, copyBytes(slab, mem, buffer(1) + offset * width, length * width));
  return arrow.makeData({ ...common, type: type as arrow.Int, data: values as Int32Array });
}

function copyOffsets(
  slab: Slab,
  mem: Uint8Array,
  ptr: number,
  offset: number,
  length: number,
  large: boolean,
): Int32Array | BigInt64Array {
  const width = large ? 8 : 4;
  const bytes = copyBytes(slab, mem, ptr + offset * width, (length + 1) * width);
  return large
    ? new BigInt64Array(bytes.buffer, bytes.byteOffset, length + 1)
    : new Int32Array(bytes.buffer, bytes.byteOffset, length + 1);
}

function countNulls(bitmap: Uint8Array, length: number): number {
  let valid = 0;
  for (let i = 0; i < length; i++) valid += (bitmap[i >> 3] >> (i & 7)) & 1;
  return length - valid;
}

/** The record batches of an exported stream: each batch's top-level columns with their fields. */
export interface FfiBatch {
  length: number;
  fields: arrow.Field[];
  columns: arrow.Data[];
}

/** What parquet-wasm's Table hands over through the C Data Interface (`Table.intoFFI()`). */
export interface FfiExport {
  schemaAddr(): number;
  arrayAddrs(): ArrayLike<number>;
  free(): void;
}

/**
 * A decoded WASM table's batches copied out through the C Data Interface (the table is consumed);
 * undefined for a format this reader does not know — the caller then decodes again and takes the IPC
 * route.
 */
export function exportedBatches(
  memory: { readonly buffer: ArrayBufferLike },
  table: { intoFFI(): FfiExport },
): FfiBatch[] | undefined {
  const exported = table.intoFFI();
  try {
    return readFfiBatches(memory, exported.schemaAddr(), Array.from(exported.arrayAddrs()));
  } catch (error) {
    if (error instanceof UnsupportedArrowFormatError) return undefined;
    throw error;
  } finally {
    exported.free();
  }
}

/**
 * Copies an exported table (schema + one ArrowArray struct per batch) out of WASM memory.
 * @throws UnsupportedArrowFormatError for a format this reader does not know
 */
export function readFfiBatches(
  memory: { readonly buffer: ArrayBufferLike },
  schemaPtr: number,
  arrayPtrs: number[],
): FfiBatch[] {
  const view = new DataView(memory.buffer);
  const mem = new Uint8Array(memory.buffer);
  const schema = readSchemaFields(view, mem, schemaPtr);
  if (schema.format !== '+s') throw new UnsupportedArrowFormatError(`top-level format '${schema.format}'`);
  const fields = schema.fields;
  const slab = new Slab();
  return arrayPtrs.map((ptr) => {
    const length = Number(view.getBigInt64(ptr, true));
    const offset = Number(view.getBigInt64(ptr + 16, true));
    const childrenPtr = view.getUint32(ptr + 44, true);
    const columns = fields.map((f, k) =>
      readArray(slab, view, mem, view.getUint32(childrenPtr + 4 * k, true), f.type, offset, length),
    );
    return { length, fields, columns };
  });
}
