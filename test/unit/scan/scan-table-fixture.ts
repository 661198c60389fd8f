/**
 * A small Iceberg table built by hand on the local filesystem, three snapshots deep, with position and
 * equality deletes at different sequence numbers and partitions (see the layout below).
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import { readManifestList, writeManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { writeManifest } from '../../../functions/core/manifest/manifest-writer.js';
import type {
  DataFile,
  ManifestEntry,
  ManifestFile,
  PartitionSpec,
  Row,
  Schema,
  Snapshot,
  TableMetadata,
} from '../../../functions/core/spec/types.js';

export const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'country', required: false, type: 'string' },
    { id: 3, name: 'qty', required: false, type: 'int' },
  ],
};

export const UNPARTITIONED: PartitionSpec = { 'spec-id': 0, fields: [] };
export const BY_COUNTRY: PartitionSpec = {
  'spec-id': 1,
  fields: [{ 'source-id': 2, 'field-id': 1000, name: 'country', transform: 'identity' }],
};

const POSITION_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 2147483546, name: 'file_path', required: true, type: 'string' },
    { id: 2147483545, name: 'pos', required: true, type: 'long' },
  ],
};

export interface ScanTable {
  table: LoadedTable;
  root: string;
  /** Data files by letter (see the layout). */
  files: Record<string, DataFile>;
  /** Manifest list location per snapshot id. */
  manifestLists: Record<number, string>;
  cleanup(): Promise<void>;
}

const row = (id: number, country: string | null, qty: number | null): Row => ({
  id: BigInt(id),
  country,
  qty,
});

/**
 * Layout (snapshot = sequence number):
 *  1: A (country=DE) ids 1-5; B (FR) ids 6-8; U (unpartitioned) ids 20 (null), 21 (NL), 22 (null), 23 (IT)
 *  2: C (DE) ids 9-10; P1 position deletes (DE): A pos 1 (id 2), C pos 0 (id 9);
 *     E1 equality deletes on id (DE): 3, 10; E2 equality deletes on id (FR): 1
 *  3: D (FR) ids 30-31, plus a DELETED entry for a file that no longer exists; U2 (unpartitioned) id 40 (null);
 *     G global equality deletes on country (unpartitioned): null; PU position deletes (unpartitioned): U pos 1;
 *     PX position deletes (DE) for a path that is no data file, with exact file_path bounds.
 * Live rows at 3: 1, 4, 5 (A) · 6, 7, 8 (B) · 23 (U) · 10 (C) · 30, 31 (D) · 40 (U2).
 */
