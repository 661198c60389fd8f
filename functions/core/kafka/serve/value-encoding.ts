/**
 * The record value kafka-serve serves for a row that kept no value bytes (`_kafka.value`): the row
 * encoded back as the frame its record was, through the registry schema id the row kept
 * (`_kafka.schema_id`, written for routes that read Confluent frames and keep the value's fields as their
 * columns), else exact JSON. Avro and Protobuf rows are encoded by the schema the registry gives for the
 * id (formats/avro-encoder.ts, protobuf-encoder.ts), JSON Schema rows as their exact JSON in the frame.
 *
 * One compiled encoder per (table schema, schema id), built on first use: the registry is asked once per
 * id (its client caches), so the per-row work is the conversion alone. A schema whose fields the table
 * does not hold as the schema has them (a route that renamed or coerced columns) serves its rows as JSON,
 * said once in the log; so does a row whose values cannot be given back exactly, and an id the registry
 * does not know. A registry that cannot be asked fails the read (retryable; nothing is cached), so a
 * client never gets a JSON value where a frame belongs because of an outage.
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import { formatIdentifier } from '../../catalog/catalog.js';
import { RecordDecodeError } from '../../errors.js';
import { compileAvroRowEncoder } from '../../formats/avro-encoder.js';
import { ShapeMismatch } from '../../formats/encode-values.js';
import { LruCache } from '../../formats/lru-cache.js';
import { compileProtobufRowEncoder } from '../../formats/protobuf-encoder.js';
import { resolveReferences } from '../../formats/registry-references.js';
import type { SchemaRegistryClient } from '../../formats/schema-registry-client.js';
import { hasKafkaSchemaId, KAFKA_FIELD } from '../../records/kafka-lineage.js';
import type { ValueEncoder } from './cold-records.js';
import { currentSchema } from '../../spec/metadata.js';
import type { Row, StructType, TableIdentifier } from '../../spec/types.js';

/** The payload after the 5-byte frame header, or undefined to serve the row as JSON. */
type FramedEncoder = (row: Row) => Buffer | undefined;

export interface RegistryEncodingOptions {
  /** The registry a served table's rows were decoded through, if any (from the table's routes). */
  registryFor: (table: TableIdentifier) => SchemaRegistryClient | undefined;
  /** The exact-JSON value of a row (the same as `floe replay` writes). */
  json: (table: LoadedTable) => (row: Row) => Buffer;
  /** Where "this schema is served as JSON, because…" goes, once per table schema and id. */
  log: (line: string) => void;
}

/**
 * Compiled encoders kept: (table schema, schema id) pairs. Bounded because the ids come from the table,
 * which anyone with write access to it could fill with a million distinct ones.
 */
const COMPILED_KEPT = 1_000;

export class RegistryValueEncoding {
  private readonly compiled = new LruCache<string, FramedEncoder | Promise<FramedEncoder>>(COMPILED_KEPT);

  constructor(private readonly options: RegistryEncodingOptions) {}

  /**
   * The value encoder of a table's rows at its current schema. Never throws; its promises reject with
   * TransientIOError / LakeError when the registry cannot be asked.
   */
  forTable(table: LoadedTable): ValueEncoder {
    const json = this.options.json(table);
    const schema = currentSchema(table.metadata);
    const registry = this.options.registryFor(table.identifier);
    if (!registry || !hasKafkaSchemaId(schema)) return json;
    const columns: StructType = {
      type: 'struct',
      fields: schema.fields.filter((f) => f.name !== KAFKA_FIELD),
    };
    const prefix = `${table.metadata['table-uuid']}\u0000${schema['schema-id']}\u0000`;
    const name = formatIdentifier(table.identifier);
    // This read's compiled encoders by id: the shared LRU is asked once per id, not once per row.
    const ready = new Map<number, FramedEncoder>();
    return (row, id) => {
      // A Confluent id is a non-negative int32; anything else in the column was not written by floe.
      if (id === null || !Number.isInteger(id) || id < 0) return json(row);
      const known = ready.get(id);
      if (known) return framed(id, known, json, row);
      const key = `${prefix}${id}`;
      let encoder = this.compiled.get(key);
      if (encoder === undefined) {
        encoder = this.compile(registry, id, columns, name, json).then(
          (done) => {
            this.compiled.set(key, done);
            return done;
          },
          (error: unknown) => {
            this.compiled.delete(key);
            throw error;
          },
        );
        this.compiled.set(key, encoder);
      }
      if (encoder instanceof Promise) return encoder.then((e) => framed(id, e, json, row));
      ready.set(id, encoder);
      return framed(id, encoder, json, row);
    };
  }

  private async compile(
    registry: SchemaRegistryClient,
    id: number,
    columns: StructType,
    table: string,
    json: (row: Row) => Buffer,
  ): Promise<FramedEncoder> {
    const asJson = (why: string): FramedEncoder => {
      this.options.log(`floe kafka-serve: ${table}: rows of schema id ${id} are served as JSON: ${why}`);
      return () => undefined;
    };
    let root: Awaited<ReturnType<SchemaRegistryClient['getSchemaById']>>;
    let references: Awaited<ReturnType<typeof resolveReferences>>;
    try {
      root = await registry.getSchemaById(id);
      references = await resolveReferences(registry, root.references);
    } catch (error) {
      // The registry's "no such schema" is an answer; anything else (an outage) fails the read.
      if (error instanceof RecordDecodeError) return asJson(error.message);
      throw error;
    }
    if (root.schemaType === 'JSON') return json;
    let encoder: FramedEncoder | ShapeMismatch;
    try {
      encoder =
        root.schemaType === 'AVRO'
          ? compileAvroRowEncoder(
              root.schema,
              references.map((r) => r.schema),
              columns,
            )
          : compileProtobufRowEncoder(
              root.schema,
              new Map(references.map((r) => [r.name, r.schema])),
              columns,
            );
    } catch (error) {
      return asJson(`the ${root.schemaType} schema does not compile: ${(error as Error).message}`);
    }
    if (encoder instanceof ShapeMismatch)
      return asJson(
        `the table does not hold the ${root.schemaType} schema's fields as they were: ${encoder.reason}`,
      );
    return encoder;
  }
}

/** `0x00 | id | payload`, or the row's JSON when it cannot be given back exactly. */
function framed(id: number, encoder: FramedEncoder, json: (row: Row) => Buffer, row: Row): Buffer {
  const payload = encoder(row);
  if (payload === undefined) return json(row);
  const out = Buffer.allocUnsafe(5 + payload.length);
  out[0] = 0;
  out.writeInt32BE(id, 1);
  payload.copy(out, 5);
  return out;
}
