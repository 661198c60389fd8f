/**
 * The live snapshot of an upsert table (what `floe serve --live` hands out), written from a tail
 * mapped as the server maps it, over cold rows committed through the ingest path on a local
 * warehouse. In the default delete mode the tail names each replaced cold row by position (sorted,
 * whole-path bounds, no equality delete file); in `floe.delete-mode=equality` it keeps equality
 * deletes. Either way floe's reader and DuckDB (spec delete rules in SQL over the served files) show
 * the model's rows.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { type RowLocator, scanRowLocator } from '../../../functions/core/cdc/locate-rows.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import {
  defaultCacheRoot,
  liveCacheKey,
  writeLiveVersion,
} from '../../../functions/core/live/live-snapshot.js';
import { mapHotset } from '../../../functions/core/live/map-hotset.js';
import type { Hotset } from '../../../functions/core/live/read-hotset.js';
import { tailDeleteMode } from '../../../functions/core/live/write-tail-changes.js';
import { decodeEsmEvent } from '../../../functions/core/records/esm-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { POSITION_DELETE_FILE_PATH_ID } from '../../../functions/core/scan/delete-index.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { Row, Schema } from '../../../functions/core/spec/types.js';
import { jsonEvent } from '../../support/json-event.js';
import { duckdbLiveRows, duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';

const TOPIC = 'live.items';
const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
  ],
};

/** An upsert by key (`name`), or a tombstone (null). */
type Change = [id: number, name: string | null];

function routeWith(properties: Record<string, string> = {}): TableRoute {
  return {
    table: { namespace: ['app'], name: 'items' },
    topics: [TOPIC],
    schema: SCHEMA,
    // Two buckets: the cold rows sit in two data files of two partitions
    partitionBy: 'bucket(2, id)',
    mode: 'upsert',
    identifierColumns: ['id'],
    kafkaLineage: true,
    properties,
  };
}

function eventOf(changes: readonly Change[], firstOffset: number): unknown {
  return jsonEvent(
    TOPIC,
    changes.map(([id, name]) => (name === null ? null : { id, name })),
    { firstOffset, key: (_v, i) => String(changes[i][0]) },
  );
}

/** The key → name a reader must show: the changes applied in order. */
function model(...batches: (readonly Change[])[]): Record<string, string> {
  const state = new Map<number, string>();
  for (const [id, name] of batches.flat()) {
    if (name === null) state.delete(id);
    else state.set(id, name);
  }
  return Object.fromEntries([...state].map(([id, name]) => [String(id), name]));
}

const byId = (rows: readonly Row[] | readonly Record<string, unknown>[]) =>
  Object.fromEntries(rows.map((r) => [String(r.id), r.name]));

/** `cold` committed through ingestEvent, then the live version for the tail `hot` (offsets after). */
async function serveLive(
  catalog: Awaited<ReturnType<typeof tempWarehouse>>['catalog'],
  route: TableRoute,
  cold: readonly Change[],
  hot: readonly Change[],
  locator?: RowLocator,
): Promise<LoadedTable> {
  await ingestEvent({ catalog, routes: [route] }, eventOf(cold, 0));
  const table = await catalog.loadTable(route.table);
  const records = decodeEsmEvent(eventOf(hot, cold.length)).records;
  const mapped = await mapHotset(table.metadata, route, 'upsert', 'evolve', records);
  const hotset: Hotset = {
    snapshotId: currentSnapshot(table.metadata)?.['snapshot-id'] ?? null,
    partitions: [],
    ranges: [
      {
        topic: TOPIC,
        partition: 0,
        from: BigInt(cold.length),
        toExclusive: BigInt(cold.length + hot.length),
      },
    ],
    records: records.length,
    mapped,
    identityMismatches: [],
    freshness: { newestRecordMs: null, readUpTo: [], hotRecords: records.length },
  };
  const version = await writeLiveVersion(table, hotset, defaultCacheRoot(table), { locator });
  return { ...table, metadata: version.metadata, metadataLocation: version.metadataLocation };
}