export async function buildScanTable(): Promise<ScanTable> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-scan-'));
  const io = new LocalFileIO();
  const files: Record<string, DataFile> = {};

  const write = async (
    name: string,
    rows: Row[],
    spec: PartitionSpec,
    partition: DataFile['partition'],
    extra: { content?: 0 | 2; equalityIds?: number[]; schema?: Schema } = {},
  ): Promise<DataFile> => {
    const [file] = await writeDataFiles(rows, {
      io,
      schema: extra.schema ?? SCHEMA,
      specId: spec['spec-id'],
      partition,
      nextLocation: (i) => `${root}/data/${name}-${i}.parquet`,
      content: extra.content,
      equalityIds: extra.equalityIds,
    });
    files[name] = file;
    return file;
  };
  const writePositions = async (
    name: string,
    spec: PartitionSpec,
    partition: DataFile['partition'],
    rows: [DataFile | string, number][],
  ) => {
    const file = await write(
      name,
      rows.map(([f, pos]) => ({ file_path: typeof f === 'string' ? f : f.file_path, pos: BigInt(pos) })),
      spec,
      partition,
      { schema: POSITION_SCHEMA },
    );
    file.content = 1;
    return file;
  };

  const added = (file: DataFile): ManifestEntry => ({
    status: 1,
    snapshot_id: null,
    sequence_number: null,
    file_sequence_number: null,
    data_file: file,
  });
  let manifestCount = 0;
  const manifest = (snapshotId: number, spec: PartitionSpec, content: 0 | 1, entries: ManifestEntry[]) =>
    writeManifest({
      io,
      location: `${root}/metadata/m${manifestCount++}.avro`,
      schema: SCHEMA,
      spec,
      content,
      snapshotId: BigInt(snapshotId),
      entries,
      codec: 'null',
    });

  // Snapshot 1
  const a = await write(
    'A',
    [row(1, 'DE', 1), row(2, 'DE', 2), row(3, 'DE', 3), row(4, 'DE', 4), row(5, 'DE', 5)],
    BY_COUNTRY,
    { country: 'DE' },
  );
  const b = await write('B', [row(6, 'FR', 6), row(7, 'FR', 7), row(8, 'FR', 8)], BY_COUNTRY, {
    country: 'FR',
  });
  const u = await write(
    'U',
    [row(20, null, 20), row(21, 'NL', 21), row(22, null, 22), row(23, 'IT', 23)],
    UNPARTITIONED,
    {},
  );
  const s1 = [
    await manifest(1, BY_COUNTRY, 0, [added(a), added(b)]),
    await manifest(1, UNPARTITIONED, 0, [added(u)]),
  ];

  // Snapshot 2
  const c = await write('C', [row(9, 'DE', 9), row(10, 'DE', 10)], BY_COUNTRY, { country: 'DE' });
  const p1 = await writePositions('P1', BY_COUNTRY, { country: 'DE' }, [
    [a, 1],
    [c, 0],
  ]);
  const e1 = await write(
    'E1',
    [row(3, 'DE', null), row(10, 'DE', null)],
    BY_COUNTRY,
    { country: 'DE' },
    { content: 2, equalityIds: [1] },
  );
  const e2 = await write(
    'E2',
    [row(1, 'FR', null)],
    BY_COUNTRY,
    { country: 'FR' },
    { content: 2, equalityIds: [1] },
  );
  const s2 = [
    await manifest(2, BY_COUNTRY, 0, [added(c)]),
    await manifest(2, BY_COUNTRY, 1, [added(p1), added(e1), added(e2)]),
  ];

  // Snapshot 3
  const d = await write('D', [row(30, 'FR', 30), row(31, 'FR', 31)], BY_COUNTRY, { country: 'FR' });
  const ghost: DataFile = { ...d, file_path: `${root}/data/ghost.parquet` };
  const u2 = await write('U2', [row(40, null, 40)], UNPARTITIONED, {});
  const g = await write('G', [row(0, null, null)], UNPARTITIONED, {}, { content: 2, equalityIds: [2] });
  const pu = await writePositions('PU', UNPARTITIONED, {}, [[u, 1]]);
  const ghostPath = `${root}/data/not-a-data-file.parquet`;
  const px = await writePositions('PX', BY_COUNTRY, { country: 'DE' }, [[ghostPath, 0]]);
  // Exact bounds (as Iceberg Java writes for position deletes), so the planner can tell PX applies to no file.
  const exact = new TextEncoder().encode(ghostPath);
  px.lower_bounds = new Map([[2147483546, exact]]);
  px.upper_bounds = new Map([[2147483546, exact]]);
  const deletedGhost: ManifestEntry = {
    status: 2,
    snapshot_id: 3n,
    sequence_number: 1n,
    file_sequence_number: 1n,
    data_file: ghost,
  };
  const s3 = [
    await manifest(3, BY_COUNTRY, 0, [added(d), deletedGhost]),
    await manifest(3, UNPARTITIONED, 0, [added(u2)]),
    await manifest(3, UNPARTITIONED, 1, [added(g), added(pu)]),
    await manifest(3, BY_COUNTRY, 1, [added(px)]),
  ];

  // Manifest lists: each snapshot carries its parent's manifests (with their assigned sequence numbers).
  const manifestLists: Record<number, string> = {};
  let carried: ManifestFile[] = [];
  const snapshots: Snapshot[] = [];
  for (const [id, fresh] of [
    [1, s1],
    [2, s2],
    [3, s3],
  ] as [number, ManifestFile[]][]) {
    const location = `${root}/metadata/snap-${id}.avro`;
    await writeManifestList({
      io,
      location,
      snapshotId: BigInt(id),
      parentSnapshotId: id === 1 ? null : BigInt(id - 1),
      sequenceNumber: BigInt(id),
      manifests: [...carried, ...fresh],
      codec: 'null',
    });
    carried = await readManifestList(io, location);
    manifestLists[id] = location;
    snapshots.push({
      'snapshot-id': BigInt(id),
      ...(id > 1 ? { 'parent-snapshot-id': BigInt(id - 1) } : {}),
      'sequence-number': id,
      'timestamp-ms': 1_700_000_000_000 + id,
      'manifest-list': location,
      summary: { operation: id === 1 ? 'append' : 'overwrite' },
      'schema-id': 0,
    });
  }

  const metadata: TableMetadata = {
    'format-version': 2,
    'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
    location: root,
    'last-sequence-number': 3,
    'last-updated-ms': 1_700_000_000_003,
    'last-column-id': 3,
    schemas: [SCHEMA],
    'current-schema-id': 0,
    'partition-specs': [UNPARTITIONED, BY_COUNTRY],
    'default-spec-id': 1,
    'last-partition-id': 1000,
    properties: {},
    'current-snapshot-id': 3n,
    snapshots,
    'snapshot-log': snapshots.map((s) => ({
      'snapshot-id': s['snapshot-id'],
      'timestamp-ms': s['timestamp-ms'],
    })),
    'metadata-log': [],
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    'default-sort-order-id': 0,
    refs: { main: { 'snapshot-id': 3n, type: 'branch' } },
  };

  return {
    table: {
      identifier: { namespace: ['db'], name: 'orders' },
      metadata,
      metadataLocation: `${root}/metadata/v3.metadata.json`,
      io,
    },
    root,
    files,
    manifestLists,
    cleanup: () => fs.rm(root, { recursive: true, force: true }),
  };
}
