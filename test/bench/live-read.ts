/**
 * Section "live": one table from Kafka and Iceberg (issue 19), on librdkafka's mock broker (`kcat`,
 * started here and stopped by its PID; without kcat the section is skipped with the reason).
 *
 * - freshness_ms: one record with a unique id produced to Kafka (acks all) → that row read through
 *   `floe serve --live` (a child process on a free loopback port over an embedded warehouse with a
 *   committed table) by floe's own REST catalog client and scan, polling load-table + scan without a
 *   pause. Median of N trials; the serve process's CPU (user + system from /proc, every thread) beside it.
 * - load_ms (first): one load-table of `floe serve --live` with a fresh tail of `tail_records` records
 *   (the tail read from Kafka, mapped, written as Parquet + manifests to the live cache); load_cached_ms:
 *   the same load again (the cache reused). Each trial adds one record to the tail, so every first load
 *   writes a new cache folder; the serve process is warmed by a load before the tail is produced.
 * - concurrent_*: `concurrent_loads` (200) load-table requests at once on a serve process of its own over
 *   the same table and tail (live-concurrent.ts): wall time, the process's RSS before and its peak.
 * - scan_live_ms: `readLiveTable` in this process over the same table and tail (cold rows + the tail
 *   read and mapped), and one `floe scan --live --json` as a child process (node + tsx start included).
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { measureConcurrentLoads } from './live-concurrent.js';
import { median } from './stats.js';

export interface LiveFigures {
  /** Median: produce of one record → its row seen through floe serve --live (REST client + scan). */
  freshness_ms: number;
  /** Median CPU of the serve process over those trials. */
  freshness_serve_cpu_ms: number;
  /** Median load-table + scan round trips until the row was there. */
  freshness_polls: number;
  /** Median time of the produce alone (acks all) within freshness_ms. */
  freshness_produce_ms: number;
  freshness_trials: number;
  /** Records committed in the table under the tail. */
  committed_records: number;
  /** Records in the tail of the first load trial (each further trial adds one); `<n>` in the keys below. */
  tail_records: number;
  /** `10k` or `1k`: the tail the keys below name (load_ms_10k_tail, ...). */
  tail: string;
  /** Data files of the live snapshot (first load). */
  live_data_files: number;
  /** Load-table requests sent at once (concurrent_ms_<n>_tail, concurrent_peak_rss_mb_<n>_tail). */
  concurrent_loads: number;
  /** RSS of that serve process right before the concurrent loads. */
  concurrent_rss_before_mb: number;
  load_trials: number;
  /**
   * load_ms_<n>_tail, load_cpu_ms_<n>_tail (the serve process), load_ms_<n>_tail_cached,
   * load_cpu_ms_<n>_tail_cached; scan_live_ms_<n>_tail, scan_live_cpu_ms_<n>_tail (readLiveTable, this
   * process); scan_live_cli_ms_<n>_tail (one `floe scan --live --json`, node + tsx start included).
   */
  [key: `${string}_tail` | `${string}_tail_cached`]: number;
}

/** The per-tail figures, by name. */
export function tailFigure(f: LiveFigures, name: string, cached = false): number {
  return f[`${name}_${f.tail}_tail${cached ? '_cached' : ''}` as `${string}_tail`] ?? Number.NaN;
}

const CLOCK_TICK_MS = 10; // USER_HZ = 100 on Linux

/** User + system CPU of a process (every thread), from /proc/<pid>/stat; NaN where there is no /proc. */
function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): utime is field 14, stime field 15
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
  } catch {
    return Number.NaN;
  }
}

const ID = { namespace: ['app'], name: 'events' };
const COMMITTED = 1_000;

