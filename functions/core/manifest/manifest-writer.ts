/**
 * Writes a v2 manifest (Avro `manifest_entry` records) and describes it as a manifest-list entry.
 * A manifest is written once and reused across commit retries: ADDED entries keep null sequence
 * numbers, which readers inherit from the manifest list written for the attempt that lands.
 */
import { ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { partitionType } from '../spec/partition-type.js';
import type { ManifestContent, ManifestEntry, ManifestFile, PartitionSpec, Schema } from '../spec/types.js';
import { type AvroCodec, encodeAvroContainer } from './avro-container.js';
import { toAvroEntry } from './manifest-entry-codec.js';
import { UNASSIGNED_SEQUENCE_NUMBER } from './manifest-list.js';
import { type ManifestFormatVersion, manifestEntrySchema } from './manifest-schemas.js';
import { describePartitionFields, partitionAvroSchema } from './partition-avro.js';
import { summarizePartitions } from './partition-summary.js';

export interface WriteManifestOptions {
  io: FileIO;
  /** Where to write; a new, unique location (manifests are never overwritten in place). */
  location: string;
  /** The table schema the spec's source ids refer to (written to the header as `schema`). */
  schema: Schema;
  spec: PartitionSpec;
  /** 0 = data files, 1 = delete files. */
  content: ManifestContent;
  /** The snapshot this manifest is written for (its `added_snapshot_id`). */
  snapshotId: bigint;
  entries: ManifestEntry[];
  /** @default 'deflate' */
  codec?: 'deflate' | 'null';
  /**
   * 3 writes the v3 data_file fields (first_row_id, referenced_data_file, content_offset,
   * content_size_in_bytes) as the entries give them; floe's commits write 2. @default 2
   */
  formatVersion?: ManifestFormatVersion;
}

/**
 * Writes a manifest; returns its manifest_file entry.
 *
 * ADDED and DELETED entries with a null snapshot_id get `snapshotId` (as Java's wrapAppend/wrapDelete).
 * The returned `sequence_number` is -1n (assigned at commit: the manifest is added by this snapshot),
 * and so is `min_sequence_number` unless a live entry carries an explicit data sequence number; the
 * manifest-list writer replaces -1n with the commit's sequence number, as Iceberg Java does.
 * Partition summaries cover the partition tuples of every entry, DELETED ones included, as Java's
 * ManifestWriter does: readers that look for deleted files (conflict validation) prune with them too.
 *
 * @throws ValidationError when an entry does not belong in this manifest (file content vs manifest
 *   content, spec id, a null sequence number on an entry that cannot inherit it, a bad partition value)
 * @throws whatever `io.write` throws (TransientIOError, ...)
 */
export async function writeManifest(opts: WriteManifestOptions): Promise<ManifestFile> {
  const { io, location, schema, spec, content, snapshotId, entries } = opts;
  const fields = describePartitionFields(partitionType(spec, schema));
  const version = opts.formatVersion ?? 2;
  const avroSchema = manifestEntrySchema(partitionAvroSchema(fields), version);

  let addedFiles = 0;
  let existingFiles = 0;
  let deletedFiles = 0;
  let addedRows = 0n;
  let existingRows = 0n;
  let deletedRows = 0n;
  let minSequenceNumber: bigint | null = null;
  const records = entries.map((given, index) => {
    const entry = prepareEntry(given, opts, index);
    const rows = entry.data_file.record_count;
    if (entry.status === 1) {
      addedFiles++;
      addedRows += rows;
    } else if (entry.status === 0) {
      existingFiles++;
      existingRows += rows;
    } else {
      deletedFiles++;
      deletedRows += rows;
    }
    const seq = entry.sequence_number;
    if (entry.status !== 2 && seq !== null && (minSequenceNumber === null || seq < minSequenceNumber)) {
      minSequenceNumber = seq;
    }
    return toAvroEntry(entry, fields);
  });

  const bytes = encodeAvroContainer({
    schema: avroSchema,
    records,
    codec: (opts.codec ?? 'deflate') satisfies AvroCodec,
    metadata: {
      schema: JSON.stringify(schema),
      'schema-id': String(schema['schema-id']),
      'partition-spec': JSON.stringify(spec.fields),
      'partition-spec-id': String(spec['spec-id']),
      'format-version': String(version),
      content: content === 0 ? 'data' : 'deletes',
    },
  });
  await io.write(location, bytes);

  return {
    manifest_path: location,
    manifest_length: BigInt(bytes.byteLength),
    partition_spec_id: spec['spec-id'],
    content,
    sequence_number: UNASSIGNED_SEQUENCE_NUMBER,
    min_sequence_number: minSequenceNumber ?? UNASSIGNED_SEQUENCE_NUMBER,
    added_snapshot_id: snapshotId,
    added_files_count: addedFiles,
    existing_files_count: existingFiles,
    deleted_files_count: deletedFiles,
    added_rows_count: addedRows,
    existing_rows_count: existingRows,
    deleted_rows_count: deletedRows,
    partitions: summarizePartitions(
      fields,
      entries.map((e) => e.data_file.partition),
    ),
    key_metadata: null,
  };
}

/** Validates one entry against the manifest and fills the snapshot id Java would. */
function prepareEntry(entry: ManifestEntry, opts: WriteManifestOptions, index: number): ManifestEntry {
  const fail = (why: string) =>
    new ValidationError(`manifest entry ${index} (${entry.data_file.file_path}): ${why}`);
  const { status, data_file: df } = entry;
  if (status !== 0 && status !== 1 && status !== 2) throw fail(`unknown status ${String(status)}`);
  const isDeleteFile = df.content === 1 || df.content === 2;
  if (df.content !== 0 && !isDeleteFile) throw fail(`unknown file content ${String(df.content)}`);
  if (isDeleteFile !== (opts.content === 1)) {
    throw fail(
      `a ${isDeleteFile ? 'delete' : 'data'} file cannot go in a ${opts.content === 1 ? 'delete' : 'data'} manifest`,
    );
  }
  if (df.spec_id !== opts.spec['spec-id']) {
    throw fail(`written with spec ${df.spec_id}, but the manifest uses spec ${opts.spec['spec-id']}`);
  }
  let snapshotId = entry.snapshot_id;
  if (snapshotId === null) {
    if (status === 0) throw fail('an EXISTING entry needs the snapshot id that added its file');
    snapshotId = opts.snapshotId;
  }
  // Null sequence numbers are inherited from this manifest's list entry, i.e. this commit: only an
  // entry this snapshot adds may have them (Java's V2Metadata checks the same).
  if (entry.sequence_number === null && status !== 1) {
    throw fail('only ADDED entries may leave sequence_number null (to inherit it)');
  }
  if (
    (entry.sequence_number === null || entry.file_sequence_number === null) &&
    snapshotId !== opts.snapshotId
  ) {
    throw fail(
      `a null sequence number would be inherited from snapshot ${opts.snapshotId}, not ${snapshotId}`,
    );
  }
  return snapshotId === entry.snapshot_id ? entry : { ...entry, snapshot_id: snapshotId };
}
