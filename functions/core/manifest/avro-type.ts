/**
 * avsc types built from raw Avro schemas, with Avro `long` as a JS bigint.
 *
 * Iceberg ids (snapshot ids, sequence numbers, sizes) are 64-bit and routinely exceed 2^53, so avsc's
 * default `long` (a JS number) would corrupt them. avsc mutates the registry and options it is given
 * (it records every named type it parses), so each `Type.forSchema` call gets fresh ones.
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

/** Avro long ↔ bigint. avsc hands `fromBuffer` the 8-byte little-endian two's complement of the value. */
const bigintLongType = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer): bigint => buf.readBigInt64LE(0),
  toBuffer: (n: bigint): Buffer => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  fromJSON: (json: unknown): bigint => BigInt(json as string | number),
  toJSON: (n: bigint): string => n.toString(),
  isValid: (n: unknown): boolean => typeof n === 'bigint' && n >= INT64_MIN && n <= INT64_MAX,
  compare: (a: bigint, b: bigint): number => (a === b ? 0 : a < b ? -1 : 1),
});

function isLongSchema(schema: unknown): boolean {
  if (schema === 'long') return true;
  return typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'long';
}

/** Parses a raw schema into an avsc type whose longs are bigints. @throws Error from avsc on an invalid schema */
export function createAvroType(schema: AvroSchema): avro.Type {
  return avro.Type.forSchema(schema as Parameters<typeof avro.Type.forSchema>[0], {
    // A registry entry for `long` covers only the bare name: avsc builds `{"type": "long", "logicalType":
    // "timestamp-micros"}` with its own number-based LongType. The hook catches both spellings.
    typeHook: (s) => (isLongSchema(s) ? bigintLongType : undefined),
    registry: { long: bigintLongType },
  });
}
