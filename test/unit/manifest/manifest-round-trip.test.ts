import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeAvroContainer } from '../../../functions/core/manifest/avro-container.js';
import { readManifestList, writeManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { readManifestEntries, readManifestHeader } from '../../../functions/core/manifest/manifest-reader.js';
import { writeManifest } from '../../../functions/core/manifest/manifest-writer.js';
import { decodeValue } from '../../../functions/core/spec/conversions.js';
import type { ManifestEntry, ManifestFile } from '../../../functions/core/spec/types.js';
import {
  allTypesPartition,
  allTypesSchema,
  allTypesSpec,
  entry,
  fullDataFile,
  makeTempWarehouse,
} from './manifest-fixtures.js';

const SNAPSHOT = 2n ** 60n + 7n; // beyond 2^53
const OLD_SNAPSHOT = 2n ** 58n + 3n;
const COMMIT_SEQ = 42n;

let warehouse: Awaited<ReturnType<typeof makeTempWarehouse>>;
beforeEach(async () => {
  warehouse = await makeTempWarehouse();
});
afterEach(async () => {
  await warehouse.cleanup();
});

/** Mixed statuses: ADDED with null sequence numbers, EXISTING and DELETED with explicit ones. */
function mixedEntries(): ManifestEntry[] {
  const spec = allTypesSpec['spec-id'];
  return [
    entry(1, fullDataFile(0, allTypesPartition(0), spec), { snapshot: null, data: null, file: null }),
    entry(1, fullDataFile(1, allTypesPartition(1), spec), { snapshot: SNAPSHOT, data: null, file: null }),
    entry(0, fullDataFile(2, allTypesPartition(2), spec), { snapshot: OLD_SNAPSHOT, data: 9n, file: 9n }),
    entry(0, fullDataFile(3, allTypesPartition(3), spec), { snapshot: OLD_SNAPSHOT, data: 5n, file: 11n }),
    entry(2, fullDataFile(4, allTypesPartition(4), spec), { snapshot: SNAPSHOT, data: 3n, file: 3n }),
  ];
}

/** Writes a manifest and a manifest list holding it; returns the list's view of the manifest. */
async function writeAndList(entries: ManifestEntry[], codec: 'null' | 'deflate' = 'deflate') {
  const written = await writeManifest({
    io: warehouse.io,
    location: path.join(warehouse.dir, `manifest-${codec}.avro`),
    schema: allTypesSchema,
    spec: allTypesSpec,
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
    parentSnapshotId: OLD_SNAPSHOT,
    sequenceNumber: COMMIT_SEQ,
    manifests: [written],
    codec,
  });
  const [listed] = await readManifestList(warehouse.io, listLocation);
  return { written, listed };
}

describe('writeManifest / readManifestEntries', () => {
  for (const codec of ['deflate', 'null'] as const) {
    it(`round-trips every DataFile field and applies inheritance (${codec} codec)`, async () => {
      // Prepare
      const entries = mixedEntries();
      // Act
      const { listed } = await writeAndList(entries, codec);
      const read = await readManifestEntries(warehouse.io, listed);
      // Assess: nulls inherited from the list (snapshot id, and for ADDED the commit's sequence number)
      const expected = entries.map((e) => ({
        ...e,
        snapshot_id: e.snapshot_id ?? SNAPSHOT,
        sequence_number: e.sequence_number ?? COMMIT_SEQ,
        file_sequence_number: e.file_sequence_number ?? COMMIT_SEQ,
      }));
      expect(read).toEqual(expected);
      expect(decodeAvroContainer(await warehouse.io.read(listed.manifest_path)).metadata['avro.codec']).toBe(
        codec,
      );
    });
  }

  it('leaves ADDED sequence numbers null in the file (they are inherited, not written)', async () => {
    const { written } = await writeAndList(mixedEntries());
    const { records } = decodeAvroContainer(await warehouse.io.read(written.manifest_path));
    const raw = records as { status: number; snapshot_id: bigint | null; sequence_number: bigint | null }[];
    expect(raw.map((r) => r.sequence_number)).toEqual([null, null, 9n, 5n, 3n]);
    // Java's wrapAppend writes the snapshot id of ADDED entries explicitly.
    expect(raw.map((r) => r.snapshot_id)).toEqual([SNAPSHOT, SNAPSHOT, OLD_SNAPSHOT, OLD_SNAPSHOT, SNAPSHOT]);
  });

  it('keeps explicit sequence numbers of ADDED entries (rewrites that keep the starting sequence number)', async () => {
    const df = fullDataFile(0, allTypesPartition(0), allTypesSpec['spec-id']);
    const { written, listed } = await writeAndList([
      entry(1, df, { snapshot: SNAPSHOT, data: 17n, file: null }),
    ]);
    const [read] = await readManifestEntries(warehouse.io, listed);
    expect(written.min_sequence_number).toBe(17n);
    expect(read.sequence_number).toBe(17n);
    expect(read.file_sequence_number).toBe(COMMIT_SEQ);
  });

  it('describes the manifest: counts, rows, unassigned sequence numbers, spec id', async () => {
    const entries = mixedEntries();
    const { written, listed } = await writeAndList(entries);
    const rows = (i: number) => entries[i].data_file.record_count;
    expect(written).toMatchObject({
      partition_spec_id: allTypesSpec['spec-id'],
      content: 0,
      added_snapshot_id: SNAPSHOT,
      sequence_number: -1n,
      min_sequence_number: 5n, // smallest explicit data sequence number of a live (non-DELETED) entry
      added_files_count: 2,
      existing_files_count: 2,
      deleted_files_count: 1,
      added_rows_count: rows(0) + rows(1),
      existing_rows_count: rows(2) + rows(3),
      deleted_rows_count: rows(4),
      key_metadata: null,
    });
    const stat = await warehouse.io.stat(written.manifest_path);
    expect(written.manifest_length).toBe(BigInt(stat?.size ?? -1));
    expect(listed).toEqual({ ...written, sequence_number: COMMIT_SEQ });
  });

  it('summarises partitions over every entry (DELETED too), with nulls and NaNs kept out of the bounds', async () => {
    // Prepare: entry 4 is DELETED and has the extreme ts_day; entry 5 has null/NaN partition values
    const spec = allTypesSpec['spec-id'];
    const nullish = { ...allTypesPartition(5), ts_day: null, score: Number.NaN, amount: null };
    const entries = [
      ...mixedEntries(),
      entry(1, fullDataFile(5, nullish, spec), { snapshot: null, data: null, file: null }),
    ];
    // Act
    const { written } = await writeAndList(entries);
    // Assess
    const fields = allTypesSpec.fields.map((f) => f.name);
    const summary = (name: string) => written.partitions?.[fields.indexOf(name)];
    const bound = (name: string, type: Parameters<typeof decodeValue>[0]) => {
      const s = summary(name);
      return [
        decodeValue(type, s?.lower_bound as Uint8Array),
        decodeValue(type, s?.upper_bound as Uint8Array),
      ];
    };
    expect(written.partitions).toHaveLength(allTypesSpec.fields.length);
    expect(summary('ts_day')).toMatchObject({ contains_null: true, contains_nan: false });
    expect(bound('ts_day', 'date')).toEqual([19_000, 19_004]);
    expect(summary('score')).toMatchObject({ contains_null: false, contains_nan: true });
    expect(bound('score', 'double')).toEqual([0.25, 4.25]);
    const amounts = [0, 1, 2, 3, 4].map((i) => allTypesPartition(i).amount as bigint);
    expect(bound('amount', 'decimal(10, 2)')).toEqual([amounts[0], amounts[4]]);
    expect(bound('id', 'long')).toEqual([allTypesPartition(0).id, allTypesPartition(5).id]);
    expect(bound('uid', 'uuid')).toEqual([allTypesPartition(0).uid, allTypesPartition(5).uid]);
    expect(summary('flag')).toMatchObject({ contains_null: false, contains_nan: false });
    expect(bound('flag', 'boolean')).toEqual([false, true]);
  });

  it('writes a delete manifest with equality ids and content "deletes"', async () => {
    // Prepare
    const spec = allTypesSpec['spec-id'];
    const deleteFile = {
      ...fullDataFile(7, allTypesPartition(7), spec),
      content: 2 as const,
      equality_ids: [1, 5],
    };
    const location = path.join(warehouse.dir, 'deletes.avro');
    // Act
    const written = await writeManifest({
      io: warehouse.io,
      location,
      schema: allTypesSchema,
      spec: allTypesSpec,
      content: 1,
      snapshotId: SNAPSHOT,
      entries: [entry(1, deleteFile, { snapshot: null, data: null, file: null })],
    });
    const listed: ManifestFile = { ...written, sequence_number: 8n, min_sequence_number: 8n };
    const [read] = await readManifestEntries(warehouse.io, listed);
    const header = await readManifestHeader(warehouse.io, location);
    // Assess
    expect(written.content).toBe(1);
    expect(header.content).toBe('deletes');
    expect(read.data_file).toEqual(deleteFile);
    expect(read.sequence_number).toBe(8n);
  });

  it('spreads many entries over several Avro blocks and reads them all back in order', async () => {
    // Prepare: ~2,000 entries with full stats is well past one 64 kB block
    const spec = allTypesSpec['spec-id'];
    const entries = Array.from({ length: 2_000 }, (_, i) =>
      entry(1, fullDataFile(i, allTypesPartition(i), spec), { snapshot: null, data: null, file: null }),
    );
    // Act
    const { written, listed } = await writeAndList(entries);
    const container = decodeAvroContainer(await warehouse.io.read(written.manifest_path));
    const read = await readManifestEntries(warehouse.io, listed);
    // Assess
    expect(container.blocks).toBeGreaterThan(3);
    expect(read).toHaveLength(entries.length);
    expect(read.map((e) => e.data_file.file_path)).toEqual(entries.map((e) => e.data_file.file_path));
    expect(read[1_999].data_file).toEqual(entries[1_999].data_file);
    expect(written.added_files_count).toBe(2_000);
  });

  it('reads an unpartitioned manifest (empty partition record)', async () => {
    const unpartitioned = { 'spec-id': 0, fields: [] };
    const df = { ...fullDataFile(0, {}, 0) };
    const location = path.join(warehouse.dir, 'unpartitioned.avro');
    const written = await writeManifest({
      io: warehouse.io,
      location,
      schema: allTypesSchema,
      spec: unpartitioned,
      content: 0,
      snapshotId: SNAPSHOT,
      entries: [entry(1, df, { snapshot: null, data: null, file: null })],
    });
    const [read] = await readManifestEntries(warehouse.io, { ...written, sequence_number: 1n });
    expect(written.partitions).toEqual([]);
    expect(read.data_file).toEqual(df);
  });
});
