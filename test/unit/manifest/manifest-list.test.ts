import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import { encodeAvroContainer } from '../../../functions/core/manifest/avro-container.js';
import {
  readManifestList,
  UNASSIGNED_SEQUENCE_NUMBER,
  writeManifestList,
} from '../../../functions/core/manifest/manifest-list.js';
import type { ManifestFile } from '../../../functions/core/spec/types.js';
import { makeTempWarehouse } from './manifest-fixtures.js';

const SNAPSHOT = 2n ** 62n + 99n;
const PARENT = 2n ** 61n + 1n;

function manifestFile(i: number, overrides: Partial<ManifestFile> = {}): ManifestFile {
  return {
    manifest_path: `s3://bucket/table/metadata/m-${i}.avro`,
    manifest_length: 4_096n + BigInt(i),
    partition_spec_id: i % 2,
    content: 0,
    sequence_number: 3n,
    min_sequence_number: 1n,
    added_snapshot_id: PARENT,
    added_files_count: i,
    existing_files_count: 2 * i,
    deleted_files_count: 1,
    added_rows_count: 2n ** 55n + BigInt(i),
    existing_rows_count: 10n,
    deleted_rows_count: 0n,
    partitions: [
      {
        contains_null: true,
        contains_nan: false,
        lower_bound: Uint8Array.of(1, 0, 0, 0),
        upper_bound: Uint8Array.of(9, 0, 0, 0),
      },
      { contains_null: false, contains_nan: null, lower_bound: null, upper_bound: null },
    ],
    key_metadata: null,
    ...overrides,
  };
}

let warehouse: Awaited<ReturnType<typeof makeTempWarehouse>>;
beforeEach(async () => {
  warehouse = await makeTempWarehouse();
});
afterEach(async () => {
  await warehouse.cleanup();
});

describe('writeManifestList / readManifestList', () => {
  for (const codec of ['deflate', 'null'] as const) {
    it(`round-trips manifests and assigns the commit's sequence number to this snapshot's new ones (${codec})`, async () => {
      // Prepare: one carried-over manifest, one new with both numbers unassigned, one new with a known minimum
      const carried = manifestFile(1);
      const fresh = manifestFile(2, {
        added_snapshot_id: SNAPSHOT,
        sequence_number: UNASSIGNED_SEQUENCE_NUMBER,
        min_sequence_number: UNASSIGNED_SEQUENCE_NUMBER,
        content: 1,
        partitions: null,
        key_metadata: Uint8Array.of(7, 7, 7),
      });
      const rewritten = manifestFile(3, {
        added_snapshot_id: SNAPSHOT,
        sequence_number: UNASSIGNED_SEQUENCE_NUMBER,
        min_sequence_number: 2n,
      });
      const location = path.join(warehouse.dir, `snap-${codec}.avro`);
      // Act
      await writeManifestList({
        io: warehouse.io,
        location,
        snapshotId: SNAPSHOT,
        parentSnapshotId: PARENT,
        sequenceNumber: 12n,
        manifests: [carried, fresh, rewritten],
        codec,
      });
      const read = await readManifestList(warehouse.io, location);
      // Assess
      expect(read).toEqual([
        carried,
        { ...fresh, sequence_number: 12n, min_sequence_number: 12n },
        { ...rewritten, sequence_number: 12n },
      ]);
    });
  }

  it('refuses an unassigned sequence number on a manifest another snapshot added', async () => {
    const foreign = manifestFile(1, { sequence_number: UNASSIGNED_SEQUENCE_NUMBER });
    const attempt = writeManifestList({
      io: warehouse.io,
      location: path.join(warehouse.dir, 'snap.avro'),
      snapshotId: SNAPSHOT,
      parentSnapshotId: PARENT,
      sequenceNumber: 12n,
      manifests: [foreign],
    });
    await expect(attempt).rejects.toThrow(ValidationError);
    await expect(attempt).rejects.toThrow(/unassigned sequence_number/);
    expect(await warehouse.io.exists(path.join(warehouse.dir, 'snap.avro'))).toBe(false);
  });

  it('reads a v1 manifest list with v2 defaults (content 0, sequence numbers 0, *_data_files_count names)', async () => {
    // Prepare: the v1 manifest_file schema (Iceberg spec, manifest lists, v1 column)
    const v1Schema = {
      type: 'record',
      name: 'manifest_file',
      fields: [
        { name: 'manifest_path', type: 'string', 'field-id': 500 },
        { name: 'manifest_length', type: 'long', 'field-id': 501 },
        { name: 'partition_spec_id', type: 'int', 'field-id': 502 },
        { name: 'added_snapshot_id', type: ['null', 'long'], default: null, 'field-id': 503 },
        { name: 'added_data_files_count', type: ['null', 'int'], default: null, 'field-id': 504 },
        { name: 'existing_data_files_count', type: ['null', 'int'], default: null, 'field-id': 505 },
        { name: 'deleted_data_files_count', type: ['null', 'int'], default: null, 'field-id': 506 },
      ],
    };
    const location = path.join(warehouse.dir, 'v1.avro');
    const record = {
      manifest_path: 'm.avro',
      manifest_length: 100n,
      partition_spec_id: 0,
      added_snapshot_id: 5n,
      added_data_files_count: 3,
      existing_data_files_count: 4,
      deleted_data_files_count: null,
    };
    await warehouse.io.write(
      location,
      encodeAvroContainer({ schema: v1Schema, records: [record], codec: 'deflate', metadata: {} }),
    );
    // Act
    const [read] = await readManifestList(warehouse.io, location);
    // Assess
    expect(read).toMatchObject({
      manifest_path: 'm.avro',
      content: 0,
      sequence_number: 0n,
      min_sequence_number: 0n,
      added_snapshot_id: 5n,
      added_files_count: 3,
      existing_files_count: 4,
      deleted_files_count: 0,
      partitions: null,
    });
  });

  it('reports a file that is not a manifest list as a ValidationError naming it', async () => {
    const location = path.join(warehouse.dir, 'garbage.avro');
    await warehouse.io.write(location, new TextEncoder().encode('not avro at all'));
    await expect(readManifestList(warehouse.io, location)).rejects.toThrow(/garbage\.avro.*bad magic/);
  });
});

