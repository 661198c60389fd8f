/**
 * A writer schema made ready to decode payloads: Avro through avsc, Protobuf through protobufjs,
 * JSON Schema as plain JSON (payloads are parsed, not validated against the schema: the mapper's
 * typed conversion refuses values that do not fit the table, and validating twice would only cost).
 */
import type protobuf from 'protobufjs';
import { RecordDecodeError } from '../errors.js';
import { parseJsonBytes } from '../records/parse-json.js';
import { compileAvroCodec } from './avro-codec.js';
import { compileProtobufSchema } from './protobuf-schema.js';
import { ProtobufJsonConverter } from './protobuf-to-json.js';
import type { RegistrySchemaType } from './schema-registry-client.js';
import { readConfluentMessageIndexes, readUnsignedVarint } from './wire-format.js';

/** The schema a payload was written with, for schema inference and evolution. */
export interface WriterSchema {
  type: RegistrySchemaType;
  /** AVRO and JSON: the parsed schema JSON; PROTOBUF: the `.proto` source. */
  schema: unknown;
  /** PROTOBUF: full name of the payload's message type (e.g. `acme.orders.Order`). */
  messageName?: string;
  /** Referenced schemas by reference name (Avro type name, Protobuf import path), parsed as `schema`. */
  references?: Record<string, unknown>;
}

export type Framing = 'confluent' | 'glue';

export interface CompiledSchema {
  type: RegistrySchemaType;
  /** @throws RecordDecodeError when the payload does not match */
  decode(payload: Uint8Array, framing: Framing, what: string): { value: unknown; writerSchema: WriterSchema };
}

export interface SchemaText {
  /** Reference name: the Avro full name, the Protobuf import path or the JSON Schema `$ref`. */
  name: string;
  schemaType: RegistrySchemaType;
  schema: string;
}

function parseReference(ref: SchemaText): unknown {
  if (ref.schemaType === 'PROTOBUF') return ref.schema;
  try {
    return JSON.parse(ref.schema);
  } catch {
    return ref.schema;
  }
}

function compileProtobuf(
  source: string,
  references: SchemaText[],
  referenced: { references?: Record<string, unknown> },
): CompiledSchema {
  const schema = compileProtobufSchema(source, new Map(references.map((r) => [r.name, r.schema])));
  const converter = new ProtobufJsonConverter();
  return {
    type: 'PROTOBUF',
    decode(payload, framing, what) {
      let type: protobuf.Type;
      let offset: number;
      try {
        if (framing === 'confluent') {
          let indexes: number[];
          [indexes, offset] = readConfluentMessageIndexes(payload, what);
          type = schema.typeByConfluentIndexes(indexes);
        } else {
          let index: number;
          [index, offset] = readUnsignedVarint(payload, 0, `${what} Protobuf message index`);
          type = schema.typeByGlueIndex(index);
        }
      } catch (error) {
        if (error instanceof RecordDecodeError) throw error;
        throw new RecordDecodeError(`${what}: ${(error as Error).message}`, 'decode');
      }
      let message: protobuf.Message;
      try {
        message = type.decode(payload.subarray(offset));
      } catch (error) {
        throw new RecordDecodeError(
          `${what} is not a valid ${type.fullName.slice(1)} Protobuf message: ${(error as Error).message}`,
          'decode',
        );
      }
      return {
        value: converter.forType(type)(message),
        writerSchema: {
          type: 'PROTOBUF',
          schema: source,
          messageName: type.fullName.slice(1),
          ...referenced,
        },
      };
    },
  };
}

/**
 * Compiles a schema; `references` come dependencies first.
 * @throws Error when the schema does not compile (the caller makes it a RecordDecodeError)
 */
export function compileSchema(
  schemaType: RegistrySchemaType,
  source: string,
  references: SchemaText[] = [],
): CompiledSchema {
  const refs = Object.fromEntries(references.map((r) => [r.name, parseReference(r)]));
  const referenced = references.length > 0 ? { references: refs } : {};
  if (schemaType === 'AVRO') {
    const codec = compileAvroCodec(
      source,
      references.map((r) => r.schema),
    );
    const writerSchema: WriterSchema = { type: 'AVRO', schema: codec.schema, ...referenced };
    return {
      type: 'AVRO',
      decode: (payload) => ({ value: codec.decode(payload), writerSchema }),
    };
  }
  if (schemaType === 'PROTOBUF') return compileProtobuf(source, references, referenced);
  const writerSchema: WriterSchema = { type: 'JSON', schema: JSON.parse(source) as unknown, ...referenced };
  return {
    type: 'JSON',
    decode: (payload, _framing, what) => ({ value: parseJsonBytes(payload, what), writerSchema }),
  };
}
