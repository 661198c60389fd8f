/**
 * floe's Avro writer with the v3 fields (used to build v3 tables in tests): icebird, an Iceberg reader
 * no one here wrote, decodes them under the spec's names and field ids (data_file 142–145, manifest_file
 * 520), and floe reads them back. The v2 writer, what commits use, has none of them.
 */
import * as path from 'node:path';
import { avroMetadata } from 'icebird/src/avro/avro.metadata.js';
import { avroRead } from 'icebird/src/avro/avro.read.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readManifestList, writeManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { readManifestEntries } from '../../../functions/core/manifest/manifest-reader.js';
import { writeManifest } from '../../../functions/core/manifest/manifest-writer.js';
import type { DataFile } from '../../../functions/core/spec/types.js';
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

/** The `field-id`s of a record's fields in a manifest's own Avro schema, by name. */
function fieldIds(avroSchema: unknown, record: string): Record<string, number> {
  const out: Record<string, number> = {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      const n = node as {
        type?: unknown;
        name?: string;
        fields?: { name: string; 'field-id': number; type: unknown }[];
      };
      if (n.type === 'record' && n.name === record)
        for (const f of n.fields ?? []) out[f.name] = f['field-id'];
      for (const f of n.fields ?? []) visit(f.type);
      if (typeof n.type === 'object') visit(n.type);
    }
  };
  // icebird hands the header's schema over parsed.
  visit(typeof avroSchema === 'string' ? JSON.parse(avroSchema) : avroSchema);
  return out;
}

let warehouse: Awaited<ReturnType<typeof makeTempWarehouse>>;
beforeEach(async () => {
  warehouse = await makeTempWarehouse();
});
afterEach(() => warehouse.cleanup());

const unassigned = { snapshot: null, data: null, file: null };

describe('v3 manifests and manifest lists', () => {
  it('carry first_row_id, referenced_data_file and the content range under their spec ids', async () => {
    // Prepare
    const data: DataFile = { ...fullDataFile(0, simplePartition(0), 0), first_row_id: 41n };
    const dv: DataFile = {
      ...fullDataFile(1, simplePartition(1), 0),
      content: 1,
      file_format: 'PUFFIN',
      referenced_data_file: data.file_path,
      content_offset: 4n,
      content_size_in_bytes: 2n ** 40n,
    };
    const write = (content: 0 | 1, file: DataFile) =>
      writeManifest({
        io: warehouse.io,
        location: path.join(warehouse.dir, `m${content}.avro`),
        schema: simpleSchema,
        spec: simpleSpec,
        content,
        snapshotId: 5n,
        entries: [entry(1, file, unassigned)],
        formatVersion: 3,
      });
    const manifests = [await write(0, data), await write(1, dv)];
    const listLocation = path.join(warehouse.dir, 'snap.avro');

    // Act
    await writeManifestList({
      io: warehouse.io,
      location: listLocation,
      snapshotId: 5n,
      parentSnapshotId: null,
      sequenceNumber: 2n,
      manifests: [{ ...manifests[0], first_row_id: 100n }, manifests[1]],
      formatVersion: 3,
    });
    const list = readWithIcebird(await warehouse.io.read(listLocation));
    const dataManifest = readWithIcebird(await warehouse.io.read(manifests[0].manifest_path));
    const deleteManifest = readWithIcebird(await warehouse.io.read(manifests[1].manifest_path));
    const listed = await readManifestList(warehouse.io, listLocation);
    const [readDv] = await readManifestEntries(warehouse.io, listed[1]);

    // Assess: icebird's reading (null reads as undefined)
    expect(list.metadata['format-version']).toBe('3');
    expect(fieldIds(list.metadata['avro.schema'], 'manifest_file').first_row_id).toBe(520);
    expect(list.records.map((r: { first_row_id?: bigint }) => r.first_row_id)).toEqual([100n, undefined]);
    expect(dataManifest.metadata['format-version']).toBe('3');
    expect(fieldIds(dataManifest.metadata['avro.schema'], 'r2')).toMatchObject({
      first_row_id: 142,
      referenced_data_file: 143,
      content_offset: 144,
      content_size_in_bytes: 145,
    });
    expect(dataManifest.records[0].data_file.first_row_id).toBe(41n);
    expect(deleteManifest.records[0].data_file).toMatchObject({
      file_format: 'PUFFIN',
      referenced_data_file: data.file_path,
      content_offset: 4n,
      content_size_in_bytes: 2n ** 40n,
    });
    // floe's own reading
    expect(listed.map((m) => m.first_row_id)).toEqual([100n, undefined]);
    expect(readDv.data_file).toMatchObject({
      referenced_data_file: data.file_path,
      content_offset: 4n,
      content_size_in_bytes: 2n ** 40n,
    });
  });

  it('are not what floe commits: the v2 writer has none of the v3 fields', async () => {
    // Prepare
    const data: DataFile = { ...fullDataFile(0, simplePartition(0), 0), first_row_id: 41n };

    // Act
    const written = await writeManifest({
      io: warehouse.io,
      location: path.join(warehouse.dir, 'm.avro'),
      schema: simpleSchema,
      spec: simpleSpec,
      content: 0,
      snapshotId: 5n,
      entries: [entry(1, data, unassigned)],
    });
    const manifest = readWithIcebird(await warehouse.io.read(written.manifest_path));

    // Assess
    expect(manifest.metadata['format-version']).toBe('2');
    expect(fieldIds(manifest.metadata['avro.schema'], 'r2').first_row_id).toBeUndefined();
    expect(manifest.records[0].data_file.first_row_id).toBeUndefined();
  });
});
