/**
 * avsc types built from raw Avro schemas, with Avro `long` as a JS bigint.
 *
 * Iceberg ids (snapshot ids, sequence numbers, sizes) are 64-bit and routinely exceed 2^53, so avsc's
 * default `long` (a JS number) would corrupt them. avsc mutates the registry and options it is given
 * (it records every named type it parses), so each `Type.forSchema` call gets fresh ones; the types
 * themselves are cached by schema text (`avroTypeOf`).
 */
import avro from 'avsc';
import {
  intMapType,
  intMapValue,
  isOptionalIntMap,
  optionalIntMapType,
  unionBranches,
} from './avro-int-map.js';
import { bigintLongType } from './avro-long.js';

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

function isLongSchema(schema: unknown): boolean {
  if (schema === 'long') return true;
  return typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'long';
}

/** The int-map schemas whose plain avsc type is being built (the hook declines them meanwhile). */
const building = new Set<unknown>();

type ForSchemaOptions = NonNullable<Parameters<typeof avro.Type.forSchema>[1]>;

/** avsc's own type for a schema the hook would otherwise take. */
function plainType(schema: unknown, opts: ForSchemaOptions): avro.Type {
  building.add(schema);
  try {
    return avro.Type.forSchema(schema as avro.Schema, opts);
  } finally {
    building.delete(schema);
  }
}

/** avsc's typeHook: called for every type avsc builds, nested ones included. */
function hookType(schema: unknown, opts: ForSchemaOptions): avro.Type | undefined {
  if (isLongSchema(schema)) return bigintLongType;
  if (building.has(schema)) return undefined;
  if (isOptionalIntMap(schema)) {
    const plain = plainType(schema, opts);
    return optionalIntMapType(plain, unionBranches(plain)[1]);
  }
  const kind = intMapValue(schema);
  return kind === undefined ? undefined : intMapType(plainType(schema, opts), kind);
}

/**
 * Parses a raw schema into an avsc type whose longs are bigints (avro-long.ts). Iceberg's int maps
 * (arrays of `{key: int, value: long | bytes}` records) decode as `Map<number, bigint | Uint8Array>` and
 * are written from such Maps or from arrays of `{key, value}` records (avro-int-map.ts).
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
