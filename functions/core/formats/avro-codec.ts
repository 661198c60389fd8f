/**
 * Avro binary payloads → JSON-like values, by the writer's schema (plus the schemas it references).
 * Values: records → plain objects, arrays → arrays, maps → objects, unions → the branch's value,
 * enums → the symbol, bytes and fixed → base64 text, float/double → numbers (NaN/±Infinity as the
 * strings json-to-value reads), long and logical types as avro-logical-types.ts says.
 */
import avro from 'avsc';
import { RecordDecodeError } from '../errors.js';
import { AVRO_LOGICAL_TYPES, avroLongHook } from './avro-logical-types.js';
import { jsonDouble, setOwn, toBase64 } from './value-text.js';

export interface AvroCodec {
  /** @throws RecordDecodeError when the payload does not match the schema */
  decode(payload: Uint8Array): unknown;
  /** The writer schema as parsed JSON. */
  readonly schema: unknown;
}

type Convert = (value: unknown) => unknown;

const identity: Convert = (v) => v;

/** Builds the value converter of a type once; recursive schemas reuse the converter being built. */
function converterFor(type: avro.Type, memo: Map<avro.Type, Convert>): Convert {
  const known = memo.get(type);
  if (known) return known;
  let impl: Convert = identity;
  const convert: Convert = (v) => impl(v);
  memo.set(type, convert);
  impl = buildConverter(type, memo);
  return convert;
}

function buildConverter(type: avro.Type, memo: Map<avro.Type, Convert>): Convert {
  const name = type.typeName;
  // Logical and long types already produced their final value while decoding.
  if (name.startsWith('logical:') || name === 'abstract:long') return identity;
  switch (name) {
    case 'float':
    case 'double':
      return (v) => jsonDouble(v as number);
    case 'bytes':
    case 'fixed':
      return (v) => toBase64(v as Buffer);
    case 'array': {
      const items = converterFor((type as avro.types.ArrayType).itemsType, memo);
      return (v) => (v as unknown[]).map(items);
    }
    case 'map': {
      const values = converterFor((type as avro.types.MapType).valuesType, memo);
      return (v) => {
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v as Record<string, unknown>)) setOwn(out, k, values(x));
        return out;
      };
    }
    case 'record':
    case 'error': {
      const fields = (type as avro.types.RecordType).fields.map(
        (f) => [f.name, converterFor(f.type, memo)] as const,
      );
      return (v) => {
        const record = v as Record<string, unknown>;
        const out: Record<string, unknown> = {};
        for (const [fieldName, convert] of fields) setOwn(out, fieldName, convert(record[fieldName]));
        return out;
      };
    }
    case 'union:wrapped': {
      const branches = new Map<string, Convert>();
      for (const branch of (type as avro.types.WrappedUnionType).types) {
        branches.set(branch.branchName ?? '', converterFor(branch, memo));
      }
      return (v) => {
        if (v === null) return null;
        const [branch, inner] = Object.entries(v as Record<string, unknown>)[0];
        return (branches.get(branch) ?? identity)(inner);
      };
    }
    default:
      // null, boolean, int, string, enum (its symbol)
      return identity;
  }
}

function parseSchemaText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // A bare primitive name ("string") is a valid Avro schema too.
    return text.trim();
  }
}

/**
 * Compiles a writer schema. `references` are the schemas it names, dependencies first (the order
 * the registry's references resolve in); they share one namespace registry with the main schema.
 * @throws Error (from avsc) when a schema is invalid
 */
export function compileAvroCodec(schemaText: string, references: string[] = []): AvroCodec {
  const registry: Record<string, avro.Type> = {};
  const forSchema = (schema: unknown): avro.Type =>
    avro.Type.forSchema(schema as avro.Schema, {
      registry,
      typeHook: (s) => avroLongHook(s),
      logicalTypes: AVRO_LOGICAL_TYPES,
      wrapUnions: 'always',
      omitRecordMethods: true,
    });
  for (const ref of references) forSchema(parseSchemaText(ref));
  const schema = parseSchemaText(schemaText);
  const type = forSchema(schema);
  const convert = converterFor(type, new Map());
  return {
    schema,
    decode(payload) {
      let value: unknown;
      try {
        value = type.fromBuffer(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength));
      } catch (error) {
        throw new RecordDecodeError(
          `Avro payload does not match its writer schema: ${(error as Error).message}`,
          'decode',
        );
      }
      return convert(value);
    },
  };
}
