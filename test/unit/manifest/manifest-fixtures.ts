/** Shared inputs for the manifest tests: a table touching every partition-capable type, and entries. */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import type {
  DataFile,
  ManifestEntry,
  ManifestEntryStatus,
  PartitionSpec,
  PartitionValues,
  Schema,
} from '../../../functions/core/spec/types.js';

/** A table schema with one column of every primitive type a partition can be built from. */
export const allTypesSchema: Schema = {
  type: 'struct',
  'schema-id': 3,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'amount', required: false, type: 'decimal(10, 2)' },
    { id: 4, name: 'event_date', required: false, type: 'date' },
    { id: 5, name: 'name', required: false, type: 'string' },
    { id: 6, name: 'flag', required: false, type: 'boolean' },
    { id: 7, name: 'score', required: false, type: 'double' },
    { id: 8, name: 'ratio', required: false, type: 'float' },
    { id: 9, name: 'uid', required: false, type: 'uuid' },
    { id: 10, name: 'blob', required: false, type: 'binary' },
    { id: 11, name: 'code', required: false, type: 'fixed[3]' },
    { id: 12, name: 't', required: false, type: 'time' },
    { id: 13, name: 'local_ts', required: false, type: 'timestamp' },
    { id: 14, name: 'small', required: false, type: 'int' },
    { id: 15, name: 'big_amount', required: false, type: 'decimal(38, 0)' },
    { id: 16, name: 'fee', required: false, type: 'decimal(10,2)' },
    {
      id: 17,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 18, element: 'string', 'element-required': false },
    },
  ],
};

export const allTypesSpec: PartitionSpec = {
  'spec-id': 2,
  fields: [
    { 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' },
    { 'source-id': 3, 'field-id': 1001, name: 'amount', transform: 'identity' },
    { 'source-id': 1, 'field-id': 1002, name: 'id_bucket', transform: 'bucket[16]' },
    { 'source-id': 4, 'field-id': 1003, name: 'event_date', transform: 'identity' },
    { 'source-id': 5, 'field-id': 1004, name: 'name_trunc', transform: 'truncate[4]' },
    { 'source-id': 6, 'field-id': 1005, name: 'flag', transform: 'identity' },
    { 'source-id': 7, 'field-id': 1006, name: 'score', transform: 'identity' },
    { 'source-id': 8, 'field-id': 1007, name: 'ratio', transform: 'identity' },
    { 'source-id': 9, 'field-id': 1008, name: 'uid', transform: 'identity' },
    { 'source-id': 10, 'field-id': 1009, name: 'blob', transform: 'identity' },
    { 'source-id': 11, 'field-id': 1010, name: 'code', transform: 'identity' },
    { 'source-id': 12, 'field-id': 1011, name: 't', transform: 'identity' },
    { 'source-id': 13, 'field-id': 1012, name: 'local_ts', transform: 'identity' },
    // Not a valid Avro name: written sanitised, with `iceberg-field-name`.
    { 'source-id': 2, 'field-id': 1013, name: 'ts-hour', transform: 'hour' },
    { 'source-id': 1, 'field-id': 1014, name: 'id', transform: 'identity' },
    { 'source-id': 15, 'field-id': 1015, name: 'big_amount', transform: 'identity' },
    // A second decimal(10,2): its Avro fixed type must be referenced by name, not redefined.
    { 'source-id': 16, 'field-id': 1016, name: 'fee', transform: 'identity' },
  ],
};

/** Unpartitioned table with plain types, for readers that support no Avro fixed (icebird). */
export const simpleSchema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'name', required: false, type: 'string' },
  ],
};

export const simpleSpec: PartitionSpec = {
  'spec-id': 0,
  fields: [
    { 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' },
    { 'source-id': 3, 'field-id': 1001, name: 'name', transform: 'identity' },
  ],
};

export const BEYOND_2_53 = 2n ** 53n + 12_345n;

/** A partition tuple for `allTypesSpec`, different for every i. */
export function allTypesPartition(i: number): PartitionValues {
  return {
    ts_day: 19_000 + i,
    amount: BigInt(i * 137 - 5_000),
    id_bucket: i % 16,
    event_date: 18_000 - i,
    name_trunc: `n${i}`.slice(0, 4),
    flag: i % 2 === 0,
    score: i + 0.25,
    ratio: Math.fround(i / 8),
    uid: `0000${i.toString(16).padStart(4, '0')}-1111-4222-8333-444455556666`,
    blob: Uint8Array.of(i & 0xff, 0, 255),
    code: Uint8Array.of(1, 2, i & 0xff),
    t: BigInt(i) * 1_000_000n,
    local_ts: 1_700_000_000_000_000n + BigInt(i),
    'ts-hour': 456_000 + i,
    id: BEYOND_2_53 + BigInt(i),
    big_amount: -(10n ** 37n) + BigInt(i),
    fee: 99n,
  };
}

export function simplePartition(i: number): PartitionValues {
  return { ts_day: 19_000 + (i % 3), name: `name-${i % 5}` };
}

/** A DataFile with every optional field filled in. */
export function fullDataFile(i: number, partition: PartitionValues, specId: number): DataFile {
  return {
    content: 0,
    file_path: `s3://bucket/table/data/part-${i}.parquet`,
    file_format: 'PARQUET',
    spec_id: specId,
    partition,
    record_count: 1_000n + BigInt(i),
    file_size_in_bytes: BEYOND_2_53 + BigInt(i),
    column_sizes: new Map([
      [1, 4_000n + BigInt(i)],
      [2, BEYOND_2_53],
    ]),
    value_counts: new Map([
      [1, 1_000n],
      [2, 1_000n],
    ]),
    null_value_counts: new Map([
      [1, 0n],
      [2, BigInt(i)],
    ]),
    nan_value_counts: new Map([[7, 3n]]),
    lower_bounds: new Map([
      [1, Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0)],
      [5, new TextEncoder().encode('aardvark')],
    ]),
    upper_bounds: new Map([
      [1, Uint8Array.of(0xff, 0xff, 0, 0, 0, 0, 0, 0x7f)],
      [5, new TextEncoder().encode('zebra')],
    ]),
    key_metadata: Uint8Array.of(0xde, 0xad, i & 0xff),
    split_offsets: [4n, 1_048_576n, BEYOND_2_53],
    equality_ids: null,
    sort_order_id: 1,
  };
}

export function entry(
  status: ManifestEntryStatus,
  dataFile: DataFile,
  seq: { snapshot: bigint | null; data: bigint | null; file: bigint | null },
): ManifestEntry {
  return {
    status,
    snapshot_id: seq.snapshot,
    sequence_number: seq.data,
    file_sequence_number: seq.file,
    data_file: dataFile,
  };
}

/** A temp directory with a LocalFileIO; call `cleanup` in afterEach. */
export async function makeTempWarehouse(): Promise<{
  dir: string;
  io: LocalFileIO;
  cleanup: () => Promise<void>;
}> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-manifest-'));
  return { dir, io: new LocalFileIO(), cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
}
