/**
 * Sections "scan" and "compaction": an orders table of many small files (one per ingest batch), a
 * filtered scan (`country = 'DE'`) over them, compaction of them into one file (plan, compact, commit
 * through floe's maintenance tasks), then the filtered scan and a point query (`order_id = …`) on the
 * compacted table, floe's pruning inside files on and off. Anchor: DuckDB, one thread, in the same
 * process, reading the same Parquet files (a list of paths: no Iceberg planning) and, for compaction,
 * writing them as one ZSTD Parquet file. Runs alternate floe / DuckDB; CPU medians (process user +
 * system) next to wall medians.
 *
 * Compaction consumes its input, so the ingest fills `repeats + 1` identical tables at once (one route
 * per table on the same topic, same seeds): floe compacts the first as a warm-up (as DuckDB's first
 * COPY is one), then one table per timed run, alternating with DuckDB's runs — both sides are warm
 * medians. The scan section reads the last table, before and after the bench compacts it. Each
 * timed run here, scan or compaction, floe's or DuckDB's, follows a young-generation GC, not the forced
 * full GC of stats.ts `timed`:
 * a forced full GC keeps none of the objects V8's optimized code holds weakly, so every floe run after
 * one re-optimized ~150 functions (~0.4 s of compiler CPU on V8's background threads, charged to the
 * run) — a cost no warm process pays, and DuckDB's native code never does. Old-space garbage is
 * collected as a long-running process collects it, by whichever run allocates when it is due (floe's;
 * DuckDB's COPY allocates next to nothing on the JS heap).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import { fromFileUri } from '../../functions/core/io/location.js';
import { ingestEvent } from '../../functions/core/ingest/ingest-event.js';
import { parseRoutes } from '../../functions/core/routing/routes.js';
import { commitTask, compactTask, planTask } from '../../functions/core/maintenance/maintenance-tasks.js';
import { parseExpression } from '../../functions/core/scan/parse-expression.js';
import { planScan } from '../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../functions/core/scan/read-scan.js';
import type { LoadedTable } from '../../functions/core/catalog/catalog.js';
import type { FileIO } from '../../functions/core/io/file-io.js';
import { makeOrderMessages, makeOrdersEvent, ORDERS_TOPIC, readOrdersSchema } from './orders-batch.js';
import { median, timed } from './stats.js';

export interface ScanSettings {
  files: number;
  recordsPerFile: number;
  repeats: number;
}

export interface TimedPair {
  floe_wall_ms: number;
  floe_cpu_ms: number;
  duckdb_wall_ms: number;
  duckdb_cpu_ms: number;
  rows: number;
  /** DuckDB CPU ÷ floe CPU (≥ target means floe is at least that share of DuckDB's speed). */
  ratio_cpu: number;
  ratio_wall: number;
}

export interface FloeOnly {
  floe_wall_ms: number;
  floe_cpu_ms: number;
}

/** What one run of a query fetched of its data files (counted on the table's FileIO). */
export interface FetchFigures {
  /** Data-file requests (whole reads, range reads, stats). */
  requests: number;
  bytes_fetched: number;
  /** The bytes a read of every planned file whole would fetch (the scan before range reads). */
  bytes_whole_file: number;
}

export interface ScanFigures {
  files: number;
  records: number;
  filter_small_files: TimedPair;
  filter_compacted: TimedPair;
  point_compacted: TimedPair;
  /** The same queries with pruning inside files off (the read path before it), floe only. */
  point_compacted_unpruned: FloeOnly;
  filter_small_files_unpruned: FloeOnly;
  filter_compacted_unpruned: FloeOnly;
  filter_ratio: number;
  filter_ratio_compacted: number;
  point_ratio_compacted: number;
  /** Data bytes and requests of one run of each query on the compacted table. */
  point_fetch_compacted: FetchFigures;
  filter_fetch_compacted: FetchFigures;
  point_bytes_fetched_compacted: number;
  point_bytes_whole_file_compacted: number;
}

