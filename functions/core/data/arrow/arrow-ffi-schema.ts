/**
 * The ArrowSchema side of the C Data Interface (arrow-ffi.ts reads the arrays): a C schema tree in
 * WebAssembly memory → Arrow JS Fields. Every file of a table usually carries the same schema, so the
 * Fields of a schema already seen are reused: its bytes (formats, names, metadata, flags) are compared,
 * not decoded into strings, Maps, Fields and DataTypes again for each file.
 */
import * as arrow from 'apache-arrow';
import { LakeError } from '../../errors.js';

/** A format this reader does not know (not retryable: the same bytes give the same answer); the IPC route reads it. */
export class UnsupportedArrowFormatError extends LakeError {}

/** One parsed ArrowSchema node. */
export interface FfiField {
  format: string;
  name: string;
  metadata: Map<string, string>;
  nullable: boolean;
  children: FfiField[];
}

const utf8 = new TextDecoder();

function cString(mem: Uint8Array, ptr: number): string {
  let end = ptr;
  while (mem[end] !== 0) end++;
  return utf8.decode(mem.subarray(ptr, end));
}

export function readSchema(view: DataView, mem: Uint8Array, ptr: number): FfiField {
  const format = cString(mem, view.getUint32(ptr, true));
  const namePtr = view.getUint32(ptr + 4, true);
  const metadataPtr = view.getUint32(ptr + 8, true);
  const flags = Number(view.getBigInt64(ptr + 16, true));
  const nChildren = Number(view.getBigInt64(ptr + 24, true));
  const childrenPtr = view.getUint32(ptr + 32, true);
  if (view.getUint32(ptr + 36, true) !== 0) throw new UnsupportedArrowFormatError('dictionary-encoded array');
  const metadata = new Map<string, string>();
  if (metadataPtr !== 0) {
    let at = metadataPtr;
    const pairs = view.getInt32(at, true);
    at += 4;
    for (let p = 0; p < pairs; p++) {
      const keyLength = view.getInt32(at, true);
      const key = utf8.decode(mem.subarray(at + 4, at + 4 + keyLength));
      at += 4 + keyLength;
      const valueLength = view.getInt32(at, true);
      const value = utf8.decode(mem.subarray(at + 4, at + 4 + valueLength));
      at += 4 + valueLength;
      metadata.set(key, value);
    }
  }
  const children: FfiField[] = [];
  for (let c = 0; c < nChildren; c++) {
    children.push(readSchema(view, mem, view.getUint32(childrenPtr + 4 * c, true)));
  }
  return {
    format,
    name: namePtr === 0 ? '' : cString(mem, namePtr),
    metadata,
    nullable: (flags & 2) !== 0,
    children,
  };
}

const TIME_UNITS: Record<string, arrow.TimeUnit> = {
  s: arrow.TimeUnit.SECOND,
  m: arrow.TimeUnit.MILLISECOND,
  u: arrow.TimeUnit.MICROSECOND,
  n: arrow.TimeUnit.NANOSECOND,
};

const SIMPLE: Record<string, () => arrow.DataType> = {
  n: () => new arrow.Null(),
  b: () => new arrow.Bool(),
  c: () => new arrow.Int8(),
  C: () => new arrow.Uint8(),
  s: () => new arrow.Int16(),
  S: () => new arrow.Uint16(),
  i: () => new arrow.Int32(),
  I: () => new arrow.Uint32(),
  l: () => new arrow.Int64(),
  L: () => new arrow.Uint64(),
  e: () => new arrow.Float16(),
  f: () => new arrow.Float32(),
  g: () => new arrow.Float64(),
  u: () => new arrow.Utf8(),
  U: () => new arrow.LargeUtf8(),
  z: () => new arrow.Binary(),
  Z: () => new arrow.LargeBinary(),
  tdD: () => new arrow.DateDay(),
  tdm: () => new arrow.DateMillisecond(),
  tts: () => new arrow.Time(arrow.TimeUnit.SECOND, 32),
  ttm: () => new arrow.Time(arrow.TimeUnit.MILLISECOND, 32),
  ttu: () => new arrow.Time(arrow.TimeUnit.MICROSECOND, 64),
  ttn: () => new arrow.Time(arrow.TimeUnit.NANOSECOND, 64),
};

