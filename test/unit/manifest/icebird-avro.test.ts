/**
 * icebird (a JS Iceberg reader no one here wrote) decodes floe's manifest lists and manifests with its
 * own Avro reader. The whole-table read through icebird belongs to the table tests; here its Avro
 * layer gets the bytes directly. icebird has no Avro `fixed` support, so the partition spec here
 * avoids decimal/uuid/fixed (Iceberg Java writes those as fixed too).
 */
import * as path from 'node:path';
import { avroMetadata } from 'icebird/src/avro/avro.metadata.js';
import { avroRead } from 'icebird/src/avro/avro.read.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readManifestList, writeManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { writeManifest } from '../../../functions/core/manifest/manifest-writer.js';
import {
  entry,
  fullDataFile,
  makeTempWarehouse,
  simplePartition,
  simpleSchema,
  simpleSpec,
} from './manifest-fixtures.js';

function readWithIcebird(bytes: Uint8Array) {
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  const { metadata, syncMarker } = avroMetadata(reader);
  return { metadata, records: avroRead({ reader, metadata, syncMarker }) };
}

let warehouse: Awaited<ReturnType<typeof makeTempWarehouse>>;
beforeEach(async () => {
  warehouse = await makeTempWarehouse();
});
afterEach(async () => {
  await warehouse.cleanup();
});

const SNAPSHOT = 2n ** 60n + 1n;

async function writeTableMetadataFiles(count: number, codec: 'null' | 'deflate') {
  const entries = Array.from({ length: count }, (_, i) =>
    entry(1, fullDataFile(i, simplePartition(i), simpleSpec['spec-id']), {
      snapshot: null,
      data: null,
      file: null,
    }),
  );
  const manifest = await writeManifest({
    io: warehouse.io,
    location: path.join(warehouse.dir, `m-${codec}.avro`),
    schema: simpleSchema,
    spec: simpleSpec,
    content: 0,
    snapshotId: SNAPSHOT,
    entries,
    codec,
  });
  const listLocation = path.join(warehouse.dir, `snap-${codec}.avro`);
  await writeManifestList({
    io: warehouse.io,
    location: listLocation,
    snapshotId: SNAPSHOT,
    parentSnapshotId: null,
    sequenceNumber: 3n,
    manifests: [manifest],
    codec,
  });
  return { entries, manifest, listLocation };
}

describe('icebird reads floe manifest lists and manifests', () => {
  const cases: [string, number, 'null' | 'deflate'][] = [
    ['one entry, null codec', 1, 'null'],
    ['one entry, deflate', 1, 'deflate'],
    ['2,000 entries over several deflate blocks', 2_000, 'deflate'],
  ];
  for (const [what, count, codec] of cases) {
    it(what, async () => {
      // Prepare
      const { entries, listLocation } = await writeTableMetadataFiles(count, codec);
      // Act
      const list = readWithIcebird(await warehouse.io.read(listLocation));
      const [listed] = await readManifestList(warehouse.io, listLocation);
      const manifest = readWithIcebird(await warehouse.io.read(listed.manifest_path));
      // Assess: the list
      expect(list.records).toHaveLength(1);
      expect(list.records[0]).toMatchObject({
        manifest_path: listed.manifest_path,
        manifest_length: listed.manifest_length,
        sequence_number: 3n,
        min_sequence_number: 3n,
        added_snapshot_id: SNAPSHOT,
        added_files_count: count,
        content: 0,
      });
      // Assess: the manifest (icebird reads Avro null as undefined, dates as Date)
      expect(manifest.metadata['format-version']).toBe('2');
      expect(manifest.metadata.schema).toEqual(simpleSchema);
      expect(manifest.records).toHaveLength(count);
      const last = count - 1;
      const df = entries[last].data_file;
      expect(manifest.records[last]).toMatchObject({
        status: 1,
        snapshot_id: SNAPSHOT,
        sequence_number: undefined,
        file_sequence_number: undefined,
        data_file: {
          content: 0,
          file_path: df.file_path,
          file_format: 'PARQUET',
          partition: {
            ts_day: new Date((df.partition.ts_day as number) * 86_400_000),
            name: df.partition.name,
          },
          record_count: df.record_count,
          file_size_in_bytes: df.file_size_in_bytes,
          column_sizes: [...(df.column_sizes ?? [])].map(([key, value]) => ({ key, value })),
          split_offsets: df.split_offsets,
          sort_order_id: df.sort_order_id,
        },
      });
      const lower = manifest.records[last].data_file.lower_bounds as { key: number; value: Uint8Array }[];
      expect(lower.map(({ key, value }) => [key, [...value]])).toEqual(
        [...(df.lower_bounds ?? [])].map(([key, value]) => [key, [...value]]),
      );
    });
  }
});