export interface CompactionFigures {
  files_in: number;
  records: number;
  bytes_in: number;
  floe_wall_ms: number;
  floe_cpu_ms: number;
  duckdb_wall_ms: number;
  duckdb_cpu_ms: number;
  floe_mb_per_s_cpu: number;
  duckdb_mb_per_s_cpu: number;
  /** floe MB/s ÷ DuckDB MB/s on CPU time (target ≥ 0.7). */
  ratio: number;
  /** Timed runs on each side (after one warm-up each). */
  runs: number;
  /** floe's CPU by maintenance task, medians over the timed runs (their sum is near floe_cpu_ms). */
  floe_plan_cpu_ms: number;
  floe_compact_cpu_ms: number;
  floe_commit_cpu_ms: number;
}

const FIRST_ORDER_ID = 70_000_000;

/** A timed run after a young-generation GC only (see the module header). */
const timedWarm = <T>(fn: () => Promise<T>) => timed(fn, { youngGcFirst: true });
const sql = (text: string) => `'${text.replace(/'/g, "''")}'`;

export async function runScanAndCompaction(
  settings: ScanSettings,
  progress: (line: string) => void,
): Promise<{ scan: ScanFigures; compaction: CompactionFigures }> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-scan-'));
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const duck = await instance.connect();
  try {
    const catalog = new EmbeddedCatalog({ warehouse: dir });
    // One table per compaction run (the warm-up's first), all from the same events; the scan reads the last.
    const tables = Array.from({ length: settings.repeats + 1 }, (_, r) =>
      r === settings.repeats ? 'bench.scan' : `bench.scan_${r}`,
    );
    const routes = parseRoutes(
      tables.map((table) => ({ table, topics: [ORDERS_TOPIC], schema: readOrdersSchema() })),
    );
    for (let i = 0; i < settings.files; i++) {
      const messages = makeOrderMessages({
        records: settings.recordsPerFile,
        partitions: 1,
        seed: i,
        firstOrderId: FIRST_ORDER_ID + i * settings.recordsPerFile,
      });
      await ingestEvent({ catalog, routes }, makeOrdersEvent(messages, i * settings.recordsPerFile));
    }
    const ident = routes[settings.repeats].table;
    progress(
      `scan: ${settings.files} files of ${settings.recordsPerFile} records ingested into ${tables.length} tables`,
    );
    const records = settings.files * settings.recordsPerFile;

    const small = await catalog.loadTable(ident);
    const smallFiles = (await planScan(small)).tasks.map((t) => t.file);
    const smallPaths = smallFiles.map((f) => fromFileUri(f.file_path));
    const bytesIn = smallFiles.reduce((s, f) => s + Number(f.file_size_in_bytes), 0);
    const filterSmall = await pair(
      settings.repeats,
      () => floeScan(small, "country = 'DE'"),
      () => duckCount(duck, smallPaths, "country = 'DE'"),
    );
    const filterSmallUnpruned = await repeat(settings.repeats, () =>
      floeScan(small, "country = 'DE'", false),
    );
    progress(`scan: filter on ${settings.files} files: floe ${filterSmall.floe_cpu_ms.toFixed(0)} ms CPU`);

    // Compaction: floe's plan → compact → commit, against DuckDB writing the same rows as one file.
    // Each floe run compacts its own table (a run consumes its input); run 0 is floe's warm-up.
    const ctx = { catalog };
    const compactTable = (table: string) =>
      timedWarm(async () => {
        const plan = await cpuOf(() => planTask(ctx, { table }));
        const compact = await cpuOf(async () => {
          const rewrites = [];
          for (const group of plan.result.groups) rewrites.push(await compactTask(ctx, { table, group }));
          return rewrites;
        });
        const commit = await cpuOf(() =>
          commitTask(ctx, { table, plan: plan.result, rewrites: compact.result }),
        );
        return { plan: plan.cpuMs, compact: compact.cpuMs, commit: commit.cpuMs };
      });
    const duckCompact = (r: number) =>
      timedWarm(() =>
        duck.run(
          `COPY (SELECT * FROM read_parquet([${smallPaths.map(sql).join(', ')}])) TO ${sql(join(dir, `duck-compacted-${r}.parquet`))} (FORMAT parquet, COMPRESSION zstd)`,
        ),
      );
    await compactTable(tables[0]);
    await duckCompact(0);
    const floeWall: number[] = [];
    const floeCpu: number[] = [];
    const phases = { plan: [] as number[], compact: [] as number[], commit: [] as number[] };
    const duckWall: number[] = [];
    const duckCpu: number[] = [];
    for (let r = 1; r <= settings.repeats; r++) {
      const f = await compactTable(tables[r]);
      floeWall.push(f.wallMs);
      floeCpu.push(f.cpuMs);
      phases.plan.push(f.result.plan);
      phases.compact.push(f.result.compact);
      phases.commit.push(f.result.commit);
      const d = await duckCompact(r);
      duckWall.push(d.wallMs);
      duckCpu.push(d.cpuMs);
    }
    const mb = bytesIn / 1e6;
    const floeMs = median(floeCpu);
    const compaction: CompactionFigures = {
      files_in: settings.files,
      records,
      bytes_in: bytesIn,
      floe_wall_ms: median(floeWall),
      floe_cpu_ms: floeMs,
      duckdb_wall_ms: median(duckWall),
      duckdb_cpu_ms: median(duckCpu),
      floe_mb_per_s_cpu: mb / (floeMs / 1000),
      duckdb_mb_per_s_cpu: mb / (median(duckCpu) / 1000),
      ratio: median(duckCpu) / floeMs,
      runs: settings.repeats,
      floe_plan_cpu_ms: median(phases.plan),
      floe_compact_cpu_ms: median(phases.compact),
      floe_commit_cpu_ms: median(phases.commit),
    };
    progress(
      `compaction: floe ${floeMs.toFixed(0)} ms CPU (plan ${compaction.floe_plan_cpu_ms.toFixed(0)}, compact ${compaction.floe_compact_cpu_ms.toFixed(0)}, commit ${compaction.floe_commit_cpu_ms.toFixed(0)}), DuckDB ${median(duckCpu).toFixed(0)} ms`,
    );

    const compacted = await catalog.loadTable(ident);
    const compactedFiles = (await planScan(compacted)).tasks.map((t) => fromFileUri(t.file.file_path));
    if (compactedFiles.length >= smallFiles.length) throw new Error('compaction left the small files');
    const filterCompacted = await pair(
      settings.repeats,
      () => floeScan(compacted, "country = 'DE'"),
      () => duckCount(duck, compactedFiles, "country = 'DE'"),
    );
    const filterCompactedUnpruned = await repeat(settings.repeats, () =>
      floeScan(compacted, "country = 'DE'", false),
    );
    const target = FIRST_ORDER_ID + Math.floor(records * 0.37);
    const point = await pair(
      settings.repeats,
      () => floeScan(compacted, `order_id = ${target}`),
      () => duckCount(duck, compactedFiles, `order_id = ${target}`),
    );
    if (point.rows !== 1) throw new Error(`point query found ${point.rows} rows`);
    const unpruned = await repeat(settings.repeats, () => floeScan(compacted, `order_id = ${target}`, false));
    const pointFetch = await fetchOf(compacted, `order_id = ${target}`);
    const filterFetch = await fetchOf(compacted, "country = 'DE'");
    progress(
      `scan: point query fetched ${pointFetch.bytes_fetched} of ${pointFetch.bytes_whole_file} bytes in ${pointFetch.requests} requests`,
    );
    return {
      compaction,
      scan: {
        files: settings.files,
        records,
        filter_small_files: filterSmall,
        filter_compacted: filterCompacted,
        point_compacted: point,
        point_compacted_unpruned: unpruned,
        filter_small_files_unpruned: filterSmallUnpruned,
        filter_compacted_unpruned: filterCompactedUnpruned,
        filter_ratio: filterSmall.ratio_cpu,
        filter_ratio_compacted: filterCompacted.ratio_cpu,
        point_ratio_compacted: point.ratio_cpu,
        point_fetch_compacted: pointFetch,
        filter_fetch_compacted: filterFetch,
        point_bytes_fetched_compacted: pointFetch.bytes_fetched,
        point_bytes_whole_file_compacted: pointFetch.bytes_whole_file,
      },
    };
  } finally {
    duck.closeSync();
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Process CPU of one step inside a timed run (no GC of its own). */
async function cpuOf<T>(fn: () => Promise<T>): Promise<{ result: T; cpuMs: number }> {
  const cpu0 = process.cpuUsage();
  const result = await fn();
  const cpu = process.cpuUsage(cpu0);
  return { result, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Plan + read of the live rows matching `filter` (every column), as a query engine would return them. */
async function floeScan(table: LoadedTable, filter: string, pruneInFiles = true): Promise<number> {
  const expr = parseExpression(filter);
  const plan = await planScan(table, { filter: expr });
  return (await readScanRows(table, plan, { filter: expr, pruneInFiles })).length;
}

/** One run of a filtered scan on a FileIO that counts the requests and bytes of data files. */
async function fetchOf(table: LoadedTable, filter: string): Promise<FetchFigures> {
  const tally = { requests: 0, bytes: 0 };
  const io = table.io;
  const isData = (location: string) => location.endsWith('.parquet');
  const counted = <T>(location: string, result: Promise<T>, size: (r: T) => number) =>
    result.then((r) => {
      if (isData(location)) {
        tally.requests++;
        tally.bytes += size(r);
      }
      return r;
    });
  const counting: FileIO = {
    ...io,
    read: (l) => counted(l, io.read(l), (b) => b.byteLength),
    readRange: (l, o, n) => counted(l, io.readRange(l, o, n), (b) => b.byteLength),
    stat: (l) => counted(l, io.stat(l), () => 0),
    write: (l, d) => io.write(l, d),
    writeIfAbsent: (l, d) => io.writeIfAbsent(l, d),
    exists: (l) => io.exists(l),
    delete: (l) => io.delete(l),
    list: (p) => io.list(p),
  };
  const expr = parseExpression(filter);
  const countedTable = { ...table, io: counting };
  const plan = await planScan(countedTable, { filter: expr });
  await readScanRows(countedTable, plan, { filter: expr });
  const whole = plan.tasks.reduce((n, t) => n + Number(t.file.file_size_in_bytes), 0);
  return { requests: tally.requests, bytes_fetched: tally.bytes, bytes_whole_file: whole };
}

/** DuckDB materialising the matching rows (every column), so both sides decode what they return. */
async function duckCount(duck: DuckDBConnection, paths: string[], where: string): Promise<number> {
  const reader = await duck.runAndReadAll(
    `SELECT * FROM read_parquet([${paths.map(sql).join(', ')}]) WHERE ${where}`,
  );
  return reader.getRows().length;
}

async function repeat(
  n: number,
  run: () => Promise<number>,
): Promise<{ floe_wall_ms: number; floe_cpu_ms: number }> {
  const wall: number[] = [];
  const cpu: number[] = [];
  await run(); // warm-up
  for (let i = 0; i < n; i++) {
    const t = await timedWarm(run);
    wall.push(t.wallMs);
    cpu.push(t.cpuMs);
  }
  return { floe_wall_ms: median(wall), floe_cpu_ms: median(cpu) };
}

/** floe and DuckDB alternating, after one warm-up each; medians. Both must return the same row count. */
async function pair(n: number, floe: () => Promise<number>, duck: () => Promise<number>): Promise<TimedPair> {
  const fw: number[] = [];
  const fc: number[] = [];
  const dw: number[] = [];
  const dc: number[] = [];
  const rows = await floe();
  const duckRows = await duck();
  if (rows !== duckRows) throw new Error(`floe returned ${rows} rows, DuckDB ${duckRows}`);
  for (let i = 0; i < n; i++) {
    const f = await timedWarm(floe);
    const d = await timedWarm(duck);
    fw.push(f.wallMs);
    fc.push(f.cpuMs);
    dw.push(d.wallMs);
    dc.push(d.cpuMs);
  }
  return {
    floe_wall_ms: median(fw),
    floe_cpu_ms: median(fc),
    duckdb_wall_ms: median(dw),
    duckdb_cpu_ms: median(dc),
    rows,
    ratio_cpu: median(dc) / median(fc),
    ratio_wall: median(dw) / median(fw),
  };
}
