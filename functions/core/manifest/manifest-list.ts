/**
 * Writes and reads v2 manifest lists (Avro `manifest_file` records). A new list is written for every
 * commit attempt; it is where "assigned at commit" (-1n) sequence numbers become real ones.
 */
import { ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import type { FieldSummary, ManifestContent, ManifestFile } from '../spec/types.js';
import { decodeAvroContainer, encodeAvroContainer } from './avro-container.js';
import { type ManifestFormatVersion, manifestFileSchema } from './manifest-schemas.js';

/** Iceberg Java's ManifestWriter.UNASSIGNED_SEQ: "the sequence number of the commit that adds this". */
export const UNASSIGNED_SEQUENCE_NUMBER = -1n;

export interface WriteManifestListOptions {
  io: FileIO;
  location: string;
  snapshotId: bigint;
  parentSnapshotId: bigint | null;
  /** The sequence number this commit attempt assigns. */
  sequenceNumber: bigint;
  manifests: ManifestFile[];
  /** @default 'deflate' */
  codec?: 'deflate' | 'null';
  /** 3 writes each manifest's first_row_id (520) as given; floe's commits write 2. @default 2 */
  formatVersion?: ManifestFormatVersion;
}

type AvroRecord = Record<string, unknown>;

/**
 * The manifest list each FileIO last had written, by location. The next commit of a warm function
 * starts from that list (its snapshot is the parent), so it is decoded from memory instead of read back:
 * one GET less per commit. A manifest list is never rewritten — its name holds its snapshot id and the
 * commit attempt's UUID — so the bytes are the stored file's. Per FileIO, so a fresh catalog (a new
 * process, another storage) reads from storage.
 */
const lastWritten = new WeakMap<FileIO, { location: string; bytes: Uint8Array }>();

const asBuffer = (bytes: Uint8Array | null | undefined): Buffer | null =>
  bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : null;

function toAvroManifestFile(m: ManifestFile, opts: WriteManifestListOptions): AvroRecord {
  const assign = (seq: bigint, what: string): bigint => {
    if (seq !== UNASSIGNED_SEQUENCE_NUMBER) return seq;
    // Only a manifest written for this very commit may take its sequence number (Java checks the same).
    if (m.added_snapshot_id !== opts.snapshotId) {
      throw new ValidationError(
        `manifest ${m.manifest_path} from snapshot ${m.added_snapshot_id} has an unassigned ${what}`,
      );
    }
    return opts.sequenceNumber;
  };
  return {
    manifest_path: m.manifest_path,
    manifest_length: m.manifest_length,
    partition_spec_id: m.partition_spec_id,
    content: m.content,
    sequence_number: assign(m.sequence_number, 'sequence_number'),
    min_sequence_number: assign(m.min_sequence_number, 'min_sequence_number'),
    added_snapshot_id: m.added_snapshot_id,
    added_files_count: m.added_files_count,
    existing_files_count: m.existing_files_count,
    deleted_files_count: m.deleted_files_count,
    added_rows_count: m.added_rows_count,
    existing_rows_count: m.existing_rows_count,
    deleted_rows_count: m.deleted_rows_count,
    partitions:
      m.partitions?.map((s) => ({
        contains_null: s.contains_null,
        contains_nan: s.contains_nan,
        lower_bound: asBuffer(s.lower_bound),
        upper_bound: asBuffer(s.upper_bound),
      })) ?? null,
    key_metadata: asBuffer(m.key_metadata),
    first_row_id: m.first_row_id ?? null,
  };
}

/**
 * Writes a manifest list for one commit attempt, replacing -1n (unassigned) sequence numbers of the
 * manifests this snapshot added with `sequenceNumber`. Header: snapshot-id, parent-snapshot-id
 * ("null" when there is none, as Java writes it), sequence-number, format-version "2".
 * @throws ValidationError when a manifest from another snapshot has an unassigned sequence number, or a
 *   field does not fit its Avro type
 * @throws whatever `io.write` throws
 */
export async function writeManifestList(opts: WriteManifestListOptions): Promise<void> {
  const bytes = encodeAvroContainer({
    schema: manifestFileSchema(opts.formatVersion ?? 2),
    records: opts.manifests.map((m) => toAvroManifestFile(m, opts)),
    codec: opts.codec ?? 'deflate',
    metadata: {
      'snapshot-id': String(opts.snapshotId),
      'parent-snapshot-id': String(opts.parentSnapshotId),
      'sequence-number': String(opts.sequenceNumber),
      'format-version': String(opts.formatVersion ?? 2),
    },
  });
  await opts.io.write(opts.location, bytes);
  lastWritten.set(opts.io, { location: opts.location, bytes });
}

const copyBytes = (value: unknown): Uint8Array | null =>
  value === null || value === undefined ? null : new Uint8Array(value as Uint8Array);

function toBigint(value: unknown, fallback: bigint): bigint {
  if (value === null || value === undefined) return fallback;
  return typeof value === 'bigint' ? value : BigInt(value as number);
}

function fromAvroManifestFile(r: AvroRecord, location: string): ManifestFile {
  if (typeof r.manifest_path !== 'string') {
    throw new ValidationError(`manifest list ${location} has an entry without manifest_path`);
  }
  // v1 lists name the counts *_data_files_count and may leave them (and the v2 fields) out; the spec
  // says to read missing sequence numbers as 0. Missing counts read as 0 for want of a better number.
  const count = (v2: string, v1: string) => Number(r[v2] ?? r[v1] ?? 0);
  const partitions = r.partitions as AvroRecord[] | null | undefined;
  return {
    manifest_path: r.manifest_path,
    manifest_length: toBigint(r.manifest_length, 0n),
    partition_spec_id: Number(r.partition_spec_id ?? 0),
    content: Number(r.content ?? 0) as ManifestContent,
    sequence_number: toBigint(r.sequence_number, 0n),
    min_sequence_number: toBigint(r.min_sequence_number, 0n),
    added_snapshot_id: toBigint(r.added_snapshot_id, 0n),
    added_files_count: count('added_files_count', 'added_data_files_count'),
    existing_files_count: count('existing_files_count', 'existing_data_files_count'),
    deleted_files_count: count('deleted_files_count', 'deleted_data_files_count'),
    added_rows_count: toBigint(r.added_rows_count, 0n),
    existing_rows_count: toBigint(r.existing_rows_count, 0n),
    deleted_rows_count: toBigint(r.deleted_rows_count, 0n),
    partitions:
      partitions?.map(
        (s): FieldSummary => ({
          contains_null: Boolean(s.contains_null),
          contains_nan:
            s.contains_nan === null || s.contains_nan === undefined ? null : Boolean(s.contains_nan),
          lower_bound: copyBytes(s.lower_bound),
          upper_bound: copyBytes(s.upper_bound),
        }),
      ) ?? null,
    key_metadata: copyBytes(r.key_metadata),
    ...firstRowId(r, location),
  };
}

/** A v3 list's first_row_id (absent in v2, null for manifests from before an upgrade). @throws ValidationError */
function firstRowId(r: AvroRecord, location: string): Pick<ManifestFile, 'first_row_id'> | undefined {
  if (r.first_row_id === null || r.first_row_id === undefined) return undefined;
  const id = toBigint(r.first_row_id, 0n);
  if (id < 0n) {
    throw new ValidationError(`manifest list ${location}: ${String(r.manifest_path)} has first_row_id ${id}`);
  }
  return { first_row_id: id };
}

/**
 * Reads a manifest list.
 * @throws NotFoundError (from io) when absent; ValidationError when it is not a readable manifest list
 */
export async function readManifestList(io: FileIO, location: string): Promise<ManifestFile[]> {
  const written = lastWritten.get(io);
  const bytes = written?.location === location ? written.bytes : await io.read(location);
  let records: unknown[];
  try {
    records = decodeAvroContainer(bytes).records;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(`cannot read manifest list ${location}: ${error.message}`, { cause: error });
  }
  return records.map((r) => fromAvroManifestFile(r as AvroRecord, location));
}
