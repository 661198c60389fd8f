/**
 * Section "keyed-deletes": what position deletes buy a keyed (CDC) table's readers, and what locating
 * the rows costs its writer.
 *
 * Two copies of one Debezium orders table on the embedded catalog (a temp warehouse), one with
 * `floe.delete-mode=position`, one with `equality`, get the same events through `ingestEvent` (the
 * core the Lambda handler runs): an initial load of `keys` creates in 10,000-record batches, then
 * `batches` batches of `changesPerBatch` changes (updates and deletes of random live keys, some new
 * keys; keyed-changes.ts).
 *
 * - Reads: a full scan of each copy (every live row, every column) by floe (plan + read) and by DuckDB
 *   (keyed-deletes-sql.ts: the spec's delete rules in SQL over the same files), alternating, after one
 *   warm-up each; medians of wall and process CPU. Every reader must return the stream's live keys.
 *   `read_ratio_*` = equality ÷ position (targets: floe ≥ 5 at 200 batches; DuckDB ≥ 0.8, targets.ts).
 * - Writes: for `locateBatches` further change batches (never committed), the keys a batch replaces or
 *   deletes are located through a `RowLocator` in the position copy (wall, CPU, bytes read through
 *   the table's FileIO), against writing the batch's Parquet files (data + position deletes,
 *   `writeChanges`), and beside them the equality copy's write of the same batch. Target: locate ≤ write.
 *
 * Each locator of locatorsFor is measured on the same batches.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Catalog, LoadedTable } from '../../functions/core/catalog/catalog.js';
import type { FileIO } from '../../functions/core/io/file-io.js';
import { keyIndexLocator, type LocatorCaches } from '../../functions/core/key-index/index-locator.js';
import { loadIndex } from '../../functions/core/key-index/index-table.js';
import { LiveFilesCache, sharedLiveFiles } from '../../functions/core/key-index/live-files.js';
import { IndexViewCache, sharedIndexViews } from '../../functions/core/key-index/view-cache.js';
import type { TableIdentifier } from '../../functions/core/spec/types.js';
import { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import { collapseChanges } from '../../functions/core/cdc/collapse-changes.js';
import { planDeleteScope } from '../../functions/core/cdc/delete-scope.js';
import { type RowLocation, type RowLocator, scanRowLocator } from '../../functions/core/cdc/locate-rows.js';
import { planChanges } from '../../functions/core/cdc/plan-changes.js';
import { writeChanges } from '../../functions/core/cdc/write-changes.js';
import { ingestEvent } from '../../functions/core/ingest/ingest-event.js';
import { evolutionPolicyOf } from '../../functions/core/mapping/evolution/evolution-policy.js';
import { decodeEsmEvent } from '../../functions/core/records/esm-event.js';
import { decodeFor } from '../../functions/core/routing/decode-for-route.js';
import { parseRoutes, type TableRoute } from '../../functions/core/routing/routes.js';
import { CountingFileIO } from '../../functions/core/scan/counting-file-io.js';
import { planScan } from '../../functions/core/scan/plan-scan.js';
import { readScan } from '../../functions/core/scan/read-scan.js';
import { currentSchema } from '../../functions/core/spec/metadata.js';
import { KeyedChangeStream } from './keyed-changes.js';
import { duckdbLiveCount, liveRowsSql, scanFiles } from './keyed-deletes-sql.js';
import { makeOrdersEvent, type OrderMessage, ORDERS_TOPIC, readOrdersSchema } from './orders-batch.js';
import { collectGarbage, median, timed } from './stats.js';

/**
 * The row locators measured, by name, reading through `catalog` (whose tables read through `io`, so
 * the index's reads are counted too): the filtered scan, and the key index (key-index/), which must
 * answer every batch itself (a fallback to the scan fails the section), three ways:
 * - `index-cold`: a process's first batch (no view of the index, no manifests kept: the index is read whole);
 * - `index-incremental`: a view kept by this locator alone (`incremental`), which no commit tells of
 *   its entries: each batch reads what the previous batch's commit appended, as after another writer;
 * - `index`: the process's own view, which its commits (ingestEvent's index step) keep current: a warm
 *   Lambda's next batch.
 */
