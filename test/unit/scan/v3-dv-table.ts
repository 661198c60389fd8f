/**
 * A format-version 3 table with deletion vectors, built on the local filesystem as another engine would
 * leave it: data files written by pyarrow (test/fixtures/v3, ids 1-5 at positions 0-4), v3 manifests and
 * manifest lists through floe's writers, Puffin files of `deletion-vector-v1` blobs through floe's
 * deletion vector writer, and Parquet position delete files.
 */
import { copyFile, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { DeletionVector } from '../../../functions/core/deletes/deletion-vector.js';
import { writeDeletionVectorFile } from '../../../functions/core/deletes/deletion-vector-file.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import { writeManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { writeManifest } from '../../../functions/core/manifest/manifest-writer.js';
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

export const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamp_ns' },
  ],
};
export const ID_ONLY: StructType = { type: 'struct', fields: [SCHEMA.fields[0]] };
const POSITION_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 2147483546, name: 'file_path', required: true, type: 'string' },
    { id: 2147483545, name: 'pos', required: true, type: 'long' },
  ],
};

export const added = (file: DataFile): ManifestEntry => ({
  status: 1,
  snapshot_id: null,
  sequence_number: null,
  file_sequence_number: null,
  data_file: file,
});

export const vectorOf = (...positions: (number | bigint)[]): DeletionVector => {
  const vector = new DeletionVector();
  vector.addAll(positions);
  return vector;
};

export type V3DvTable = Awaited<ReturnType<typeof v3DvTable>>;

/** A fresh table folder with two data files, `a` and `b`, and the helpers that build snapshots on them. */
export async function v3DvTable() {
  const io = new LocalFileIO();
  const root = await mkdtemp(join(tmpdir(), 'floe-dv-'));
  let count = 0;
  await mkdir(join(root, 'data'));
  await mkdir(join(root, 'metadata'));

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

  const a = await dataFile('a');
  const b = await dataFile('b');
  const cleanup = () => rm(root, { recursive: true, force: true });
  return { io, root, a, b, manifest, tableOf, puffinOf, positionDeletes, cleanup };
}
