/**
 * avsc types built from raw Avro schemas, with Avro `long` as a JS bigint.
 *
 * Iceberg ids (snapshot ids, sequence numbers, sizes) are 64-bit and routinely exceed 2^53, so avsc's
 * default `long` (a JS number) would corrupt them. avsc mutates the registry and options it is given
 * (it records every named type it parses), so each `Type.forSchema` call gets fresh ones; the types
 * themselves are cached by schema text (`avroTypeOf`).
 */
import avro from 'avsc';

/**
 * An Avro schema as JSON, with Iceberg's extra attributes (`field-id`, `element-id`,
 * `logicalType: "map"`, `adjust-to-utc`, ...). Kept as plain data because avsc's parsed `Type`
 * forgets every attribute it does not know, and those ids are what Iceberg readers resolve by.
 */
export type AvroSchema = string | AvroSchema[] | AvroComplexSchema;

export interface AvroComplexSchema {
  type: string | AvroSchema;
  name?: string;
  fields?: AvroField[];
  items?: AvroSchema;
  values?: AvroSchema;
  size?: number;
  logicalType?: string;
  [attribute: string]: unknown;
}

export interface AvroField {
  name: string;
  type: AvroSchema;
  default?: unknown;
  'field-id'?: number;
  [attribute: string]: unknown;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** Longs in this range zig-zag into at most 53 bits: exact as doubles, no bigint arithmetic needed. */
const FAST_MIN = -(2n ** 52n);
const FAST_MAX = 2n ** 52n - 1n;

/** avsc's Tap (lib/utils.js), the cursor its `_read` / `_write` methods move: a buffer and a position. */
interface Tap {
  buf: Buffer;
  pos: number;
}

const isInt64 = (n: unknown): n is bigint => typeof n === 'bigint' && n >= INT64_MIN && n <= INT64_MAX;

/**
 * Reads a zig-zag varint long as a bigint. Like avsc's own reads it never throws: past the end of the
 * buffer it reads zeros and leaves `pos` beyond it, which avsc's `decode` reports (offset -1).
 */
function readLong(tap: Tap): bigint {
  const buf = tap.buf;
  let pos = tap.pos;
  let b = buf[pos++];
  let n = b & 0x7f;
  // Up to 7 bytes (49 bits) in double arithmetic, which is exact there.
  for (let scale = 128; b & 0x80 && scale <= 2 ** 42; scale *= 128) {
    b = buf[pos++];
    n += (b & 0x7f) * scale;
  }
  if (!(b & 0x80)) {
    tap.pos = pos;
    return BigInt(n % 2 === 1 ? -(n + 1) / 2 : n / 2);
  }
  return readLongSlowly(tap);
}

/**
 * A long of 8+ bytes (a snapshot id): the low 28 bits and the rest as two exact doubles, one bigint
 * made of them. Bytes past the tenth cannot belong to a 64-bit value: skipped, as avsc skips them.
 */
function readLongSlowly(tap: Tap): bigint {
  const buf = tap.buf;
  let pos = tap.pos;
  let b = 0;
  let low = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    b = buf[pos++];
    low |= (b & 0x7f) << shift;
  }
  let high = 0;
  for (let scale = 1; b & 0x80; scale *= 128) {
    b = buf[pos++];
    if (scale <= 2 ** 35) high += (b & 0x7f) * scale;
  }
  tap.pos = pos;
  // zig-zag: the magnitude is the value without its lowest bit, which gives the sign
  const magnitude = (BigInt(high) << 27n) | BigInt(low >>> 1);
  return BigInt.asIntN(64, low & 1 ? -magnitude - 1n : magnitude);
}

function writeLong(tap: Tap, n: unknown): void {
  if (!isInt64(n)) throw new Error(`invalid "long": ${String(n)}`);
  // Writes past the end of the buffer are dropped by the typed array; avsc sees `pos` beyond the end
  // and encodes again into a buffer of the right size.
  const buf = tap.buf;
  let pos = tap.pos;
  if (n >= FAST_MIN && n <= FAST_MAX) {
    const v = Number(n);
    let z = v >= 0 ? v * 2 : -v * 2 - 1;
    while (z >= 128) {
      buf[pos++] = (z % 128) | 0x80;
      z = Math.floor(z / 128);
    }
    buf[pos++] = z;
  } else {
    // Beyond 2^52 a long takes 8+ bytes: the low 28 bits (4 bytes) and the rest as exact doubles.
    const z = n >= 0n ? n << 1n : (-n << 1n) - 1n;
    let low = Number(z & 0xfffffffn);
    for (let i = 0; i < 4; i++, low >>>= 7) buf[pos++] = (low & 0x7f) | 0x80;
    let high = Number(z >> 28n);
    while (high >= 128) {
      buf[pos++] = (high % 128) | 0x80;
      high = Math.floor(high / 128);
    }
    buf[pos++] = high;
  }
  tap.pos = pos;
}

/**
 * Avro long ↔ bigint. avsc's LongType.__with hands `fromBuffer` the 8-byte little-endian two's
 * complement of the value, one Buffer per long read or written; a manifest entry holds a hundred
 * longs (its column statistics), so the hot `_read` / `_write` are replaced by a varint codec that
 * makes a bigint straight from the bytes (same bytes, same values: checked in avro-type.test.ts).
 */
