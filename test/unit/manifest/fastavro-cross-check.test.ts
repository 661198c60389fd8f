/**
 * Reads floe's manifests and manifest lists with Python's fastavro, an Avro implementation no one here
 * wrote, and checks ids, logical types and values. Needs python3 with fastavro (`pip install fastavro`);
 * without it the suite is skipped with a visible message.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { writeManifest } from '../../../functions/core/manifest/manifest-writer.js';
import type { DataFile, ManifestFile } from '../../../functions/core/spec/types.js';
import {
  allTypesPartition,
  allTypesSchema,
  allTypesSpec,
  entry,
  fullDataFile,
  makeTempWarehouse,
} from './manifest-fixtures.js';

const hasFastavro = spawnSync('python3', ['-c', 'import fastavro'], { stdio: 'ignore' }).status === 0;
if (!hasFastavro) {
  console.warn('SKIPPED fastavro cross-check: python3 with fastavro is not installed (pip install fastavro)');
}

// Dumps a container as JSON: ints as strings (no 2^53 loss), bytes as "hex:..", logical types via
// fastavro's own conversions (dates, decimals, timestamps), plus every id attribute fastavro kept.
const DUMP = `
import sys, json, datetime, decimal, uuid, fastavro
def conv(v):
    if isinstance(v, bool) or v is None or isinstance(v, float) or isinstance(v, str): return v
    if isinstance(v, int): return str(v)
    if isinstance(v, (bytes, bytearray)): return 'hex:' + bytes(v).hex()
    if isinstance(v, (datetime.date, datetime.datetime, datetime.time)): return v.isoformat()
    if isinstance(v, (decimal.Decimal, uuid.UUID)): return str(v)
    if isinstance(v, dict): return {k: conv(x) for k, x in v.items()}
    if isinstance(v, list): return [conv(x) for x in v]
    raise TypeError(type(v).__name__)
ids = []
def walk(s):
    if isinstance(s, dict):
        for k in ('field-id', 'element-id'):
            if k in s: ids.append(s[k])
        for x in s.values(): walk(x)
    elif isinstance(s, list):
        for x in s: walk(x)
with open(sys.argv[1], 'rb') as f:
    r = fastavro.reader(f)
    records = [conv(x) for x in r]
    walk(r.writer_schema)
    print(json.dumps({'codec': r.codec, 'metadata': r.metadata, 'records': records, 'ids': sorted(set(ids))}))
`;

interface Dump {
  codec: string;
  metadata: Record<string, string>;
  records: Record<string, unknown>[];
  ids: number[];
}

function readWithFastavro(file: string): Dump {
  return JSON.parse(execFileSync('python3', ['-c', DUMP, file], { encoding: 'utf8' })) as Dump;
}

const hex = (bytes: Uint8Array) => `hex:${Buffer.from(bytes).toString('hex')}`;
const isoDate = (days: number) => new Date(days * 86_400_000).toISOString().slice(0, 10);
const fraction = (micros: bigint) => (micros === 0n ? '' : `.${micros.toString().padStart(6, '0')}`);
const isoTimestampUtc = (micros: bigint) =>
  `${new Date(Number(micros / 1_000_000n) * 1000).toISOString().slice(0, 19)}${fraction(micros % 1_000_000n)}+00:00`;
const isoTime = (micros: bigint) =>
  `${new Date(Number(micros / 1_000_000n) * 1000).toISOString().slice(11, 19)}${fraction(micros % 1_000_000n)}`;
function decimalString(unscaled: bigint, scale: number): string {
  const digits = (unscaled < 0n ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const body = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return unscaled < 0n ? `-${body}` : body;
}

/** A DataFile as the dump shows it. */
function pythonView(df: DataFile, partition: Record<string, unknown>) {
  const map = <V>(m: Map<number, V> | undefined, f: (v: V) => string) =>
    m ? [...m].map(([key, value]) => ({ key: String(key), value: f(value) })) : null;
  return {
    content: String(df.content),
    file_path: df.file_path,
    file_format: df.file_format,
    partition,
    record_count: String(df.record_count),
    file_size_in_bytes: String(df.file_size_in_bytes),
    column_sizes: map(df.column_sizes, String),
    value_counts: map(df.value_counts, String),
    null_value_counts: map(df.null_value_counts, String),
    nan_value_counts: map(df.nan_value_counts, String),
    lower_bounds: map(df.lower_bounds, hex),
    upper_bounds: map(df.upper_bounds, hex),
    key_metadata: df.key_metadata ? hex(df.key_metadata) : null,
    split_offsets: df.split_offsets?.map(String) ?? null,
    equality_ids: df.equality_ids?.map(String) ?? null,
    sort_order_id: df.sort_order_id == null ? null : String(df.sort_order_id),
  };
}

