/**
 * Section "kafka-serve": cold-read throughput through `floe kafka-serve` against the broker itself,
 * measured in the same run. The same N records (4 partitions, ~200-byte JSON values) are produced to
 * librdkafka's mock cluster (kcat, started here and stopped by its PID; skipped without kcat) and
 * written to a table (ingestEvent on an embedded warehouse, offsets as produced). Then, alternating:
 *
 * - anchor: `kcat -C -o beginning -e` reading them from the mock broker directly;
 * - first: the same kcat through a fresh `floe kafka-serve` (every offset cold: the table's committed
 *   ranges hold them all), so every batch is built from the table on the way;
 * - warm_first: the same kcat, on that process, reading a second topic it has never served (a second
 *   table of the same records): the uncached read of a warm process, which is what a long-running
 *   endpoint's consumer sees for a range no one has read yet. A first read also pays the fresh
 *   process's first run of the decode/encode code (JIT warm-up). A second table rather than a tiny
 *   `--cache-mb`: the cache key holds the table's uuid, so nothing the warm-up built can answer it,
 *   while a cache too small for one partition's chunks would rebuild chunks mid-read and measure that;
 * - cached: the first topic again on that process, the batches already in its cache.
 *
 * Records/s and MB/s (the payload bytes kcat prints with %S, summed), wall time, and CPU: the server
 * side (the mock broker's kcat process, or the kafka-serve process, from /proc/<pid>/stat) and the
 * client (kcat, through /usr/bin/time). Every run must deliver all N records.
 *
 * N stays under ~5 MB per partition: librdkafka's mock broker keeps about that much of a partition's
 * log and drops older segments (a 200,000-record run read back 88,000 from the broker itself).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from './stats.js';

export interface KafkaServeFigures {
  records: number;
  /** Payload bytes (keys + values) one full read delivers through the broker. */
  payload_mb: number;
  repeats: number;
  anchor_wall_ms: number;
  anchor_records_per_s: number;
  anchor_mb_per_s: number;
  /** The mock broker's CPU (its kcat process) + the reading kcat's, per read. */
  anchor_server_cpu_ms: number;
  anchor_client_cpu_ms: number;
  first_wall_ms: number;
  first_records_per_s: number;
  first_mb_per_s: number;
  first_server_cpu_ms: number;
  warm_first_wall_ms: number;
  warm_first_records_per_s: number;
  warm_first_mb_per_s: number;
  warm_first_server_cpu_ms: number;
  cached_wall_ms: number;
  cached_records_per_s: number;
  cached_mb_per_s: number;
  /** The kafka-serve process's CPU per cached read (the mock broker's share, its ListOffsets answers, aside). */
  cached_server_cpu_ms: number;
  cached_client_cpu_ms: number;
  /** cached records/s ÷ anchor records/s (target ≥ 0.5). */
  ratio: number;
  /** first-read records/s ÷ anchor records/s. */
  ratio_first: number;
  /** uncached records/s in a process that has served a full read ÷ anchor records/s. */
  ratio_warm_first: number;
  /** The kafka-serve process's peak RSS (VmHWM) at the end. */
  serve_peak_rss_mb: number;
}

const CLOCK_TICK_MS = 10;
const PARTITIONS = 4;

function procStat(pid: number | 'self'): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
/** User + system CPU of a process (fields 14, 15). */
const cpuOf = (pid: number) => {
  const f = procStat(pid);
  return (Number(f[11]) + Number(f[12])) * CLOCK_TICK_MS;
};

/** One full read with kcat: records and payload bytes. */
async function kcatRead(
  bootstrap: string,
  topic: string,
  cpuFile: string,
): Promise<{ records: number; bytes: number; cpuMs: number }> {
  // Through /usr/bin/time: kcat's own user + system CPU, whatever else this process reaps meanwhile.
  const child = spawn(
    '/usr/bin/time',
    [
      '-f',
      '%U %S',
      '-o',
      cpuFile,
      'kcat',
      '-C',
      '-b',
      bootstrap,
      '-t',
      topic,
      '-o',
      'beginning',
      '-e',
      '-q',
      '-f',
      '%S %K\\n',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let records = 0;
  let bytes = 0;
  let rest = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      const [value, key] = line.split(' ');
      records++;
      bytes += Math.max(0, Number(value)) + Math.max(0, Number(key));
    }
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`kcat exited with ${code}: ${stderr}`);
  const [user, system] = readFileSync(cpuFile, 'utf8').trim().split(/\s+/).map(Number);
  return { records, bytes, cpuMs: (user + system) * 1000 };
}

