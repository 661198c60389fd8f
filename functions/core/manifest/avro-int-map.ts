/**
 * Iceberg's map<int, long | binary> in Avro — an array of `{key: int, value: long | bytes}` records
 * (`logicalType: "map"`): a manifest entry's six column-statistics maps, a pair per column. avsc would
 * make a record object per pair and an array per map, which fromAvroEntry / toAvroEntry then turned
 * into and out of `Map`s; these types read into and write from `Map<number, bigint | Uint8Array>`
 * directly (and still write arrays of `{key, value}` records). Same bytes either way.
 *
 * avsc freezes the types it builds, so the faster methods go on objects derived from them (only
 * `_read`, `_write` and `_check`, the methods avsc's generated record code and `isValid` call).
 */
import type avro from 'avsc';
import type { AvroComplexSchema } from './avro-type.js';
import { readLong, type Tap, writeLong } from './avro-long.js';

/** avsc's Tap with the methods used here (lib/utils.js). */
interface AvscTap extends Tap {
  readInt(): number;
  writeInt(n: number): void;
  skipLong(): void;
}

type IntMapValue = 'long' | 'bytes';
type IntMap = Map<number, bigint | Uint8Array>;

/** avsc's internal type methods, as the derived types override them. */
interface TypeMethods {
  _read(tap: AvscTap): unknown;
  _write(tap: AvscTap, value: unknown): void;
  _check(value: unknown, flags: unknown, hook: unknown, path: unknown): boolean;
}

/** The int map an array schema is (and of what values), or undefined. */
export function intMapValue(schema: unknown): IntMapValue | undefined {
  const s = schema as AvroComplexSchema | null;
  if (typeof s !== 'object' || s === null || s.type !== 'array') return undefined;
  const items = s.items as AvroComplexSchema | null;
  if (typeof items !== 'object' || items === null || items.type !== 'record') return undefined;
  const [key, value, ...more] = items.fields ?? [];
  if (more.length > 0 || key?.name !== 'key' || key.type !== 'int' || value?.name !== 'value')
    return undefined;
  return value.type === 'long' || value.type === 'bytes' ? value.type : undefined;
}

/** Whether a union schema is `["null", <int map>]`, as Iceberg writes every optional map. */
export function isOptionalIntMap(schema: unknown): boolean {
  return Array.isArray(schema) && schema.length === 2 && schema[0] === 'null' && !!intMapValue(schema[1]);
}

/** Bytes, copied out of the block (a view would hold the whole inflated block alive). */
function readBytesCopy(tap: AvscTap): Uint8Array {
  const length = tap.readInt();
  const start = tap.pos;
  const buf = tap.buf;
  if (length < 0 || start + length > buf.length) {
    tap.pos = buf.length + 1; // decode reports the record as ending past the data
    return new Uint8Array(0);
  }
  tap.pos = start + length;
  const out = new Uint8Array(length);
  if (length > 32) out.set(buf.subarray(start, start + length));
  else for (let i = 0; i < length; i++) out[i] = buf[start + i];
  return out;
}

function writeBytes(tap: AvscTap, value: unknown): void {
  if (!(value instanceof Uint8Array)) throw new Error(`invalid "bytes": ${String(value)}`);
  tap.writeInt(value.length);
  const at = tap.pos;
  tap.pos += value.length;
  if (tap.pos <= tap.buf.length) tap.buf.set(value, at);
}

/** The array of `{key, value}` records avsc's own methods take (bytes as Buffers, as avsc wants them). */
function pairsOf(map: IntMap): { key: number; value: unknown }[] {
  return Array.from(map, ([key, value]) => ({
    key,
    value:
      value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value,
  }));
}

/** The array type of an int map: read as a Map, written from a Map or from `{key, value}` records. */
export function intMapType(plain: avro.Type, kind: IntMapValue): avro.Type {
  const base = plain as unknown as TypeMethods;
  const readValue: (tap: AvscTap) => bigint | Uint8Array = kind === 'long' ? readLong : readBytesCopy;
  const writeValue: (tap: AvscTap, value: unknown) => void = kind === 'long' ? writeLong : writeBytes;
  const methods: TypeMethods = {
    _read(tap) {
      const out: IntMap = new Map();
      for (let n = tap.readInt(); n !== 0; n = tap.readInt()) {
        if (n < 0) {
          n = -n;
          tap.skipLong(); // the block's size in bytes
        }
        for (; n > 0; n--) {
          // Past the end of the data (a garbled count): stop; decode reports the record as cut short.
          if (tap.pos > tap.buf.length) return out;
          const key = tap.readInt();
          out.set(key, readValue(tap));
        }
      }
      return out;
    },
    _write(tap, value) {
      if (!(value instanceof Map)) return base._write.call(plain, tap, value);
      // As avsc writes an array: one block of every pair, then the empty block.
      if (value.size > 0) {
        tap.writeInt(value.size);
        (value as IntMap).forEach((v, key) => {
          if (key !== (key | 0)) throw new Error(`invalid "int": ${String(key)}`);
          tap.writeInt(key);
          writeValue(tap, v);
        });
      }
      tap.writeInt(0);
    },
    _check(value, flags, hook, path) {
      return base._check.call(plain, value instanceof Map ? pairsOf(value) : value, flags, hook, path);
    },
  };
  return derive(plain, methods);
}

/** `["null", <int map>]` whose map may be given as a Map (avsc's union would not know its branch). */
export function optionalIntMapType(plain: avro.Type, map: avro.Type): avro.Type {
  const base = plain as unknown as TypeMethods;
  const branch = map as unknown as TypeMethods;
  return derive(plain, {
    _read: (tap) => base._read.call(plain, tap),
    _write(tap, value) {
      if (!(value instanceof Map)) return base._write.call(plain, tap, value);
      tap.writeInt(1); // the map's branch
      branch._write.call(map, tap, value);
    },
    _check(value, flags, hook, path) {
      return base._check.call(plain, value instanceof Map ? pairsOf(value) : value, flags, hook, path);
    },
  });
}

function derive(plain: avro.Type, methods: TypeMethods): avro.Type {
  return Object.freeze(
    Object.create(plain, {
      _read: { value: methods._read },
      _write: { value: methods._write },
      _check: { value: methods._check },
    }),
  ) as avro.Type;
}

/** An avsc type's branches (a union's `types`), for finding the int map inside a union built for it. */
export function unionBranches(type: avro.Type): readonly avro.Type[] {
  return (type as unknown as { types: readonly avro.Type[] }).types;
}