export function toArrowField(f: FfiField): arrow.Field {
  return new arrow.Field(f.name, toArrowType(f), f.nullable, f.metadata);
}

function toArrowType(f: FfiField): arrow.DataType {
  const simple = SIMPLE[f.format];
  if (simple) return simple();
  const format = f.format;
  if (format.startsWith('w:')) return new arrow.FixedSizeBinary(Number(format.slice(2)));
  if (format.startsWith('d:')) {
    const [precision, scale, bits = '128'] = format.slice(2).split(',');
    return new arrow.Decimal(Number(scale), Number(precision), Number(bits));
  }
  if (format.startsWith('ts') && format[3] === ':') {
    const unit = TIME_UNITS[format[2]];
    if (unit !== undefined) return new arrow.Timestamp(unit, format.slice(4) || null);
  }
  switch (format) {
    case '+s':
      return new arrow.Struct(f.children.map(toArrowField));
    case '+l':
      return new arrow.List(toArrowField(f.children[0]));
    case '+L':
      return new arrow.LargeList(toArrowField(f.children[0]));
    case '+m':
      return new arrow.Map_(toArrowField(f.children[0]) as arrow.Field<arrow.Struct>);
  }
  throw new UnsupportedArrowFormatError(`Arrow format '${format}'`);
}

/** Schemas kept (a table's files share one; a few after evolution). */
const CACHE_ENTRIES = 16;

interface CachedSchema {
  format: string;
  fields: arrow.Field[];
}

const cache = new Map<string, CachedSchema>();

/**
 * The top-level format and the Fields of the schema at `ptr` (the same Field objects for the same
 * schema bytes; they are never mutated).
 * @throws UnsupportedArrowFormatError for a format toArrowType does not know
 */
export function readSchemaFields(view: DataView, mem: Uint8Array, ptr: number): CachedSchema {
  const key = schemaKey(view, mem, ptr);
  const hit = cache.get(key);
  if (hit) return hit;
  const schema = readSchema(view, mem, ptr);
  const entry = {
    format: schema.format,
    fields: schema.format === '+s' ? schema.children.map(toArrowField) : [],
  };
  if (cache.size >= CACHE_ENTRIES) cache.clear();
  cache.set(key, entry);
  return entry;
}

/** Every byte that decides the Fields (formats, names, metadata, flags, shape), as a latin1 string. */
function schemaKey(view: DataView, mem: Uint8Array, ptr: number): string {
  const parts: number[] = [];
  const visit = (at: number) => {
    const format = view.getUint32(at, true);
    const name = view.getUint32(at + 4, true);
    const metadata = view.getUint32(at + 8, true);
    const children = Number(view.getBigInt64(at + 24, true));
    const childrenPtr = view.getUint32(at + 32, true);
    parts.push(view.getUint32(at + 16, true), children, view.getUint32(at + 36, true) === 0 ? 0 : 1);
    cBytes(mem, format, parts);
    if (name !== 0) cBytes(mem, name, parts);
    else parts.push(0x100);
    if (metadata !== 0) {
      let end = metadata + 4;
      for (let p = view.getInt32(metadata, true); p > 0; p--) {
        end += 4 + view.getInt32(end, true);
        end += 4 + view.getInt32(end, true);
      }
      for (let i = metadata; i < end; i++) parts.push(mem[i]);
    }
    parts.push(0x101);
    for (let c = 0; c < children; c++) visit(view.getUint32(childrenPtr + 4 * c, true));
  };
  visit(ptr);
  let key = '';
  for (let i = 0; i < parts.length; i += 4096) key += String.fromCharCode(...parts.slice(i, i + 4096));
  return key;
}

function cBytes(mem: Uint8Array, ptr: number, out: number[]): void {
  for (let i = ptr; mem[i] !== 0; i++) out.push(mem[i]);
  out.push(0);
}