const stockBigintLongType = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer): bigint => buf.readBigInt64LE(0),
  toBuffer: (n: bigint): Buffer => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  fromJSON: (json: unknown): bigint => BigInt(json as string | number),
  toJSON: (n: bigint): string => n.toString(),
  isValid: isInt64,
  compare: (a: bigint, b: bigint): number => (a === b ? 0 : a < b ? -1 : 1),
});
// `__with` freezes the type it makes: the faster methods go on an object derived from it.
const bigintLongType: avro.types.LongType = Object.freeze(
  Object.create(stockBigintLongType, {
    _read: { value: readLong },
    _write: { value: writeLong },
  }) as avro.types.LongType,
);

function isLongSchema(schema: unknown): boolean {
  if (schema === 'long') return true;
  return typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'long';
}

/** avsc's Tap with the methods the int-map reader uses. */
interface AvscTap extends Tap {
  readInt(): number;
  skipLong(): void;
}

type IntMapValue = 'long' | 'bytes';

/**
 * Iceberg's map<int, long | binary> in Avro — an array of `{key: int, value: long | bytes}` records
 * (manifest entries' column statistics: six of them, a key/value pair per column) — or undefined.
 */
function intMapValue(schema: unknown): IntMapValue | undefined {
  const s = schema as AvroComplexSchema | null;
  if (typeof s !== 'object' || s === null || s.type !== 'array') return undefined;
  const items = s.items as AvroComplexSchema | null;
  if (typeof items !== 'object' || items === null || items.type !== 'record') return undefined;
  const [key, value, ...more] = items.fields ?? [];
  if (more.length > 0 || key?.name !== 'key' || key.type !== 'int' || value?.name !== 'value')
    return undefined;
  return value.type === 'long' || value.type === 'bytes' ? value.type : undefined;
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

/**
 * Reads an int map's array blocks straight into a `Map` (no record object per pair, no array): what
 * `fromAvroEntry` makes of them anyway. avsc's ArrayType._read otherwise, blocks and sizes included.
 */
function intMapReader(kind: IntMapValue): (tap: AvscTap) => Map<number, bigint | Uint8Array> {
  const readValue: (tap: AvscTap) => bigint | Uint8Array = kind === 'long' ? readLong : readBytesCopy;
  return (tap) => {
    const out = new Map<number, bigint | Uint8Array>();
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
  };
}

/** The int-map schemas whose plain avsc type is being built (the hook declines them meanwhile). */
const buildingIntMaps = new Set<unknown>();

type ForSchemaOptions = NonNullable<Parameters<typeof avro.Type.forSchema>[1]>;

/**
 * avsc's type for a schema, but for bigint longs and int maps. Must be called for every type avsc
 * builds (its typeHook), nested ones included.
 */
function hookType(schema: unknown, opts: ForSchemaOptions): avro.Type | undefined {
  if (isLongSchema(schema)) return bigintLongType;
  const kind = buildingIntMaps.has(schema) ? undefined : intMapValue(schema);
  if (kind === undefined) return undefined;
  buildingIntMaps.add(schema);
  let plain: avro.Type;
  try {
    plain = avro.Type.forSchema(schema as avro.Schema, opts);
  } finally {
    buildingIntMaps.delete(schema);
  }
  // avsc freezes its types: the reader goes on an object derived from it (writing stays avsc's, from
  // arrays of key/value records).
  return Object.freeze(Object.create(plain, { _read: { value: intMapReader(kind) } })) as avro.Type;
}

/**
 * Parses a raw schema into an avsc type whose longs are bigints. Iceberg's int maps (arrays of
 * `{key: int, value: long | bytes}` records) decode as `Map<number, bigint | Uint8Array>` and are
 * written from arrays of `{key, value}` records.
 * @throws Error from avsc on an invalid schema
 */
export function createAvroType(schema: AvroSchema): avro.Type {
  return avro.Type.forSchema(schema as avro.Schema, {
    // A registry entry for `long` covers only the bare name: avsc builds `{"type": "long", "logicalType":
    // "timestamp-micros"}` with its own number-based LongType. The hook catches both spellings.
    typeHook: hookType,
    registry: { long: bigintLongType },
  });
}

/** Compiled types by their schema's JSON text; the oldest goes first once full. */
const compiled = new Map<string, avro.Type>();
const MAX_COMPILED = 64;
/** A schema this long is compiled each time rather than held (a hostile header could be megabytes). */
const MAX_CACHED_SCHEMA_CHARS = 256 * 1024;

/**
 * The avsc type of a schema, compiled once per distinct schema text (avsc generates reader and writer
 * code for every type it builds, which costs far more than a manifest's records). A built type is never
 * changed, and each compilation still gets a registry of its own: two schemas naming a record alike but
 * with other fields have other texts, so other types.
 * @param json the schema's JSON text: the key (`JSON.stringify(schema)` when not given)
 * @throws Error from avsc on an invalid schema (not cached)
 */
export function avroTypeOf(schema: AvroSchema, json: string = JSON.stringify(schema)): avro.Type {
  const hit = compiled.get(json);
  if (hit !== undefined) return hit;
  const type = createAvroType(schema);
  if (json.length <= MAX_CACHED_SCHEMA_CHARS) {
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(json, type);
  }
  return type;
}