export function locatorsFor(
  catalog: Catalog,
  io: FileIO,
  incremental: LocatorCaches,
): Readonly<Record<string, RowLocator>> {
  const counted = new Proxy(catalog, {
    get(target, property) {
      if (property === 'loadTable')
        return async (id: TableIdentifier) => ({ ...(await target.loadTable(id)), io });
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const index = (caches: LocatorCaches) =>
    keyIndexLocator(
      counted,
      (reason) => {
        throw new Error(`keyed-deletes: the key index fell back to a scan: ${reason}`);
      },
      caches,
    );
  return {
    scan: scanRowLocator,
    'index-cold': index({ views: new IndexViewCache(), files: new LiveFilesCache() }),
    'index-incremental': index(incremental),
    index: index({ views: sharedIndexViews, files: sharedLiveFiles }),
  };
}

/** The locators in the order they run on each batch. */
const LOCATORS = ['scan', 'index-cold', 'index-incremental', 'index'] as const;

const MODES = ['position', 'equality'] as const;
type DeleteMode = (typeof MODES)[number];

export interface KeyedDeletesSettings {
  keys: number;
  batches: number;
  changesPerBatch: number;
  /** Records per initial-load batch. */
  loadBatch: number;
  /** Timed full scans per reader and copy (after one warm-up). */
  repeats: number;
  /** Change batches located, written (timed, not committed), then committed through ingestEvent. */
  locateBatches: number;
}

export interface ReadFigures {
  floe_wall_ms: number;
  floe_cpu_ms: number;
  duckdb_wall_ms: number;
  duckdb_cpu_ms: number;
  data_files: number;
  delete_files: number;
}

export interface LocateFigures {
  locator: string;
  /** Keys per batch that replace or delete a live row (each located to exactly one row). */
  keys_located: number;
  locate_wall_ms: number;
  locate_cpu_ms: number;
  locate_bytes_read: number;
  /** The position copy's write of the batch: data file + position (and key-versions) delete files. */
  write_wall_ms: number;
  write_cpu_ms: number;
  write_bytes: number;
  /** The equality copy's write of the same batch (data file + equality delete file), for comparison. */
  equality_write_cpu_ms: number;
  /** locate CPU ÷ write CPU (target ≤ 1). */
  locate_write_ratio: number;
}

/** The process's view of the key index after the run (view-cache.ts). */
export interface IndexViewFigures {
  keys: number;
  /** KeyView.bytes: the view's own estimate, what the cache bounds. */
  estimated_mb: number;
  /** Heap + array buffers grown by building a cold view (after a full GC both sides). */
  measured_mb: number;
  /** The bound on all views (a quarter of this process's V8 heap limit). */
  bound_mb: number;
}

export interface KeyedDeletesFigures {
  keys: number;
  batches: number;
  changes_per_batch: number;
  live_rows: number;
  build_s: number;
  /** Medians over the change batches of one copy's `ingestEvent` (the CDC ingest path end to end). */
  ingest_batch_cpu_ms: Record<DeleteMode, number>;
  ingest_batch_wall_ms: Record<DeleteMode, number>;
  read: Record<DeleteMode, ReadFigures>;
  /** Full scan CPU with equality deletes ÷ with position deletes (targets.ts: floe ≥ 5, DuckDB ≥ 0.8). */
  read_ratio_floe: number;
  read_ratio_duckdb: number;
  read_ratio_floe_wall: number;
  read_ratio_duckdb_wall: number;
  locate: LocateFigures[];
  /** The scan locator's locate CPU ÷ the batch's write CPU (what the key index saves). */
  locate_write_ratio_scan: number;
  /** The key index's locate CPU ÷ the batch's write CPU, warm (target ≤ 1). */
  locate_write_ratio_index: number;
  /** The same, a process's first batch (the index read whole). */
  locate_write_ratio_index_cold: number;
  /** The same, reading what another writer appended since the last batch. */
  locate_write_ratio_index_incremental: number;
  index_view: IndexViewFigures;
}

const timedWarm = <T>(fn: () => Promise<T>) => timed(fn, { youngGcFirst: true });

/**
 * The section's settings: `FLOE_BENCH_KEYS`, `FLOE_BENCH_BATCHES` and `FLOE_BENCH_CHANGES` override
 * the scale (the full run: 1,000,000 keys, 200 batches of 1,000 changes);
 * `FLOE_BENCH_LOAD_BATCH` the records per initial-load batch (10,000: a Lambda batch; more loads 10M
 * keys in less time).
 * @throws Error for a value that is not a positive integer
 */
export function keyedDeletesSettings(
  quick: boolean,
  env: NodeJS.ProcessEnv = process.env,
): KeyedDeletesSettings {
  const positive = (name: string, fallback: number): number => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n <= 0)
      throw new Error(`${name} must be a positive integer, not '${text}'`);
    return n;
  };
  const keys = positive('FLOE_BENCH_KEYS', quick ? 20_000 : 100_000);
  return {
    keys,
    batches: positive('FLOE_BENCH_BATCHES', quick ? 50 : 200),
    // The proportion: 1,000 changes per batch over 1M keys.
    changesPerBatch: positive('FLOE_BENCH_CHANGES', Math.max(10, Math.round(keys / 1_000))),
    loadBatch: positive('FLOE_BENCH_LOAD_BATCH', 10_000),
    repeats: quick ? 2 : 3,
    locateBatches: quick ? 3 : 5,
  };
}

function routeFor(mode: DeleteMode): TableRoute[] {
  return parseRoutes([
    {
      table: `bench.keyed_${mode}`,
      topics: [ORDERS_TOPIC],
      schema: readOrdersSchema(),
      mode: 'debezium',
      identifierColumns: ['order_id'],
      properties: { 'floe.delete-mode': mode },
    },
  ]);
}

export async function runKeyedDeletes(
  settings: KeyedDeletesSettings,
  progress: (line: string) => void,
): Promise<KeyedDeletesFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-keyed-'));
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const duck = await instance.connect();
  try {
    const catalog = new EmbeddedCatalog({ warehouse: dir });
    const routes = { position: routeFor('position'), equality: routeFor('equality') };
    const stream = new KeyedChangeStream({
      keys: settings.keys,
      partitions: 3,
      loadBatch: settings.loadBatch,
      changesPerBatch: settings.changesPerBatch,
      seed: 29,
    });
    const started = performance.now();
    const ingestBoth = async (messages: OrderMessage[]) => {
      const event = makeOrdersEvent(messages, 0);
      const out = {} as Record<DeleteMode, { wallMs: number; cpuMs: number }>;
      for (const mode of MODES) {
        const t = await timedWarm(() => ingestEvent({ catalog, routes: routes[mode] }, event));
        const table = t.result.tables[0];
        if (table?.status !== 'committed' || table.deadLettered > 0)
          throw new Error(
            `keyed-deletes: a ${mode} batch ${table?.status} with ${table?.deadLettered} dead letters`,
          );
        out[mode] = t;
      }
      return out;
    };
    for (const messages of stream.loadBatches()) await ingestBoth(messages);
    progress(`keyed-deletes: ${settings.keys} keys loaded into both copies (${seconds(started)} s)`);
    const ingest = {
      position: { wall: [] as number[], cpu: [] as number[] },
      equality: { wall: [] as number[], cpu: [] as number[] },
    };
    for (let b = 0; b < settings.batches; b++) {
      const timings = await ingestBoth(stream.nextChanges().messages);
      for (const mode of MODES) {
        ingest[mode].wall.push(timings[mode].wallMs);
        ingest[mode].cpu.push(timings[mode].cpuMs);
      }
      if ((b + 1) % 50 === 0) progress(`keyed-deletes: ${b + 1} change batches (${seconds(started)} s)`);
    }
    const buildS = (performance.now() - started) / 1000;

    const tables = {
      position: await catalog.loadTable(routes.position[0].table),
      equality: await catalog.loadTable(routes.equality[0].table),
    };
    const read = await readFigures(tables, stream.liveKeys, settings.repeats, duck);
    progress(
      `keyed-deletes: full scan floe ${read.position.floe_cpu_ms.toFixed(0)} (position) / ${read.equality.floe_cpu_ms.toFixed(0)} (equality) ms CPU, DuckDB ${read.position.duckdb_cpu_ms.toFixed(0)} / ${read.equality.duckdb_cpu_ms.toFixed(0)}`,
    );
    const { locate, view } = await locateFigures(
      catalog,
      tables,
      routes,
      stream,
      settings.locateBatches,
      ingestBoth,
    );
    const ratioOf = (name: string) =>
      locate.find((l) => l.locator === name)?.locate_write_ratio ?? Number.NaN;
    for (const l of locate)
      progress(
        `keyed-deletes: ${l.locator} locator ${l.locate_cpu_ms.toFixed(0)} ms CPU (${(l.locate_bytes_read / 1e6).toFixed(1)} MB read) against the batch's write ${l.write_cpu_ms.toFixed(0)} ms`,
      );
    return {
      keys: settings.keys,
      batches: settings.batches,
      changes_per_batch: settings.changesPerBatch,
      live_rows: stream.liveKeys,
      build_s: buildS,
      ingest_batch_cpu_ms: { position: median(ingest.position.cpu), equality: median(ingest.equality.cpu) },
      ingest_batch_wall_ms: {
        position: median(ingest.position.wall),
        equality: median(ingest.equality.wall),
      },
      read,
      read_ratio_floe: read.equality.floe_cpu_ms / read.position.floe_cpu_ms,
      read_ratio_duckdb: read.equality.duckdb_cpu_ms / read.position.duckdb_cpu_ms,
      read_ratio_floe_wall: read.equality.floe_wall_ms / read.position.floe_wall_ms,
      read_ratio_duckdb_wall: read.equality.duckdb_wall_ms / read.position.duckdb_wall_ms,
      locate,
      locate_write_ratio_scan: ratioOf('scan'),
      locate_write_ratio_index: ratioOf('index'),
      locate_write_ratio_index_cold: ratioOf('index-cold'),
      locate_write_ratio_index_incremental: ratioOf('index-incremental'),
      index_view: view,
    };
  } finally {
    duck.closeSync();
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}

const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(0);

/** Every live row of the table through floe's reader (plan included, as a query engine pays it). */
async function floeFullScan(table: LoadedTable): Promise<number> {
  let rows = 0;
  for await (const _ of readScan(table, await planScan(table))) rows++;
  return rows;
}

async function readFigures(
  tables: Record<DeleteMode, LoadedTable>,
  liveKeys: number,
  repeats: number,
  duck: Awaited<ReturnType<DuckDBInstance['connect']>>,
): Promise<Record<DeleteMode, ReadFigures>> {
  const runs = {} as Record<
    DeleteMode,
    { floe: () => Promise<number>; duck: () => Promise<number>; files: ReturnType<typeof scanFiles> }
  >;
  for (const mode of MODES) {
    const table = tables[mode];
    const files = scanFiles(table, await planScan(table));
    const query = liveRowsSql(
      files,
      currentSchema(table.metadata).fields.map((f) => f.name),
    );
    runs[mode] = { floe: () => floeFullScan(table), duck: () => duckdbLiveCount(duck, query), files };
  }
  // Warm-ups, and the check: every reader returns exactly the stream's live keys.
  for (const mode of MODES) {
    for (const reader of ['floe', 'duck'] as const) {
      const rows = await runs[mode][reader]();
      if (rows !== liveKeys)
        throw new Error(
          `keyed-deletes: ${reader} read ${rows} rows of the ${mode} copy, the source holds ${liveKeys}`,
        );
    }
  }
  const samples = new Map<string, { wall: number[]; cpu: number[] }>();
  for (let r = 0; r < repeats; r++) {
    for (const mode of MODES) {
      for (const reader of ['floe', 'duck'] as const) {
        const t = await timedWarm(runs[mode][reader]);
        const s = samples.get(`${mode} ${reader}`) ?? { wall: [], cpu: [] };
        s.wall.push(t.wallMs);
        s.cpu.push(t.cpuMs);
        samples.set(`${mode} ${reader}`, s);
      }
    }
  }
  const of = (mode: DeleteMode, reader: string) => samples.get(`${mode} ${reader}`)!;
  const out = {} as Record<DeleteMode, ReadFigures>;
  for (const mode of MODES) {
    const { files } = runs[mode];
    out[mode] = {
      floe_wall_ms: median(of(mode, 'floe').wall),
      floe_cpu_ms: median(of(mode, 'floe').cpu),
      duckdb_wall_ms: median(of(mode, 'duck').wall),
      duckdb_cpu_ms: median(of(mode, 'duck').cpu),
      data_files: files.data.length,
      delete_files: files.positionDeletes.length + files.equalityDeletes.length,
    };
  }
  return out;
}

/** A batch decoded, planned and collapsed as ingest-cdc.ts does, on `table`'s snapshot. */
async function collapsedBatch(table: LoadedTable, route: TableRoute, messages: OrderMessage[]) {
  const records = decodeEsmEvent(makeOrdersEvent(messages, 0)).records;
  const decoded = await decodeFor(route, records);
  const policy = evolutionPolicyOf(table.metadata.properties, route.schemaEvolution);
  const plan = planChanges(table.metadata, decoded.decoded, route, 'debezium', policy);
  const letters = decoded.deadLetters.length + plan.schemaLetters.length + plan.extracted.deadLetters.length;
  if (letters > 0) throw new Error(`keyed-deletes: ${letters} dead letters in a change batch`);
  const columns = plan.settings.key;
  const { finals } = collapseChanges(plan.extracted.changes, columns);
  const scope = await planDeleteScope(
    table,
    columns.map((c) => c.id),
  );
  return { finals, columns, scope, schema: plan.reconciliation.schema };
}

const mb = (bytes: number) => bytes / 2 ** 20;
const heapBytes = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/**
 * The writer's figures over `batches` further change batches, each located by every locator and
 * written (timed, the files left uncommitted), then committed to both copies through `ingest` (so the
 * index moves by one batch's entries between batches, as in production).
 */
async function locateFigures(
  catalog: Catalog,
  start: Record<DeleteMode, LoadedTable>,
  routes: Record<DeleteMode, TableRoute[]>,
  stream: KeyedChangeStream,
  batches: number,
  ingest: (messages: OrderMessage[]) => Promise<unknown>,
): Promise<{ locate: LocateFigures[]; view: IndexViewFigures }> {
  const incremental: LocatorCaches = { views: new IndexViewCache(), files: new LiveFilesCache() };
  const samples = new Map<string, { keys: number[]; lw: number[]; lc: number[]; bytes: number[] }>();
  const w = { wall: [] as number[], cpu: [] as number[], bytes: [] as number[], eq: [] as number[] };
  let tables = start;
  // The incremental view starts where the process's own is: made once, untimed, its memory measured.
  const index = await loadIndex(catalog, routes.position[0].table);
  if (index === undefined) throw new Error('keyed-deletes: the position copy has no key index');
  collectGarbage();
  const before = heapBytes();
  if ((await incremental.views.view(index)) === undefined)
    throw new Error('keyed-deletes: the key index is too large for a view in this process');
  await incremental.files.filesOf(tables.position);
  collectGarbage();
  const measured = heapBytes() - before;
  for (let b = 0; b < batches; b++) {
    const { messages } = stream.nextChanges();
    const batch = await collapsedBatch(tables.position, routes.position[0], messages);
    const keys = batch.finals.filter((f) => f.deleteExisting).map((f) => f.key);
    let positions: RowLocation[] = [];
    for (const name of LOCATORS) {
      const counting = new CountingFileIO(tables.position.io);
      const locator = locatorsFor(catalog, counting, incremental)[name];
      const located = await timedWarm(() =>
        locator.locate({ ...tables.position, io: counting }, batch.columns, keys),
      );
      if (located.result.rows.length !== keys.length)
        throw new Error(
          `keyed-deletes: ${name} located ${located.result.rows.length} rows for ${keys.length} keys the table holds`,
        );
      const s = samples.get(name) ?? { keys: [], lw: [], lc: [], bytes: [] };
      samples.set(name, s);
      s.keys.push(keys.length);
      s.lw.push(located.wallMs);
      s.lc.push(located.cpuMs);
      s.bytes.push(counting.bytesRead);
      positions = located.result.rows;
    }
    const written = await timedWarm(() =>
      writeChanges(tables.position, batch.finals, batch.columns, batch.scope, {
        filePrefix: `bench-${b}`,
        schema: batch.schema,
        positions,
      }),
    );
    const eq = await collapsedBatch(tables.equality, routes.equality[0], messages);
    const eqWritten = await timedWarm(() =>
      writeChanges(tables.equality, eq.finals, eq.columns, eq.scope, {
        filePrefix: `bench-${b}`,
        schema: eq.schema,
      }),
    );
    w.wall.push(written.wallMs);
    w.cpu.push(written.cpuMs);
    w.bytes.push(
      [...written.result.dataFiles, ...written.result.deleteFiles].reduce(
        (n, f) => n + Number(f.file_size_in_bytes),
        0,
      ),
    );
    w.eq.push(eqWritten.cpuMs);
    await ingest(messages);
    tables = {
      position: await catalog.loadTable(routes.position[0].table),
      equality: await catalog.loadTable(routes.equality[0].table),
    };
  }
  const locate = LOCATORS.map((name): LocateFigures => {
    const s = samples.get(name)!;
    return {
      locator: name,
      keys_located: median(s.keys),
      locate_wall_ms: median(s.lw),
      locate_cpu_ms: median(s.lc),
      locate_bytes_read: median(s.bytes),
      write_wall_ms: median(w.wall),
      write_cpu_ms: median(w.cpu),
      write_bytes: median(w.bytes),
      equality_write_cpu_ms: median(w.eq),
      locate_write_ratio: median(s.lc) / median(w.cpu),
    };
  });
  const stats = sharedIndexViews.stats();
  return {
    locate,
    view: {
      keys: stats.keys,
      estimated_mb: mb(stats.bytes),
      measured_mb: mb(measured),
      bound_mb: mb(sharedIndexViews.maxBytes),
    },
  };
}