describe('readManifestList of the list just written', () => {
  const writeList = (location: string, manifests: ManifestFile[]) =>
    writeManifestList({
      io: warehouse.io,
      location,
      snapshotId: SNAPSHOT,
      parentSnapshotId: PARENT,
      sequenceNumber: 4n,
      manifests,
    });
  /** The locations warehouse.io reads from now on. */
  function countReads(): string[] {
    const reads: string[] = [];
    const read = warehouse.io.read.bind(warehouse.io);
    warehouse.io.read = async (at: string) => {
      reads.push(at);
      return read(at);
    };
    return reads;
  }

  it('decodes the bytes this FileIO just wrote instead of reading them back; another FileIO reads storage', async () => {
    // Prepare
    const location = path.join(warehouse.dir, 'snap-last.avro');
    await writeList(location, [manifestFile(1), manifestFile(2)]);
    const reads = countReads();

    // Act
    const fromMemory = await readManifestList(warehouse.io, location);
    const fromStorage = await readManifestList(new LocalFileIO(), location);

    // Assess
    expect(reads).toEqual([]);
    expect(fromMemory).toEqual(fromStorage);
    expect(fromMemory.map((m) => m.manifest_path)).toEqual([
      manifestFile(1).manifest_path,
      manifestFile(2).manifest_path,
    ]);
  });

  it('reads any other location from storage', async () => {
    // Prepare: two lists written; the first is no longer the last
    const first = path.join(warehouse.dir, 'snap-a.avro');
    await writeList(first, [manifestFile(1)]);
    await writeList(path.join(warehouse.dir, 'snap-b.avro'), [manifestFile(2)]);
    const reads = countReads();

    // Act
    const listed = await readManifestList(warehouse.io, first);

    // Assess
    expect(reads).toEqual([first]);
    expect(listed.map((m) => m.manifest_path)).toEqual([manifestFile(1).manifest_path]);
  });
});
