/**
 * `npm run bench` — floe measured against anchors in the same run (see README.md here).
 *
 *   npm run bench                      full run (several minutes)
 *   npm run bench -- --quick           about a minute
 *   npm run bench -- --json            one JSON object on stdout (progress on stderr)
 *   npm run bench -- --only=ingest,memory
 *
 * Sections: ingest, hotspots, commit, contention, planning, memory, freshness, lambda, scan (with compaction),
 * scaling (with cost per GB), live, cli-help (`floe --help` against `node -e 0`), kafka-serve (cold reads
 * through `floe kafka-serve` against kcat reading the broker), keyed-deletes (a CDC
 * table's reads with position against equality deletes, and the writer's cost of locating rows;
 * FLOE_BENCH_KEYS / FLOE_BENCH_BATCHES / FLOE_BENCH_CHANGES set its scale). The moto sections (commit on S3, contention, freshness on S3) start
 * their own moto_server and are skipped, with the reason, without it; live starts its own mock Kafka
 * broker (kcat) and is skipped without kcat.
 * Exits 1 when a correctness check fails (a lost or duplicated record under contention).
 */
import { parseArgs } from 'node:util';
import { describeMachine } from './machine.js';
import type { KeyedDeletesFigures } from './keyed-deletes.js';
import type { MotoServer } from './moto-process.js';
import type { CompactionFigures, ScanFigures } from './scan-compaction.js';
import { type BenchReport, formatReport, roundDeep, summarizeCommits } from './report.js';
import { checkTargets } from './targets.js';