export async function runKafkaServeBench(
  settings: { records: number; repeats: number },
  progress: (line: string) => void,
): Promise<KafkaServeFigures | { skipped: string }> {
  const { kcatAvailable, startMockKafka } = await import('../support/kafka-broker.js');
  if (!kcatAvailable()) return { skipped: 'kcat not found on PATH (apt-get install -y kcat)' };
  const { EmbeddedCatalog } = await import('../../functions/core/catalog/embedded-catalog.js');
  const { ingestEvent } = await import('../../functions/core/ingest/ingest-event.js');
  const { jsonEvent } = await import('../support/json-event.js');
  const { exitOf, kafkaClient, spawnFloe } = await import('../integration/kafka/kafka-kit.js');
  const folder = await mkdtemp(join(tmpdir(), 'floe-bench-kafka-serve-'));
  const warehouse = join(folder, 'wh');
  const topic = `bench-serve-${Date.now()}`;
  // The same records on a second topic and table, which the warm process reads uncached.
  const unreadTopic = `${topic}-unread`;
  const perPartition = Math.ceil(settings.records / PARTITIONS);
  const n = perPartition * PARTITIONS;
  const recordValue = (partition: number, offset: number) => ({
    id: partition * 10_000_000 + offset,
    name: `customer-${offset % 997}`,
    note: `order ${offset} of partition ${partition} ${'x'.repeat(120 + (offset % 40))}`,
  });
  const routeFor = (name: string, routeTopic: string) => ({
    table: { namespace: ['bench'], name },
    topics: [routeTopic],
    kafkaLineage: true,
    properties: {},
    schema: {
      type: 'struct' as const,
      'schema-id': 0,
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' as const },
        { id: 2, name: 'name', required: false, type: 'string' as const },
        { id: 3, name: 'note', required: false, type: 'string' as const },
      ],
    },
  });
  const routes = [routeFor('serve', topic), routeFor('serve_unread', unreadTopic)];
  progress(`kafka-serve: starting the mock broker, producing ${n} records to each of two topics and tables`);
  const broker = await startMockKafka(1);
  try {
    const producer = kafkaClient(broker.bootstrapServers).producer({ allowAutoTopicCreation: true });
    await producer.connect();
    const catalog = new EmbeddedCatalog({ warehouse });
    const STEP = 10_000;
    try {
      for (const [written, partition] of routes.flatMap((r) =>
        Array.from({ length: PARTITIONS }, (_, p) => [r.topics[0], p] as const),
      )) {
        for (let start = 0; start < perPartition; start += STEP) {
          const count = Math.min(STEP, perPartition - start);
          const values = Array.from({ length: count }, (_, i) => recordValue(partition, start + i));
          const key = (_: unknown, i: number) => `key-${start + i}`;
          for (let b = 0; b < count; b += 2_000)
            await producer.send({
              topic: written,
              acks: 1,
              messages: values
                .slice(b, b + 2_000)
                .map((v, i) => ({ partition, key: key(v, b + i), value: JSON.stringify(v) })),
            });
          await ingestEvent(
            { catalog, routes },
            jsonEvent(written, values, { partition, firstOffset: start, key }),
          );
        }
      }
    } finally {
      await producer.disconnect();
    }
    // warm_first is uncached only because the cache key starts with the table's uuid: check they differ.
    const uuids = await Promise.all(
      routes.map(async (r) => (await catalog.loadTable(r.table)).metadata['table-uuid']),
    );
    if (uuids[0] === uuids[1]) throw new Error(`the two bench tables share the table uuid ${uuids[0]}`);
    const serveOnce = async () => {
      const serve = spawnFloe([
        'kafka-serve',
        '--warehouse',
        warehouse,
        '--table',
        'bench.serve',
        '--table',
        'bench.serve_unread',
        '--bootstrap-servers',
        broker.bootstrapServers,
        '--port',
        '0',
      ]);
      await serve.waitFor(/Kafka endpoint 127\.0\.0\.1:\d+/, 1, 60_000);
      const endpoint = /Kafka endpoint (127\.0\.0\.1:\d+)/.exec(serve.output())![1];
      return {
        serve,
        endpoint,
        stop: async () => {
          serve.child.kill('SIGTERM');
          await exitOf(serve, 10_000).catch(() => undefined);
        },
      };
    };
    const timed = async (bootstrap: string, serverPid: number, readTopic = topic) => {
      const server0 = cpuOf(serverPid);
      const t0 = performance.now();
      const read = await kcatRead(bootstrap, readTopic, join(folder, 'kcat-cpu'));
      const wall = performance.now() - t0;
      if (read.records !== n)
        throw new Error(`kcat read ${read.records} records of ${readTopic} through ${bootstrap}, not ${n}`);
      return { wall, bytes: read.bytes, server: cpuOf(serverPid) - server0, client: read.cpuMs };
    };
    const brokerPid = broker.pid;
    if (brokerPid === undefined) throw new Error('the mock broker has no PID');
    const anchor: Awaited<ReturnType<typeof timed>>[] = [];
    const first: Awaited<ReturnType<typeof timed>>[] = [];
    const warmFirst: Awaited<ReturnType<typeof timed>>[] = [];
    const cached: Awaited<ReturnType<typeof timed>>[] = [];
    let peak = 0;
    await timed(broker.bootstrapServers, brokerPid); // warm the broker's pages and kcat
    for (let r = 0; r < settings.repeats; r++) {
      progress(
        `kafka-serve: round ${r + 1}/${settings.repeats} (broker; kafka-serve first read, warm uncached read, cached read)`,
      );
      anchor.push(await timed(broker.bootstrapServers, brokerPid));
      const s = await serveOnce();
      try {
        const pid = s.serve.child.pid!;
        first.push(await timed(s.endpoint, pid));
        warmFirst.push(await timed(s.endpoint, pid, unreadTopic));
        cached.push(await timed(s.endpoint, pid));
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        peak = Math.max(peak, Number(m?.[1]) / 1024);
      } finally {
        await s.stop();
      }
    }
    const rate = (runs: typeof anchor) => {
      const wall = median(runs.map((x) => x.wall));
      const bytes = median(runs.map((x) => x.bytes));
      return { wall, perS: n / (wall / 1000), mbPerS: bytes / 1e6 / (wall / 1000) };
    };
    const a = rate(anchor);
    const f = rate(first);
    const w = rate(warmFirst);
    const c = rate(cached);
    return {
      records: n,
      payload_mb: median(anchor.map((x) => x.bytes)) / 1e6,
      repeats: settings.repeats,
      anchor_wall_ms: a.wall,
      anchor_records_per_s: a.perS,
      anchor_mb_per_s: a.mbPerS,
      anchor_server_cpu_ms: median(anchor.map((x) => x.server)),
      anchor_client_cpu_ms: median(anchor.map((x) => x.client)),
      first_wall_ms: f.wall,
      first_records_per_s: f.perS,
      first_mb_per_s: f.mbPerS,
      first_server_cpu_ms: median(first.map((x) => x.server)),
      warm_first_wall_ms: w.wall,
      warm_first_records_per_s: w.perS,
      warm_first_mb_per_s: w.mbPerS,
      warm_first_server_cpu_ms: median(warmFirst.map((x) => x.server)),
      cached_wall_ms: c.wall,
      cached_records_per_s: c.perS,
      cached_mb_per_s: c.mbPerS,
      cached_server_cpu_ms: median(cached.map((x) => x.server)),
      cached_client_cpu_ms: median(cached.map((x) => x.client)),
      ratio: c.perS / a.perS,
      ratio_first: f.perS / a.perS,
      ratio_warm_first: w.perS / a.perS,
      serve_peak_rss_mb: peak,
    };
  } finally {
    await broker.stop();
    await rm(folder, { recursive: true, force: true });
  }
}