describe.skipIf(!hasFastavro)('fastavro reads what floe writes', () => {
  let warehouse: Awaited<ReturnType<typeof makeTempWarehouse>>;
  let manifest: ManifestFile;
  let dataFile: DataFile;
  const manifestLocation = () => path.join(warehouse.dir, 'manifest.avro');
  const listLocation = () => path.join(warehouse.dir, 'snap.avro');
  const SNAPSHOT = 2n ** 62n + 5n;

  beforeAll(async () => {
    warehouse = await makeTempWarehouse();
    dataFile = fullDataFile(3, allTypesPartition(3), allTypesSpec['spec-id']);
    manifest = await writeManifest({
      io: warehouse.io,
      location: manifestLocation(),
      schema: allTypesSchema,
      spec: allTypesSpec,
      content: 0,
      snapshotId: SNAPSHOT,
      entries: [entry(1, dataFile, { snapshot: null, data: null, file: null })],
    });
    await writeManifestList({
      io: warehouse.io,
      location: listLocation(),
      snapshotId: SNAPSHOT,
      parentSnapshotId: 1n,
      sequenceNumber: 2n ** 54n,
      manifests: [manifest],
      codec: 'null',
    });
  });
  afterAll(async () => {
    await warehouse?.cleanup();
  });

  it('a manifest: header keys, every field id, values and logical types', () => {
    // Act
    const dump = readWithFastavro(manifestLocation());
    // Assess
    expect(dump.codec).toBe('deflate');
    expect(dump.metadata).toMatchObject({ 'format-version': '2', content: 'data', 'partition-spec-id': '2' });
    expect(JSON.parse(dump.metadata.schema)).toEqual(allTypesSchema);
    const entryIds = [0, 1, 2, 3, 4];
    const dataFileIds = [
      100, 101, 102, 103, 104, 108, 109, 110, 125, 128, 131, 132, 133, 134, 135, 136, 137, 140,
    ];
    const mapIds = [117, 118, 119, 120, 121, 122, 126, 127, 129, 130, 138, 139];
    const partitionIds = allTypesSpec.fields.map((f) => f['field-id']);
    expect(dump.ids).toEqual([...entryIds, ...dataFileIds, ...mapIds, ...partitionIds].sort((a, b) => a - b));

    const [record] = dump.records;
    expect(record).toMatchObject({
      status: '1',
      snapshot_id: String(SNAPSHOT),
      sequence_number: null,
      file_sequence_number: null,
    });
    const p = allTypesPartition(3);
    const expectedPartition = {
      ts_day: isoDate(p.ts_day as number),
      amount: decimalString(p.amount as bigint, 2),
      id_bucket: String(p.id_bucket),
      event_date: isoDate(p.event_date as number),
      name_trunc: p.name_trunc,
      flag: p.flag,
      score: p.score,
      ratio: p.ratio,
      uid: hex(Buffer.from((p.uid as string).replace(/-/g, ''), 'hex')),
      blob: hex(p.blob as Uint8Array),
      code: hex(p.code as Uint8Array),
      t: isoTime(p.t as bigint),
      local_ts: isoTimestampUtc(p.local_ts as bigint),
      ts_x2Dhour: String(p['ts-hour']),
      id: String(p.id),
      big_amount: decimalString(p.big_amount as bigint, 0),
      fee: decimalString(p.fee as bigint, 2),
    };
    expect(record.data_file).toEqual(pythonView(dataFile, expectedPartition));
  });

  it('a manifest list: header keys, field ids 500–519 and values', () => {
    const dump = readWithFastavro(listLocation());
    expect(dump.codec).toBe('null');
    expect(dump.metadata).toMatchObject({
      'snapshot-id': String(SNAPSHOT),
      'parent-snapshot-id': '1',
      'sequence-number': String(2n ** 54n),
      'format-version': '2',
    });
    expect(dump.ids).toEqual([
      500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 511, 512, 513, 514, 515, 516, 517, 518, 519,
    ]);
    const [record] = dump.records;
    expect(record).toEqual({
      manifest_path: manifest.manifest_path,
      manifest_length: String(manifest.manifest_length),
      partition_spec_id: String(manifest.partition_spec_id),
      content: '0',
      sequence_number: String(2n ** 54n),
      min_sequence_number: String(2n ** 54n),
      added_snapshot_id: String(SNAPSHOT),
      added_files_count: '1',
      existing_files_count: '0',
      deleted_files_count: '0',
      added_rows_count: String(dataFile.record_count),
      existing_rows_count: '0',
      deleted_rows_count: '0',
      partitions: manifest.partitions?.map((s) => ({
        contains_null: s.contains_null,
        contains_nan: s.contains_nan,
        lower_bound: s.lower_bound ? hex(s.lower_bound) : null,
        upper_bound: s.upper_bound ? hex(s.upper_bound) : null,
      })),
      key_metadata: null,
    });
  });
});