const SECTIONS = [
  'ingest',
  'ingest-lambda-heap',
  'hotspots',
  'commit',
  'contention',
  'planning',
  'memory',
  'freshness',
  'lambda',
  'scan',
  'scaling',
  'live',
  'cli-help',
  'kafka-serve',
  'keyed-deletes',
] as const;
type Section = (typeof SECTIONS)[number];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
const quick = values.quick ?? false;
const only = new Set(
  (values.only ?? SECTIONS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);
for (const s of only) {
  if (!SECTIONS.includes(s as Section))
    throw new Error(`unknown section '${s}' (sections: ${SECTIONS.join(', ')})`);
}

// With --json, stdout carries the JSON object only: anything else printing to it goes to stderr.
const stdoutWrite = process.stdout.write.bind(process.stdout);
if (values.json) {
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
}
const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

const RECORDS = 10_000;
const PARTITIONS = 6;
const SEED = 7;

async function main(): Promise<number> {
  const started = performance.now();
  const report: BenchReport = {
    machine: describeMachine(),
    mode: quick ? 'quick' : 'full',
    sections_skipped: {},
    duration_s: 0,
  };
  const needsMoto = only.has('commit') || only.has('contention') || only.has('freshness');
  let moto: MotoServer | undefined;
  if (needsMoto) {
    const { startMoto } = await import('./moto-process.js');
    progress('starting moto_server');
    moto = await startMoto();
    if (!moto) progress('moto_server not found or did not start: moto sections are skipped');
  }
  const attempt = async (section: Section, run: () => Promise<void>) => {
    if (!only.has(section)) return;
    try {
      await run();
    } catch (error) {
      report.sections_skipped[section] =
        `failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
      progress(`${section} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  // Section 1 and its run under Lambda's heap flags (1a) measure the same batch the same way.
  const ingestSettings = {
    records: RECORDS,
    partitions: PARTITIONS,
    seed: SEED,
    warmups: quick ? 1 : 2,
    repeats: quick ? 3 : 7,
  };
  try {
    await attempt('ingest', async () => {
      const { runIngestThroughput } = await import('./ingest-throughput.js');
      report.ingest = await runIngestThroughput(ingestSettings, progress);
    });
    await attempt('ingest-lambda-heap', async () => {
      const { runIngestInLambdaHeap } = await import('./ingest-lambda-heap.js');
      report.ingest_lambda_heap = await runIngestInLambdaHeap(ingestSettings, progress);
    });
    await attempt('hotspots', async () => {
      progress('hot spots: fast paths against the general paths');
      const { runHotPaths } = await import('./hot-paths.js');
      report.hotspots = { paths: await runHotPaths(quick ? 5 : 9) };
    });
    await attempt('commit', async () => {
      const { runRequestsPerCommit } = await import('./requests-per-commit.js');
      report.commit = summarizeCommits(await runRequestsPerCommit(moto, progress));
      if (!moto) report.sections_skipped['commit on moto'] = 'moto_server not available';
    });
    await attempt('contention', async () => {
      if (!moto) {
        report.sections_skipped.contention = 'moto_server not available';
        return;
      }
      const { runContention } = await import('./contention.js');
      report.contention = await runContention(
        moto,
        {
          writers: [1, 4, 16],
          commitsPerWriter: quick ? 1 : 3,
          recordsPerCommit: 100,
          withoutLock: !quick,
        },
        progress,
      );
    });
    await attempt('planning', async () => {
      const { runPlanningCost } = await import('./planning-cost.js');
      report.planning = await runPlanningCost(
        { checkpoints: quick ? [10, 100] : [10, 100, 1000], recordsPerCommit: 10 },
        progress,
      );
    });
    await attempt('memory', async () => {
      const { runMemory } = await import('./memory.js');
      report.memory = await runMemory(
        { records: RECORDS, partitions: PARTITIONS, seed: SEED, invocations: quick ? 2 : 5 },
        progress,
      );
    });
    await attempt('freshness', async () => {
      const { runFreshness } = await import('./freshness.js');
      const rows = await runFreshness(moto, { sizes: [100, RECORDS], repeats: quick ? 2 : 5 }, progress);
      const headline = rows.find((r) => r.target === 'embedded, local' && r.records === RECORDS);
      report.freshness = { ms: headline?.ms ?? Number.NaN, rows };
      if (!moto) report.sections_skipped['freshness on moto'] = 'moto_server not available';
    });
    await attempt('lambda', async () => {
      const { runLambdaColdStart } = await import('./lambda-cold-start.js');
      report.lambda = await runLambdaColdStart({ coldStarts: quick ? 3 : 7 }, progress);
    });
    await attempt('scan', async () => {
      // In a process of its own, as maintenance runs in a function of its own: after the ingest section's
      // 10k-record batches in the same process, floe's compaction measured 0.52-0.66 against 0.73-0.75.
      progress('scan and compaction: in a child node of their own');
      const { runSectionInChild } = await import('./child-section.js');
      const settings = { files: quick ? 50 : 200, recordsPerFile: 250, repeats: quick ? 3 : 7 };
      const figures = await runSectionInChild<{ scan: ScanFigures; compaction: CompactionFigures }>(
        'scan',
        settings,
      );
      report.scan = figures.scan;
      report.compaction = figures.compaction;
    });
    await attempt('scaling', async () => {
      const { runScaling } = await import('./scaling-cost.js');
      // Requests per commit: measured by the commit section when it ran (S3 Tables + lock, else the
      // first measured scenario), else the README's measured 10 (S3 Tables with the DynamoDB lock).
      const commitRequests = Number.isFinite(report.commit?.requests) ? (report.commit?.requests ?? 10) : 10;
      report.scaling = await runScaling(
        { sizes: [1_000, 10_000, 50_000], repeats: quick ? 2 : 5, commitRequests },
        progress,
      );
    });
    await attempt('live', async () => {
      const { runLiveRead } = await import('./live-read.js');
      const live = await runLiveRead(
        quick
          ? { tailRecords: 1_000, freshnessTrials: 5, loadTrials: 2, scanRepeats: 2, concurrentLoads: 200 }
          : {
              tailRecords: RECORDS,
              freshnessTrials: 11,
              loadTrials: 3,
              scanRepeats: 3,
              concurrentLoads: 200,
            },
        progress,
      );
      if ('skipped' in live) report.sections_skipped.live = live.skipped;
      else report.live = live;
    });
    await attempt('cli-help', async () => {
      const { runCliHelp } = await import('./cli-help.js');
      report.cli_help = await runCliHelp({ repeats: quick ? 5 : 15 }, progress);
    });
    await attempt('kafka-serve', async () => {
      const { runKafkaServeBench } = await import('./kafka-serve.js');
      const figures = await runKafkaServeBench(
        { records: quick ? 40_000 : 80_000, repeats: quick ? 2 : 3 },
        progress,
      );
      if ('skipped' in figures) report.sections_skipped['kafka-serve'] = figures.skipped;
      else report.kafka_serve = figures;
    });
    await attempt('keyed-deletes', async () => {
      // In a child node of its own: the build leaves a heap of a million-key table's garbage behind.
      const { keyedDeletesSettings } = await import('./keyed-deletes.js');
      const settings = keyedDeletesSettings(quick);
      progress(
        `keyed deletes: ${settings.keys} keys, ${settings.batches} batches of ${settings.changesPerBatch} changes, in a child node`,
      );
      const { runSectionInChild } = await import('./child-section.js');
      report.keyed_deletes = await runSectionInChild<KeyedDeletesFigures>('keyed-deletes', settings);
    });
  } finally {
    await moto?.stop();
    if (only.has('ingest') || only.has('freshness')) {
      const { getHandlerHarness } = await import('./floe-handler.js');
      await (await getHandlerHarness()).cleanup();
    }
  }
  report.duration_s = (performance.now() - started) / 1000;
  report.targets = checkTargets(report);
  const rounded = roundDeep(report) as BenchReport;
  if (values.json) stdoutWrite(`${JSON.stringify(rounded, null, 2)}\n`);
  else stdoutWrite(formatReport(report));
  const broken = (report.contention ?? []).some((r) => r.lost > 0 || r.duplicated > 0);
  if (broken) progress('FAILED: records were lost or duplicated under contention');
  return broken ? 1 : 0;
}

process.exitCode = await main();
