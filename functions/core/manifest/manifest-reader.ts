/**
 * Reads manifests: the header (table schema and partition spec the manifest was written with) and
 * the entries, with the v2 and v3 inheritance rules applied so callers see final values.
 */
import { ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { partitionType } from '../spec/partition-type.js';
import type { ManifestEntry, ManifestFile, PartitionField, PartitionSpec, Schema } from '../spec/types.js';
import { type AvroContainer, decodeAvroContainer } from './avro-container.js';
import type { AvroComplexSchema, AvroSchema } from './avro-type.js';
import { fromAvroEntry } from './manifest-entry-codec.js';
import { type PartitionAvroField, resolvePartitionFields } from './partition-avro.js';

export interface ManifestHeader {
  schema: Schema;
  spec: PartitionSpec;
  content: 'data' | 'deletes';
  formatVersion: number;
  /** Every header key, `avro.schema` and `avro.codec` included. */
  metadata: Record<string, string>;
}

function parseJson(metadata: Record<string, string>, key: string, location: string): unknown {
  const text = metadata[key];
  if (text === undefined) throw new ValidationError(`manifest ${location} has no '${key}' in its header`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ValidationError(`manifest ${location} has malformed '${key}' JSON`, { cause: error });
  }
}

function parseHeader(metadata: Record<string, string>, location: string): ManifestHeader {
  const schema = parseJson(metadata, 'schema', location) as Schema;
  // Older writers leave the schema id out of the schema JSON; the header key carries it.
  if (schema['schema-id'] === undefined) schema['schema-id'] = Number(metadata['schema-id'] ?? 0);
  const fields = parseJson(metadata, 'partition-spec', location);
  if (!Array.isArray(fields))
    throw new ValidationError(`manifest ${location} has a malformed partition-spec`);
  const content = metadata.content ?? 'data';
  if (content !== 'data' && content !== 'deletes') {
    throw new ValidationError(`manifest ${location} has unknown content '${content}'`);
  }
  return {
    schema,
    spec: { 'spec-id': Number(metadata['partition-spec-id'] ?? 0), fields: fields as PartitionField[] },
    content,
    formatVersion: Number(metadata['format-version'] ?? 1),
    metadata,
  };
}

async function readContainer(io: FileIO, location: string): Promise<AvroContainer> {
  const bytes = await io.read(location);
  try {
    return decodeAvroContainer(bytes);
  } catch (error) {
    if (error instanceof ValidationError) {
      throw new ValidationError(`cannot read manifest ${location}: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

/**
 * Reads a manifest's header.
 * @throws NotFoundError (from io) when absent; ValidationError when it is not a readable manifest
 */
export async function readManifestHeader(io: FileIO, location: string): Promise<ManifestHeader> {
  const { metadata } = await readContainer(io, location);
  return parseHeader(metadata, location);
}

function recordFields(schema: AvroSchema): AvroComplexSchema['fields'] {
  if (typeof schema === 'object' && !Array.isArray(schema) && schema.type === 'record') return schema.fields;
  return undefined;
}

/** The writer's `data_file.partition` record schema. */
function findPartitionRecord(entrySchema: AvroSchema, location: string): AvroComplexSchema {
  const dataFile = recordFields(entrySchema)?.find((f) => f.name === 'data_file');
  const partition = dataFile && recordFields(dataFile.type)?.find((f) => f.name === 'partition');
  const record = partition?.type;
  if (!record || typeof record !== 'object' || Array.isArray(record) || record.type !== 'record') {
    throw new ValidationError(`manifest ${location} has no data_file.partition record in its Avro schema`);
  }
  return record;
}

/**
 * Reads a manifest's entries and applies inheritance from its manifest-list entry: a null snapshot_id
 * becomes `added_snapshot_id`; a null sequence_number / file_sequence_number becomes the manifest's
 * `sequence_number` for ADDED entries (and for every entry when that is 0, i.e. a v1 manifest), as
 * Iceberg Java's InheritableMetadata does. `data_file.spec_id` is the manifest's `partition_spec_id`.
 * Partition values come back in the `Value` representation (long → bigint, date → day number,
 * uuid → string, decimal → unscaled bigint, bytes → Uint8Array).
 * @throws NotFoundError (from io) when absent; ValidationError when it is not a readable manifest
 */
export async function readManifestEntries(io: FileIO, manifest: ManifestFile): Promise<ManifestEntry[]> {
  const location = manifest.manifest_path;
  const container = await readContainer(io, location);
  const header = parseHeader(container.metadata, location);
  const fields: PartitionAvroField[] = resolvePartitionFields(
    partitionType(header.spec, header.schema),
    findPartitionRecord(container.schema, location),
  );
  const inheritAll = manifest.sequence_number === 0n;
  const entries = container.records.map((record) => {
    const entry = fromAvroEntry(record as Record<string, unknown>, fields, manifest.partition_spec_id);
    const inherits = inheritAll || entry.status === 1;
    return {
      ...entry,
      snapshot_id: entry.snapshot_id ?? manifest.added_snapshot_id,
      sequence_number: entry.sequence_number ?? (inherits ? manifest.sequence_number : null),
      file_sequence_number: entry.file_sequence_number ?? (inherits ? manifest.sequence_number : null),
    };
  });
  inheritFirstRowIds(entries, manifest);
  return entries;
}

/**
 * v3 first-row-id inheritance (spec, "First Row ID Inheritance"): a data file with a null first_row_id
 * takes the manifest's first_row_id plus the record counts of the data files before it that were null
 * too. Nothing is assigned when the manifest has none (written before the table's upgrade to v3: its
 * rows have no row ids); delete files never have one.
 */
function inheritFirstRowIds(entries: ManifestEntry[], manifest: ManifestFile): void {
  const start = manifest.first_row_id;
  if (start === null || start === undefined || manifest.content !== 0) return;
  let next = start;
  for (const entry of entries) {
    const file = entry.data_file;
    if (file.content !== 0 || (file.first_row_id !== null && file.first_row_id !== undefined)) continue;
    entry.data_file = { ...file, first_row_id: next };
    next += file.record_count;
  }
}