export async function runLiveRead(
  settings: {
    tailRecords: number;
    freshnessTrials: number;
    loadTrials: number;
    scanRepeats: number;
    concurrentLoads: number;
  },
  progress: (line: string) => void,
): Promise<LiveFigures | { skipped: string }> {
  // Imported here: report.ts imports this file for liveText, and the bench's other sections need none of it.
  const { kafkaFromOptions, liveRouteFor, parseLiveArgs } = await import(
    '../../functions/cli/live-options.js'
  );
  const { EmbeddedCatalog } = await import('../../functions/core/catalog/embedded-catalog.js');
  const { RestCatalog } = await import('../../functions/core/catalog/rest/rest-catalog.js');
  const { readLiveTable } = await import('../../functions/core/live/read-live-table.js');
  const { kafkaClient, makeWarehouse, produce } = await import('../integration/kafka/kafka-kit.js');
  const { commitAll, readServed, scanLive, startServe, TABLE } = await import(
    '../integration/live/live-kit.js'
  );
  const { kcatAvailable, startMockKafka } = await import('../support/kafka-broker.js');
  if (!kcatAvailable()) return { skipped: 'kcat not found on PATH (apt-get install -y kcat)' };
  progress('live: starting the mock Kafka broker (kcat)');
  const broker = await startMockKafka(1);
  const folders: string[] = [];
  try {
    const bootstrap = broker.bootstrapServers;
    const kafka = kafkaClient(bootstrap);
    const table = async (name: string) => {
      const { dir, schemaFile } = await makeWarehouse();
      folders.push(join(dir, '..'));
      const topic = `bench-${name}-${Date.now()}`;
      await produce(kafka, topic, 0, COMMITTED, 500);
      await commitAll(bootstrap, topic, dir, `g-${topic}`, ['--schema', schemaFile]);
      return { dir, topic };
    };

    // 1. freshness
    progress(`live: committing ${COMMITTED} records, then ${settings.freshnessTrials} freshness trials`);
    const fresh = await table('fresh');
    const freshness: number[] = [];
    const freshnessCpu: number[] = [];
    const polls: number[] = [];
    const produceMs: number[] = [];
    const served = await startServe(fresh.dir, ['--live', '--bootstrap-servers', bootstrap]);
    const producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    try {
      await readServed(served.uri); // warm: the serve process's Kafka client connected, code loaded
      for (let i = 0; i < settings.freshnessTrials; i++) {
        const id = 1_000_000 + i;
        const cpu0 = processCpuMs(served.floe.child.pid);
        const t0 = performance.now();
        await producer.send({
          topic: fresh.topic,
          acks: -1,
          messages: [
            { partition: id % 4, key: `key-${id}`, value: JSON.stringify({ id, name: `fresh-${id}` }) },
          ],
        });
        produceMs.push(performance.now() - t0);
        let n = 0;
        for (;;) {
          n++;
          const { rows } = await readServed(served.uri);
          if (rows.some((r) => Number(r.id) === id)) break;
          if (performance.now() - t0 > 60_000) throw new Error(`record ${id} not visible within 60 s`);
        }
        freshness.push(performance.now() - t0);
        freshnessCpu.push(processCpuMs(served.floe.child.pid) - cpu0);
        polls.push(n);
      }
    } finally {
      await producer.disconnect();
      await served.stop();
    }

    // 2. one load with a tail of tailRecords records, first and cached; then the live scan
    progress(`live: committing ${COMMITTED} records, then a tail of ${settings.tailRecords}`);
    const big = await table('tail');
    const load: number[] = [];
    const loadCpu: number[] = [];
    const cached: number[] = [];
    const cachedCpu: number[] = [];
    let liveFiles = 0;
    const tailServe = await startServe(big.dir, ['--live', '--bootstrap-servers', bootstrap]);
    try {
      const client = new RestCatalog({ uri: tailServe.uri });
      const pid = tailServe.floe.child.pid;
      await client.loadTable(ID); // warm, on an empty tail
      await produce(kafka, big.topic, COMMITTED, settings.tailRecords, 500);
      for (let i = 0; i < settings.loadTrials; i++) {
        if (i > 0) await produce(kafka, big.topic, COMMITTED + settings.tailRecords + i - 1, 1);
        progress(`live: load trial ${i + 1}/${settings.loadTrials}`);
        let cpu0 = processCpuMs(pid);
        let t0 = performance.now();
        const first = await client.loadTable(ID);
        load.push(performance.now() - t0);
        loadCpu.push(processCpuMs(pid) - cpu0);
        const live = first.metadata.snapshots.find(
          (s) => s['snapshot-id'] === first.metadata['current-snapshot-id'],
        );
        if (live?.summary['floe.live'] !== 'true') throw new Error('the served table has no live snapshot');
        const expected = settings.tailRecords + i;
        if (live.summary['added-records'] !== String(expected)) {
          throw new Error(`the live snapshot adds ${live.summary['added-records']} records, not ${expected}`);
        }
        if (i === 0) liveFiles = Number(live.summary['added-data-files'] ?? Number.NaN);
        cpu0 = processCpuMs(pid);
        t0 = performance.now();
        const again = await client.loadTable(ID);
        cached.push(performance.now() - t0);
        cachedCpu.push(processCpuMs(pid) - cpu0);
        if (again.metadataLocation !== first.metadataLocation)
          throw new Error('the second load did not reuse the cache');
      }
    } finally {
      await tailServe.stop();
    }
    progress(`live: ${settings.concurrentLoads} concurrent loads on a fresh serve process`);
    const concurrent = await measureConcurrentLoads(
      () => startServe(big.dir, ['--live', '--bootstrap-servers', bootstrap]),
      settings.concurrentLoads,
      settings.tailRecords + settings.loadTrials - 1,
    );

    progress(`live: readLiveTable × ${settings.scanRepeats}, one floe scan --live`);
    const values = parseLiveArgs(
      ['--warehouse', big.dir, '--table', TABLE, '--bootstrap-servers', bootstrap],
      'scan',
    );
    const catalog = new EmbeddedCatalog({ warehouse: big.dir });
    const liveKafka = await kafkaFromOptions(values);
    const expectedRows = COMMITTED + settings.tailRecords + settings.loadTrials - 1;
    const scanMs: number[] = [];
    const scanCpu: number[] = [];
    for (let i = 0; i <= settings.scanRepeats; i++) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const loaded = await catalog.loadTable(ID);
      const view = await readLiveTable({
        catalog,
        table: ID,
        loaded,
        route: await liveRouteFor(values, loaded),
        kafka: liveKafka,
      });
      const wall = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      if (view.rows.length !== expectedRows)
        throw new Error(`readLiveTable: ${view.rows.length} rows, not ${expectedRows}`);
      if (i === 0) continue; // the first connects the Kafka client
      scanMs.push(wall);
      scanCpu.push((cpu.user + cpu.system) / 1000);
    }
    const t0 = performance.now();
    const cli = await scanLive(bootstrap, big.dir);
    const cliMs = performance.now() - t0;
    if (cli.rows.length !== expectedRows)
      throw new Error(`floe scan --live: ${cli.rows.length} rows, not ${expectedRows}`);

    const tail =
      settings.tailRecords % 1000 === 0 ? `${settings.tailRecords / 1000}k` : String(settings.tailRecords);
    const perTail: Record<string, number> = {
      [`load_ms_${tail}_tail`]: median(load),
      [`load_cpu_ms_${tail}_tail`]: median(loadCpu),
      [`load_ms_${tail}_tail_cached`]: median(cached),
      [`load_cpu_ms_${tail}_tail_cached`]: median(cachedCpu),
      [`scan_live_ms_${tail}_tail`]: median(scanMs),
      [`scan_live_cpu_ms_${tail}_tail`]: median(scanCpu),
      [`scan_live_cli_ms_${tail}_tail`]: cliMs,
      [`concurrent_ms_${tail}_tail`]: concurrent.wall_ms,
      [`concurrent_peak_rss_mb_${tail}_tail`]: concurrent.peak_rss_mb,
    };
    return {
      freshness_ms: median(freshness),
      freshness_serve_cpu_ms: median(freshnessCpu),
      freshness_polls: median(polls),
      freshness_produce_ms: median(produceMs),
      freshness_trials: settings.freshnessTrials,
      committed_records: COMMITTED,
      tail_records: settings.tailRecords,
      tail,
      live_data_files: liveFiles,
      load_trials: settings.loadTrials,
      concurrent_loads: concurrent.loads,
      concurrent_rss_before_mb: concurrent.rss_before_mb,
      ...perTail,
    };
  } finally {
    await broker.stop();
    await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
  }
}