/** The section as text (report.ts passes its table formatter). */
export function kafkaServeText(
  f: KafkaServeFigures,
  table: (headers: string[], rows: (string | number)[][]) => string,
): string {
  const row = (name: string, wall: number, perS: number, mbPerS: number, server: number, note: string) => [
    name,
    Math.round(wall),
    Math.round(perS),
    mbPerS.toFixed(1),
    Math.round(server),
    note,
  ];
  return [
    `## kafka-serve: ${f.records} records (${f.payload_mb.toFixed(1)} MB of keys + values) read by kcat from the beginning; medians of ${f.repeats}`,
    table(
      ['read', 'wall ms', 'records/s', 'MB/s', 'server CPU ms', 'note'],
      [
        row(
          'kcat ← mock broker (anchor)',
          f.anchor_wall_ms,
          f.anchor_records_per_s,
          f.anchor_mb_per_s,
          f.anchor_server_cpu_ms,
          `kcat CPU ${Math.round(f.anchor_client_cpu_ms)} ms`,
        ),
        row(
          'kcat ← kafka-serve, first read',
          f.first_wall_ms,
          f.first_records_per_s,
          f.first_mb_per_s,
          f.first_server_cpu_ms,
          `fresh process, batches built from the table; ratio ${f.ratio_first.toFixed(2)}`,
        ),
        row(
          'kcat ← kafka-serve, warm uncached',
          f.warm_first_wall_ms,
          f.warm_first_records_per_s,
          f.warm_first_mb_per_s,
          f.warm_first_server_cpu_ms,
          `a topic this process never served, after a full read; ratio ${f.ratio_warm_first.toFixed(2)}`,
        ),
        row(
          'kcat ← kafka-serve, cached',
          f.cached_wall_ms,
          f.cached_records_per_s,
          f.cached_mb_per_s,
          f.cached_server_cpu_ms,
          `ratio ${f.ratio.toFixed(2)} (target ≥ 0.5); peak RSS ${Math.round(f.serve_peak_rss_mb)} MiB`,
        ),
      ],
    ),
  ].join('\n');
}
