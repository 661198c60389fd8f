/**
 * A partitioned table filled the way continuous ingestion fills one: many small commits, each carrying
 * floe's batch id and committed offsets, plus helpers to write equality and position deletes by hand
 * (the CDC writer's shape: content 2 files keyed by `id`; content 1 files naming file + position).
 */
import { createHash } from 'node:crypto';
import type { Catalog, LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { joinLocation } from '../../../functions/core/io/location.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import type {
  DataFile,
  PartitionSpec,
  Row,
  Schema,
  SnapshotOperation,
  TableIdentifier,
} from '../../../functions/core/spec/types.js';
import { commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import {
  BATCH_ID_KEY,
  encodeOffsets,
  mergeOffsets,
  OFFSETS_KEY,
  readCommittedOffsets,
} from '../../../functions/core/table/source-offsets.js';
import { writeRows } from '../../../functions/core/table/write-rows.js';

export const EVENTS_ID: TableIdentifier = { namespace: ['lake'], name: 'events' };

export const EVENTS_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'category', required: true, type: 'string' },
    { id: 3, name: 'amount', required: false, type: 'double' },
    { id: 4, name: 'note', required: false, type: 'string' },
  ],
};

export const BY_CATEGORY: PartitionSpec = {
  'spec-id': 0,
  fields: [{ 'source-id': 2, 'field-id': 1000, name: 'category', transform: 'identity' }],
};

export const CATEGORIES = ['alpha', 'beta', 'gamma', 'delta'];

/** Rows `from`..`to` (inclusive ids), categories round-robin; notes hardly compress, as real payloads. */
export function eventRows(from: number, to: number): Row[] {
  const rows: Row[] = [];
  for (let id = from; id <= to; id++) {
    rows.push({
      id: BigInt(id),
      category: CATEGORIES[id % CATEGORIES.length],
      amount: id * 0.5,
      note: createHash('sha256').update(String(id)).digest('base64'),
    });
  }
  return rows;
}

/** Creates the events table (uncompressed Avro so small manifests stay readable by any reader). */
export async function createEventsTable(
  catalog: Catalog,
  properties: Record<string, string> = {},
  sortOrder?: Parameters<Catalog['createTable']>[1]['sortOrder'],
): Promise<LoadedTable> {
  return catalog.createTable(EVENTS_ID, {
    schema: EVENTS_SCHEMA,
    partitionSpec: BY_CATEGORY,
    properties: { 'write.avro.compression-codec': 'uncompressed', ...properties },
    ...(sortOrder ? { sortOrder } : {}),
  });
}

/** Appends rows as one ingestion batch: batch id and offsets (topic `events`, partition 0, up to `offset`). */
export async function appendBatch(
  catalog: Catalog,
  rows: Row[],
  offset: number,
  id: TableIdentifier = EVENTS_ID,
): Promise<LoadedTable> {
  const table = await catalog.loadTable(id);
  const files = await writeRows(table, rows);
  const batchId = `batch-${offset}`;
  const result = await commitWithRetry(catalog, id, {
    batchId,
    prepare: (base) =>
      prepareSnapshot(base, {
        operation: 'append',
        addedDataFiles: files,
        addedDeleteFiles: [],
        summary: {
          [BATCH_ID_KEY]: batchId,
          [OFFSETS_KEY]: encodeOffsets(
            mergeOffsets(
              readCommittedOffsets(base.metadata),
              new Map([['events', new Map([[0, [[0n, BigInt(offset)] as const]]])]]),
            ),
          ),
        },
      }),
  });
  return result.table;
}

let deleteFileCounter = 0;

/** Writes and commits equality deletes (by `id`) for the given rows' ids, partition by partition. */
export async function commitEqualityDeletes(
  catalog: Catalog,
  ids: number[],
  id: TableIdentifier = EVENTS_ID,
): Promise<LoadedTable> {
  const table = await catalog.loadTable(id);
  const keySchema: Schema = { type: 'struct', 'schema-id': 0, fields: [EVENTS_SCHEMA.fields[0]] };
  const files: DataFile[] = [];
  for (const category of CATEGORIES) {
    const keys = ids
      .filter((i) => CATEGORIES[i % CATEGORIES.length] === category)
      .map((i) => ({ id: BigInt(i) }));
    if (keys.length === 0) continue;
    const n = deleteFileCounter++;
    files.push(
      ...(await writeDataFiles(keys, {
        io: table.io,
        schema: keySchema,
        specId: 0,
        partition: { category },
        content: 2,
        equalityIds: [1],
        nextLocation: (i) =>
          joinLocation(table.metadata.location, 'data', `category=${category}`, `eq-${n}-${i}.parquet`),
      })),
    );
  }
  return commitFiles(catalog, 'delete', [], files, id);
}

/** Writes and commits position deletes naming `positions` of `dataFile`. */
export async function commitPositionDeletes(
  catalog: Catalog,
  dataFile: DataFile,
  positions: number[],
  id: TableIdentifier = EVENTS_ID,
): Promise<LoadedTable> {
  const table = await catalog.loadTable(id);
  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 2147483546, name: 'file_path', required: true, type: 'string' },
      { id: 2147483545, name: 'pos', required: true, type: 'long' },
    ],
  };
  const n = deleteFileCounter++;
  const files = await writeDataFiles(
    positions.map((p) => ({ file_path: dataFile.file_path, pos: BigInt(p) })),
    {
      io: table.io,
      schema,
      specId: dataFile.spec_id,
      partition: dataFile.partition,
      content: 1,
      nextLocation: (i) => joinLocation(table.metadata.location, 'data', `pos-${n}-${i}.parquet`),
    },
  );
  return commitFiles(catalog, 'delete', [], files, id);
}

/** Commits already written files as one snapshot. */
export async function commitFiles(
  catalog: Catalog,
  operation: SnapshotOperation,
  data: DataFile[],
  deletes: DataFile[],
  id: TableIdentifier = EVENTS_ID,
): Promise<LoadedTable> {
  const result = await commitWithRetry(catalog, id, {
    prepare: (base) => prepareSnapshot(base, { operation, addedDataFiles: data, addedDeleteFiles: deletes }),
  });
  return result.table;
}

/** The table's live rows through floe's reader, as sorted ids. */
export async function liveIds(catalog: Catalog, id: TableIdentifier = EVENTS_ID): Promise<number[]> {
  const table = await catalog.loadTable(id);
  const rows = await readScanRows(table, await planScan(table));
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/** Rows as comparable JSON strings, sorted (bigints as strings). */
export function canonicalRows(rows: Row[]): string[] {
  return rows.map((r) => JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))).sort();
}