/** The section as text (report.ts passes its table formatter). */
export function liveText(
  f: LiveFigures,
  table: (headers: string[], rows: (string | number)[][]) => string,
): string {
  const t = (name: string, cached = false) => tailFigure(f, name, cached);
  return [
    `## 8. Live reads on the mock Kafka broker (${f.committed_records} records committed; medians)`,
    table(
      ['measure', 'wall ms', 'CPU ms', 'note'],
      [
        [
          'produce 1 record → its row through floe serve --live',
          f.freshness_ms,
          f.freshness_serve_cpu_ms,
          `serve process CPU; ${f.freshness_trials} trials, ${f.freshness_polls} load+scan polls, produce ${f.freshness_produce_ms.toFixed(1)} ms`,
        ],
        [
          `load table, ${f.tail_records}-record tail, first (cache written)`,
          t('load_ms'),
          t('load_cpu_ms'),
          `serve process CPU; ${f.live_data_files} data file(s), ${f.load_trials} trials`,
        ],
        [
          `load table, same tail again (cache reused)`,
          t('load_ms', true),
          t('load_cpu_ms', true),
          'serve process CPU',
        ],
        [
          `${f.concurrent_loads} concurrent loads, same table and tail, fresh serve process`,
          t('concurrent_ms'),
          Number.NaN,
          `peak RSS ${t('concurrent_peak_rss_mb').toFixed(0)} MiB (${f.concurrent_rss_before_mb.toFixed(0)} MiB before)`,
        ],
        [
          `readLiveTable, ${f.tail_records}-record tail`,
          t('scan_live_ms'),
          t('scan_live_cpu_ms'),
          'in process',
        ],
        [
          `floe scan --live --json, same tail`,
          t('scan_live_cli_ms'),
          Number.NaN,
          'child process, node + tsx start included',
        ],
      ],
    ),
  ].join('\n');
}
