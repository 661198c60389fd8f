/**
 * Scans of a format-version 3 table with deletion vectors, built here as another engine would leave it:
 * data files written by pyarrow (test/fixtures/v3), v3 manifests through floe's manifest writer, and
 * Puffin files of `deletion-vector-v1` blobs (floe's writer, and one blob of Iceberg Java's golden
 * files). The spec's rules: a DV deletes its positions from the one data file it names, when that
 * file's data sequence number is ≤ the DV's; position delete files of a file with a DV are ignored (the
 * DV replaced them); two live DVs for one data file are corrupt metadata.
 */
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { writePuffin } from '../../../functions/core/data/puffin/puffin-writer.js';
import { CorruptDeletionVectorError } from '../../../functions/core/deletes/deletes-errors.js';
import { DeletionVector } from '../../../functions/core/deletes/deletion-vector.js';
import { writeDeletionVectorFile } from '../../../functions/core/deletes/deletion-vector-file.js';
import { ValidationError } from '../../../functions/core/errors.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import { writeManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { writeManifest } from '../../../functions/core/manifest/manifest-writer.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import {
  newTableMetadata,
  parseTableMetadata,
  serializeTableMetadata,
} from '../../../functions/core/spec/metadata.js';
import type {
  DataFile,
  ManifestEntry,
  ManifestFile,
  Schema,
  Snapshot,
  StructType,
} from '../../../functions/core/spec/types.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamp_ns' },
  ],
};
const ID_ONLY: StructType = { type: 'struct', fields: [SCHEMA.fields[0]] };
const POSITION_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 2147483546, name: 'file_path', required: true, type: 'string' },
    { id: 2147483545, name: 'pos', required: true, type: 'long' },
  ],
};
/** Java's blob of positions 1, 3, 5, 7, 9 (test/fixtures/deletes/README.md). */
const GOLDEN = readFileSync(
  new URL('../../fixtures/deletes/small-alternating-values-position-index.bin', import.meta.url),
);

const added = (file: DataFile): ManifestEntry => ({
  status: 1,
  snapshot_id: null,
  sequence_number: null,
  file_sequence_number: null,
  data_file: file,
});

const vectorOf = (...positions: (number | bigint)[]) => {
  const vector = new DeletionVector();
  vector.addAll(positions);
  return vector;
};