const local = (uri: string) => uri.replace(/^file:\/\//, '');

/** The rows of `live` by floe's reader and by DuckDB. */
async function readBoth(live: LoadedTable): Promise<{ floe: Row[]; duckdb: Record<string, unknown>[] }> {
  const floe = await readScanRows(live, await planScan(live));
  const duckdb = await duckdbLiveRows(live, ['id', 'name'], ['id']);
  return { floe, duckdb };
}

const COLD: Change[] = Array.from({ length: 8 }, (_, id): Change => [id, `v1-${id}`]);
// Updates 1 and 2 (2 twice), deletes 3 and 4, adds 8, adds and deletes 9
const HOT: Change[] = [
  [1, 'v2-1'],
  [2, 'v2-2'],
  [3, null],
  [2, 'v3-2'],
  [4, null],
  [8, 'v1-8'],
  [9, 'v1-9'],
  [9, null],
];

describe('the live tail of an upsert table', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('names each replaced cold row by position, sorted with whole-path bounds, and no equality delete', async () => {
    // Prepare: a locator that is the scan, recording the keys it is asked for
    const asked: string[] = [];
    const locator: RowLocator = {
      locate: (table, columns, keys) => {
        asked.push(...keys.map((k) => k.text));
        return scanRowLocator.locate(table, columns, keys);
      },
    };

    // Act
    const live = await serveLive(wh.catalog, routeWith(), COLD, HOT, locator);

    // Assess: every reader shows the model
    const expected = model(COLD, HOT);
    const { floe, duckdb } = await readBoth(live);
    expect(byId(floe)).toEqual(expected);
    expect(floe).toHaveLength(7);
    expect(byId(duckdb)).toEqual(expected);
    expect(duckdb).toHaveLength(7);
    // Every key the tail touches was looked for (upserts cannot tell new keys); 1..4 were found
    expect(asked).toHaveLength(6);
    const summary = currentSnapshot(live.metadata)!.summary;
    expect(summary['floe.live']).toBe('true');
    expect(summary['added-position-deletes']).toBe('4');
    expect(summary['added-equality-deletes']).toBeUndefined();
    const entries = await liveEntries(live);
    expect(entries.filter((e) => e.data_file.content === 2)).toEqual([]);
    const deletes = entries.filter((e) => e.data_file.content === 1);
    // One file per cold data file's partition, each naming that one file: lower = upper = its path
    expect(deletes).toHaveLength(2);
    const coldPaths = new Set(
      entries
        .filter((e) => e.data_file.content === 0 && !e.data_file.file_path.includes('/floe-live/'))
        .map((e) => e.data_file.file_path),
    );
    for (const e of deletes) {
      expect(e.data_file.file_path).toContain('/floe-live/');
      const text = (id: 'lower_bounds' | 'upper_bounds') =>
        new TextDecoder().decode(e.data_file[id]!.get(POSITION_DELETE_FILE_PATH_ID));
      expect(text('lower_bounds')).toBe(text('upper_bounds'));
      expect(coldPaths.has(text('lower_bounds'))).toBe(true);
      const rows = await duckdbQuery(
        `select file_path, pos from read_parquet(${sqlString(local(e.data_file.file_path))})`,
      );
      const sorted = [...rows].sort((a, b) =>
        a.file_path === b.file_path
          ? Number(a.pos) - Number(b.pos)
          : String(a.file_path) < String(b.file_path)
            ? -1
            : 1,
      );
      expect(rows).toEqual(sorted);
      expect(rows.every((r) => r.file_path === text('lower_bounds'))).toBe(true);
    }
  });

  it('keeps equality deletes for a table in floe.delete-mode=equality', async () => {
    // Act
    const live = await serveLive(wh.catalog, routeWith({ 'floe.delete-mode': 'equality' }), COLD, HOT);

    // Assess
    const expected = model(COLD, HOT);
    const { floe, duckdb } = await readBoth(live);
    expect(byId(floe)).toEqual(expected);
    expect(byId(duckdb)).toEqual(expected);
    const summary = currentSnapshot(live.metadata)!.summary;
    expect(summary['added-equality-deletes']).toBe('6');
    expect(summary['added-position-deletes']).toBeUndefined();
  });

  it('shows the model for random cold rows and tails, by floe and by DuckDB', async () => {
    const change = fc.tuple(
      fc.integer({ min: 0, max: 7 }),
      fc.option(fc.constantFrom('a', 'b', 'c'), { nil: null, freq: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(change, { minLength: 1, maxLength: 12 }),
        fc.array(change, { minLength: 1, maxLength: 12 }),
        async (cold, hot) => {
          // Prepare: a fresh warehouse per case
          const own = await tempWarehouse();
          try {
            // Act
            const live = await serveLive(own.catalog, routeWith(), cold, hot);

            // Assess
            const expected = model(cold, hot);
            const { floe, duckdb } = await readBoth(live);
            expect(byId(floe)).toEqual(expected);
            expect(floe).toHaveLength(Object.keys(expected).length);
            expect(byId(duckdb)).toEqual(expected);
            expect(duckdb).toHaveLength(Object.keys(expected).length);
            const entries = await liveEntries(live);
            expect(entries.some((e) => e.data_file.content === 2)).toBe(false);
          } finally {
            await own.cleanup();
          }
        },
      ),
      { numRuns: 8, seed: 3612 },
    );
  });
});

describe('the form of the tail’s deletes', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('is position for a v2 or v3 table in the default mode (vectors on v3), equality in equality mode', async () => {
    // Prepare
    await ingestEvent({ catalog: wh.catalog, routes: [routeWith()] }, eventOf(COLD, 0));
    const md = (await wh.catalog.loadTable(routeWith().table)).metadata;
    const equality = { ...md, properties: { ...md.properties, 'floe.delete-mode': 'equality' } };

    // Act + Assess
    expect(tailDeleteMode(md)).toBe('position');
    expect(tailDeleteMode(equality)).toBe('equality');
    // v3 deletes by position with deletion vectors (live-tail-v3.test.ts)
    expect(tailDeleteMode({ ...md, 'format-version': 3 })).toBe('position');
    expect(() => tailDeleteMode({ ...md, properties: { 'floe.delete-mode': 'both' } })).toThrow(
      /floe.delete-mode/,
    );
  });

  it('is part of the cache key, so a mode changed without a snapshot gets a folder of its own', async () => {
    // Prepare
    await ingestEvent({ catalog: wh.catalog, routes: [routeWith()] }, eventOf(COLD, 0));
    const table = await wh.catalog.loadTable(routeWith().table);
    const records = decodeEsmEvent(eventOf(HOT, COLD.length)).records;
    const mapped = await mapHotset(table.metadata, routeWith(), 'upsert', 'evolve', records);
    const hotset: Hotset = {
      snapshotId: null,
      partitions: [],
      ranges: [],
      records: 0,
      mapped,
      identityMismatches: [],
      freshness: { newestRecordMs: null, readUpTo: [], hotRecords: 0 },
    };
    const equality: LoadedTable = {
      ...table,
      metadata: {
        ...table.metadata,
        properties: { ...table.metadata.properties, 'floe.delete-mode': 'equality' },
      },
    };

    // Act + Assess
    expect(liveCacheKey(table, hotset)).not.toBe(liveCacheKey(equality, hotset));
    expect(liveCacheKey(table, hotset)).toBe(liveCacheKey({ ...table }, hotset));
  });
});