describe('scanning a v3 table with deletion vectors', () => {
  const io = new LocalFileIO();
  let root: string;
  let count = 0;
  /** Two data files of ids 1-5 each (positions 0-4), and a manifest adding them. */
  let a: DataFile;
  let b: DataFile;

  const dataFile = async (name: string): Promise<DataFile> => {
    const location = join(root, 'data', `${name}.parquet`);
    await copyFile(new URL('../../fixtures/v3/timestamp-ns.parquet', import.meta.url), location);
    const size = BigInt((await stat(location)).size);
    return {
      content: 0,
      file_path: location,
      file_format: 'PARQUET',
      spec_id: 0,
      partition: {},
      record_count: 5n,
      file_size_in_bytes: size,
    };
  };

  const manifest = (content: 0 | 1, entries: ManifestEntry[]) =>
    writeManifest({
      io,
      location: `${root}/metadata/m${count++}.avro`,
      schema: SCHEMA,
      spec: { 'spec-id': 0, fields: [] },
      content,
      snapshotId: 1n,
      entries,
      codec: 'null',
      formatVersion: 3,
    });

  /** A v3 table whose snapshot i + 1 (sequence number i + 1) adds the manifests of `adds[i]`. */
  const tableOf = async (adds: ManifestFile[][]): Promise<LoadedTable> => {
    const snapshots: Snapshot[] = [];
    let carried: ManifestFile[] = [];
    let nextRowId = 0n;
    for (const [i, fresh] of adds.entries()) {
      const id = BigInt(i + 1);
      const first = nextRowId;
      const assigned = fresh.map((m) => {
        const firstRowId = m.content === 0 ? nextRowId : null;
        if (m.content === 0) nextRowId += m.added_rows_count + m.existing_rows_count;
        return { ...m, sequence_number: id, min_sequence_number: id, first_row_id: firstRowId };
      });
      carried = [...carried, ...assigned];
      const location = `${root}/metadata/snap-${id}-${count++}.avro`;
      await writeManifestList({
        io,
        location,
        snapshotId: id,
        parentSnapshotId: i === 0 ? null : id - 1n,
        sequenceNumber: id,
        manifests: carried,
        formatVersion: 3,
      });
      snapshots.push({
        'snapshot-id': id,
        ...(i === 0 ? {} : { 'parent-snapshot-id': id - 1n }),
        'sequence-number': i + 1,
        'timestamp-ms': 1_700_000_000_000 + i,
        'manifest-list': location,
        summary: { operation: i === 0 ? 'append' : 'delete' },
        'schema-id': 0,
        'first-row-id': Number(first),
        'added-rows': Number(nextRowId - first),
      });
    }
    const base = newTableMetadata({
      location: root,
      schema: SCHEMA,
      uuid: '0b7e1c55-4f64-4a43-9ee8-2b0c6b0cd6a2',
    });
    const last = snapshots[snapshots.length - 1]['snapshot-id'];
    const metadata = {
      ...base,
      'format-version': 3 as const,
      'next-row-id': Number(nextRowId),
      'last-sequence-number': snapshots.length,
      'current-snapshot-id': last,
      refs: { main: { 'snapshot-id': last, type: 'branch' as const } },
      snapshots,
    };
    return {
      identifier: { namespace: ['db'], name: 'dv' },
      metadata: parseTableMetadata(serializeTableMetadata(metadata)),
      metadataLocation: `${root}/metadata/v1.metadata.json`,
      io,
    };
  };

  /** A Puffin file of `vectors` on disk, and a manifest entry's data_file for each. */
  const puffinOf = async (vectors: [DataFile, DeletionVector][]): Promise<DataFile[]> => {
    const written = writeDeletionVectorFile(
      vectors.map(([file, vector]) => ({ referencedDataFile: file.file_path, vector })),
    );
    const location = `${root}/data/dv-${count++}.puffin`;
    await writeFile(location, written.bytes);
    return written.vectors.map((v) => ({
      content: 1,
      file_path: location,
      file_format: 'PUFFIN',
      spec_id: 0,
      partition: {},
      record_count: BigInt(v.cardinality),
      file_size_in_bytes: BigInt(written.bytes.byteLength),
      referenced_data_file: v.referencedDataFile,
      content_offset: BigInt(v.contentOffset),
      content_size_in_bytes: BigInt(v.contentSizeInBytes),
    }));
  };

  const positionDeletes = async (rows: [DataFile, number][]): Promise<DataFile> => {
    const [file] = await writeDataFiles(
      rows.map(([f, pos]) => ({ file_path: f.file_path, pos: BigInt(pos) })),
      {
        io,
        schema: POSITION_SCHEMA,
        specId: 0,
        partition: {},
        nextLocation: () => `${root}/data/pos-${count++}.parquet`,
      },
    );
    return { ...file, content: 1 };
  };

  const idsByFile = async (table: LoadedTable): Promise<bigint[]> => {
    const rows = await readScanRows(table, await planScan(table), { schema: ID_ONLY });
    return rows.map((r) => r.id as bigint);
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'floe-dv-scan-'));
    await mkdir(join(root, 'data'));
    await mkdir(join(root, 'metadata'));
    a = await dataFile('a');
    b = await dataFile('b');
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('deletes the positions each vector of one Puffin file names, from its own data file only', async () => {
    // Prepare: one Puffin file, two blobs; a position past 2^31 (no such row) is harmless
    const dvs = await puffinOf([
      [a, vectorOf(0, 2, 2n ** 31n + 7n)],
      [b, vectorOf(4)],
    ]);
    const table = await tableOf([
      [await manifest(0, [added(a), added(b)])],
      [await manifest(1, dvs.map(added))],
    ]);

    // Act
    const plan = await planScan(table);
    const ids = await idsByFile(table);

    // Assess
    expect(plan.tasks.map((t) => t.deletes.map((d) => d.file.content_offset))).toEqual([
      [dvs[0].content_offset],
      [dvs[1].content_offset],
    ]);
    expect(ids).toEqual([2n, 4n, 5n, 1n, 2n, 3n, 4n]);
  });

  it("applies a blob of Iceberg Java's golden files (positions 1, 3, 5, 7, 9)", async () => {
    // Prepare
    const written = writePuffin([
      {
        type: 'deletion-vector-v1',
        fields: [2147483645],
        'snapshot-id': -1,
        'sequence-number': -1,
        data: GOLDEN,
      },
    ]);
    const location = `${root}/data/java-${count++}.puffin`;
    await writeFile(location, written.bytes);
    const [blob] = written.metadata.blobs;
    const dv: DataFile = {
      content: 1,
      file_path: location,
      file_format: 'PUFFIN',
      spec_id: 0,
      partition: {},
      record_count: 5n,
      file_size_in_bytes: BigInt(written.bytes.byteLength),
      referenced_data_file: a.file_path,
      content_offset: BigInt(blob.offset),
      content_size_in_bytes: BigInt(blob.length),
    };
    const table = await tableOf([[await manifest(0, [added(a)])], [await manifest(1, [added(dv)])]]);

    // Act
    const ids = await idsByFile(table);

    // Assess
    expect(ids).toEqual([1n, 3n, 5n]);
  });

  it('ignores the position delete files of a data file that has a deletion vector (the DV replaced them)', async () => {
    // Prepare: an older position delete file deletes pos 4 of a; the DV (deleting 0 and 1) does not hold it
    const older = await positionDeletes([
      [a, 4],
      [b, 0],
    ]);
    const [dv] = await puffinOf([[a, vectorOf(0, 1)]]);
    const table = await tableOf([
      [await manifest(0, [added(a), added(b)])],
      [await manifest(1, [added(older)])],
      [await manifest(1, [added(dv)])],
    ]);

    // Act
    const plan = await planScan(table);
    const ids = await idsByFile(table);

    // Assess: b has no DV, so the position delete file still applies to it
    expect(plan.tasks.map((t) => t.deletes.map((d) => d.file.file_format))).toEqual([
      ['PUFFIN'],
      ['PARQUET'],
    ]);
    expect(ids).toEqual([3n, 4n, 5n, 2n, 3n, 4n, 5n]);
  });

  it('does not apply a deletion vector to a data file with a newer data sequence number', async () => {
    // Prepare: the DV (sequence 1) names b's path, b is added at sequence 2
    const [dv] = await puffinOf([[b, vectorOf(0, 1, 2)]]);
    const table = await tableOf([[await manifest(1, [added(dv)])], [await manifest(0, [added(b)])]]);

    // Act
    const plan = await planScan(table);
    const ids = await idsByFile(table);

    // Assess
    expect(plan.tasks[0].deletes).toEqual([]);
    expect(ids).toEqual([1n, 2n, 3n, 4n, 5n]);
  });

  it('refuses two live deletion vectors for one data file', async () => {
    // Prepare
    const [first] = await puffinOf([[a, vectorOf(0)]]);
    const [second] = await puffinOf([[a, vectorOf(0, 1)]]);
    const table = await tableOf([
      [await manifest(0, [added(a)])],
      [await manifest(1, [added(first)])],
      [await manifest(1, [added(second)])],
    ]);

    // Act
    const plan = planScan(table);

    // Assess
    await expect(plan).rejects.toBeInstanceOf(ValidationError);
    await expect(plan).rejects.toThrow(
      `data file ${a.file_path} has two live deletion vectors, ${first.file_path} at offset 4 (${first.content_size_in_bytes} bytes) and ${second.file_path} at offset 4`,
    );
  });

  it('refuses a deletion vector whose blob is damaged, with the codec error naming the file', async () => {
    // Prepare: flip one byte of the vector (inside the CRC's reach)
    const [dv] = await puffinOf([[a, vectorOf(0, 3)]]);
    const bytes = await readFile(dv.file_path);
    bytes[Number(dv.content_offset) + 10] ^= 0xff;
    await writeFile(dv.file_path, bytes);
    const table = await tableOf([[await manifest(0, [added(a)])], [await manifest(1, [added(dv)])]]);

    // Act
    const rows = readScanRows(table, await planScan(table), { schema: ID_ONLY });

    // Assess
    await expect(rows).rejects.toBeInstanceOf(CorruptDeletionVectorError);
    await expect(rows).rejects.toThrow(
      new RegExp(
        `^${dv.file_path} at offset 4 \\(\\d+ bytes\\), the deletion vector of ${a.file_path}: deletion vector: CRC-32 is`,
      ),
    );
  });

  it("refuses a deletion vector whose cardinality is not its entry's record_count", async () => {
    // Prepare
    const [dv] = await puffinOf([[a, vectorOf(0, 3)]]);
    const table = await tableOf([
      [await manifest(0, [added(a)])],
      [await manifest(1, [added({ ...dv, record_count: 3n })])],
    ]);

    // Act
    const rows = readScanRows(table, await planScan(table), { schema: ID_ONLY });

    // Assess
    await expect(rows).rejects.toBeInstanceOf(CorruptDeletionVectorError);
    await expect(rows).rejects.toThrow('holds 2 positions, its metadata says 3');
  });
});
