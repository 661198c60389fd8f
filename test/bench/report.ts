/** The bench's result: one JSON object (`--json`) or the same figures as text tables. */
import type { ContentionRow } from './contention.js';
import type { FreshnessRow } from './freshness.js';
import type { HotPath } from './hot-paths.js';
import type { LambdaHeapIngest } from './ingest-lambda-heap.js';
import type { IngestFigures } from './ingest-throughput.js';
import type { KeyedDeletesFigures } from './keyed-deletes.js';
import { keyedDeletesText } from './keyed-deletes-report.js';
import type { LambdaFigures } from './lambda-cold-start.js';
import { type CliHelpFigures, cliHelpText } from './cli-help.js';
import { type KafkaServeFigures, kafkaServeText } from './kafka-serve.js';
import { type LiveFigures, liveText } from './live-read.js';
import type { MachineInfo } from './machine.js';
import type { MemoryFigures } from './memory.js';
import type { PlanningRow } from './planning-cost.js';
import type { CommitRequests } from './requests-per-commit.js';
import type { CompactionFigures, ScanFigures } from './scan-compaction.js';
import type { ScalingFigures } from './scaling-cost.js';
import { scalingText, scanText, targetsText } from './scan-report.js';
import { checkTargets, type TargetCheck } from './targets.js';
import { round } from './stats.js';

export interface CommitFigures {
  /** The append commit of the primary scenario (the first measured of: S3 Tables, embedded on S3, local). */
  scenario: string;
  requests: number;
  minimum_requests: number;
  cdc_requests: number;
  cdc_minimum_requests: number;
  cdc_status: string;
  scenarios: CommitRequests[];
}

export interface BenchReport {
  machine: MachineInfo;
  mode: 'quick' | 'full';
  sections_skipped: Record<string, string>;
  ingest?: IngestFigures;
  /** Section 1 again under the heap flags Lambda gives the ingest function (ingest-lambda-heap.ts). */
  ingest_lambda_heap?: LambdaHeapIngest;
  hotspots?: { paths: HotPath[] };
  commit?: CommitFigures;
  contention?: ContentionRow[];
  planning?: PlanningRow[];
  memory?: MemoryFigures;
  freshness?: { ms: number; rows: FreshnessRow[] };
  lambda?: LambdaFigures;
  scan?: ScanFigures;
  compaction?: CompactionFigures;
  scaling?: ScalingFigures;
  /** The issue's targets against this run's figures (targets.ts). */
  targets?: TargetCheck[];
  live?: LiveFigures;
  /** `floe --help` through the bin over the compiled CLI, against `node -e 0` (cli-help.ts). */
  cli_help?: CliHelpFigures;
  /** Cold reads through `floe kafka-serve` against kcat reading the broker (kafka-serve.ts). */
  kafka_serve?: KafkaServeFigures;
  /** A CDC table's full scan with position against equality deletes, and the cost of locating rows. */
  keyed_deletes?: KeyedDeletesFigures;
  duration_s: number;
}

const PRIMARY = ['S3 Tables', 'embedded catalog on S3', 'embedded catalog, local'];

/** Picks the headline scenario's append and CDC counts. */
export function summarizeCommits(scenarios: CommitRequests[]): CommitFigures {
  const pick = (mode: 'append' | 'cdc') => {
    for (const prefix of PRIMARY) {
      const found = scenarios.find((s) => s.scenario.startsWith(prefix) && s.mode === mode);
      if (found && found.status === 'measured') return found;
    }
    return scenarios.find((s) => s.mode === mode);
  };
  const append = pick('append');
  const cdc = pick('cdc');
  return {
    scenario: append?.scenario ?? 'none',
    requests: append?.requests ?? Number.NaN,
    minimum_requests: append?.minimum_requests ?? Number.NaN,
    cdc_requests: cdc?.status === 'measured' ? cdc.requests : Number.NaN,
    cdc_minimum_requests: cdc?.status === 'measured' ? cdc.minimum_requests : Number.NaN,
    cdc_status: cdc?.status ?? 'not run',
    scenarios,
  };
}

/** Rounds every number in a value for printing (JSON keeps one or two decimals, never less than needed). */
export function roundDeep(value: unknown): unknown {
  if (typeof value === 'number')
    return Number.isFinite(value) ? round(value, Math.abs(value) < 10 ? 3 : 1) : null;
  if (Array.isArray(value)) return value.map(roundDeep);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, roundDeep(v)]));
  }
  return value;
}

function table(headers: string[], rows: (string | number)[][]): string {
  // null: a NaN that went through JSON (a figure that was not measured).
  const cells = [
    headers,
    ...rows.map((r) => r.map((c) => (typeof c === 'number' || c === null ? fmt(c ?? Number.NaN) : c))),
  ];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? '').length)));
  const line = (r: (string | number)[]) =>
    r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join(
    '\n',
  );
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return '-';
  if (Math.abs(n) >= 100) return Math.round(n).toLocaleString('en-US');
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

function ingestText(i: IngestFigures): string {
  const phases = Object.entries(i.phases_cpu_ms) as [keyof typeof i.phases_ms, number][];
  return [
    `## 1. Ingest throughput — ${i.records.toLocaleString('en-US')} records, ESM event ${(i.event_bytes / 1e6).toFixed(2)} MB ` +
      `(values ${(i.value_bytes / 1e6).toFixed(2)} MB, NDJSON ${(i.ndjson_bytes / 1e6).toFixed(2)} MB); medians`,
    table(
      ['engine', 'wall ms', 'CPU ms', 'records/s', 'value MB/s', 'input MB/s', 'Parquet KB'],
      [
        [
          'floe (handler → local warehouse, warm)',
          i.floe.wall_ms,
          i.floe.cpu_ms,
          i.floe.records_per_s,
          i.floe.value_mb_per_s,
          i.floe.input_mb_per_s,
          i.floe.parquet_bytes / 1024,
        ],
        [
          'floe, after a forced full GC',
          i.floe_after_full_gc.wall_ms,
          i.floe_after_full_gc.cpu_ms,
          i.floe_after_full_gc.records_per_s,
          i.floe_after_full_gc.value_mb_per_s,
          i.floe_after_full_gc.input_mb_per_s,
          i.floe_after_full_gc.parquet_bytes / 1024,
        ],
        [
          'DuckDB (NDJSON → Parquet, 1 thread)',
          i.duckdb.wall_ms,
          i.duckdb.cpu_ms,
          i.duckdb.records_per_s,
          i.duckdb.value_mb_per_s,
          i.duckdb.input_mb_per_s,
          i.duckdb.parquet_bytes / 1024,
        ],
        [
          'DuckDB (the same ESM event → Parquet, 1 thread)',
          i.duckdb_event.wall_ms,
          i.duckdb_event.cpu_ms,
          i.duckdb_event.records_per_s,
          i.duckdb_event.value_mb_per_s,
          i.duckdb_event.input_mb_per_s,
          i.duckdb_event.parquet_bytes / 1024,
        ],
      ],
    ),
    `ratio floe/DuckDB: ${fmt(i.ratio)} (wall), ${fmt(i.ratio_cpu)} (CPU), ${fmt(i.ratio_without_runtime_parse)} (CPU, without the runtime's event JSON.parse), ${fmt(i.ratio_after_full_gc)} (wall, floe after a full GC) — target ≥ 1.0`,
    `ratio floe/DuckDB from the same ESM event: ${fmt(i.ratio_same_input)} (wall), ${fmt(i.ratio_same_input_cpu)} (CPU); floe also commits the snapshot`,
    `GC pauses / wall time of the warm handler runs (gc_share): ${fmt(100 * i.gc_share)}% — target < 10%`,
    '',
    table(
      ['floe phase (CPU time)', 'CPU ms', 'share', 'wall ms', 'DuckDB ×'],
      [
        ...phases.map(([name, ms]) => [
          name,
          ms,
          `${fmt((100 * ms) / i.floe.cpu_ms)}%`,
          i.phases_ms[name],
          ms / i.duckdb.cpu_ms,
        ]),
        [
          'other (loads, offsets, batch id)',
          i.other_cpu_ms,
          `${fmt((100 * i.other_cpu_ms) / i.floe.cpu_ms)}%`,
          '',
          i.other_cpu_ms / i.duckdb.cpu_ms,
        ],
        ['handler total', i.floe.cpu_ms, '100%', i.floe.wall_ms, i.floe.cpu_ms / i.duckdb.cpu_ms],
      ],
    ),
  ].join('\n');
}

function hotspotsText(h: NonNullable<BenchReport['hotspots']>): string {
  return [
    "## 1b. floe's fast paths against the general paths they stand in for (CPU ms per 10,000 records, medians)",
    table(
      ['step', 'where', 'general', 'fast', 'saved', 'same output', 'note'],
      h.paths.map((p) => [
        p.name,
        p.where,
        p.general_ms,
        p.fast_ms,
        p.saved_ms,
        String(p.same_output),
        p.note ?? '',
      ]),
    ),
  ].join('\n');
}

function commitText(c: CommitFigures): string {
  return [
    '## 2. Requests per commit (one batch on a table that already has a snapshot)',
    table(
      ['scenario', 'mode', 'requests', 'minimum', 'ratio', 'files (data+delete)', 'status'],
      c.scenarios.map((s) => [
        s.scenario,
        s.mode,
        s.requests,
        s.minimum_requests,
        s.requests / s.minimum_requests,
        `${s.data_files}+${s.delete_files}`,
        s.status,
      ]),
    ),
    ...c.scenarios
      .filter((s) => s.status === 'measured' && s.mode === 'append')
      .map(
        (s) =>
          `  ${s.scenario}: ${Object.entries(s.breakdown)
            .map(([k, v]) => `${k} ×${v}`)
            .join(', ')}`,
      ),
    '  above the minimum, and why:',
    ...c.scenarios
      .filter((s) => s.status === 'measured' && s.mode === 'append')
      .flatMap((s) => s.above_minimum.map((a) => `  ${s.scenario}: ${a.request} +${a.extra} — ${a.why}`)),
  ].join('\n');
}

function contentionText(rows: ContentionRow[]): string {
  return [
    '## 3. Commit throughput under contention (embedded catalog on moto S3)',
    table(
      [
        'writers',
        'lock',
        'catalog',
        'commits',
        'commits/s',
        'records/s',
        'conflicts',
        'redelivered',
        'lock waits',
        'lock wait p50 ms',
        'batch p50 ms',
        'lost',
        'dup',
      ],
      rows.map((r) => [
        String(r.writers),
        r.lock ? 'DynamoDB' : 'none',
        r.catalog,
        r.commits,
        r.commits_per_s,
        r.records_per_s,
        r.conflicts,
        r.redeliveries,
        r.lock_waits,
        r.lock_wait_median_ms,
        r.batch_latency_median_ms,
        r.lost,
        r.duplicated,
      ]),
    ),
  ].join('\n');
}

function planningText(rows: PlanningRow[]): string {
  return [
    '## 4. Planning cost of a point query over time (local embedded, small batches)',
    table(
      [
        'commits',
        'manifests',
        'manifests read',
        'KB read',
        'files',
        'files planned',
        'plan ms',
        'metadata.json KB',
        'commit p50 ms',
      ],
      rows.map((r) => [
        String(r.commits),
        r.manifests_in_snapshot,
        r.manifests_read,
        r.bytes_read / 1024,
        r.files_in_table,
        r.files_planned,
        r.plan_ms,
        r.metadata_json_bytes / 1024,
        r.commit_median_ms,
      ]),
    ),
  ].join('\n');
}

function memoryText(m: MemoryFigures): string {
  return [
    `## 5. Memory of the ${m.event_mb.toFixed(2)} MiB batch (bundled handler in a child process, ${m.invocations} invocations)`,
    table(
      [
        'peak RSS MiB',
        'cold peak',
        'uncapped peak',
        `deployed ${m.lambda_memory_mb} MB peak`,
        'baseline',
        'WASM heap',
        'JS heap used',
        'target',
      ],
      [
        [
          fmt(m.peak_rss_mb),
          m.cold_peak_rss_mb,
          m.uncapped_peak_rss_mb,
          m.lambda_peak_rss_mb,
          m.baseline_rss_mb,
          m.wasm_heap_mb,
          m.js_heap_used_mb,
          m.target_mb,
        ],
      ],
    ),
    `(peak RSS with the old space capped at ${m.heap_cap_mb} MiB, as a small Lambda's memory caps V8; uncapped, V8 on this ` +
      "machine lets the garbage of warm invocations pile up; deployed, Lambda's heap flags and the heap growth the handler " +
      'sets for that memory, functions/handlers/heap-growth.ts)',
  ].join('\n');
}

function freshnessText(f: { ms: number; rows: FreshnessRow[] }): string {
  return [
    '## 6. Freshness: handler receives the batch → a fresh reader sees the snapshot (medians)',
    table(
      ['target', 'records', 'ms', 'of which reader ms'],
      f.rows.map((r) => [r.target, r.records, r.ms, r.reader_ms]),
    ),
  ].join('\n');
}

function lambdaText(l: LambdaFigures): string {
  return [
    `## 7. Cold start of the bundled ingest function under aws-lambda-ric (medians of ${l.cold_starts} cold starts)`,
    table(
      ['init ms', 'RSS after init MiB', 'first invoke ms', 'bundle KiB'],
      [[l.init_ms, l.rss_after_init_mb, l.first_invoke_ms, l.bundle_kib]],
    ),
    '(init: spawn → first /runtime/invocation/next; first invoke: configuration, table creation, a 120-record batch)',
  ].join('\n');
}

/** The report as text tables. */
export function formatReport(r: BenchReport): string {
  const m = r.machine;
  const parts = [
    `# floe bench (${r.mode}) — ${m.nproc} × ${m.cpu_model}, ${m.total_memory_gib} GiB, node ${m.node}, DuckDB ${m.duckdb}, ${m.platform}; load average at start ${m.load_average_1m}`,
  ];
  if (r.ingest) parts.push(ingestText(r.ingest));
  if (r.hotspots) parts.push(hotspotsText(r.hotspots));
  if (r.commit) parts.push(commitText(r.commit));
  if (r.contention) parts.push(contentionText(r.contention));
  if (r.planning) parts.push(planningText(r.planning));
  if (r.memory) parts.push(memoryText(r.memory));
  if (r.freshness) parts.push(freshnessText(r.freshness));
  if (r.lambda) parts.push(lambdaText(r.lambda));
  if (r.scan) parts.push(scanText(r.scan, r.compaction, table, fmt));
  if (r.scaling) parts.push(scalingText(r.scaling, table));
  parts.push(targetsText(r.targets ?? checkTargets(r), table));
  if (r.live) parts.push(liveText(r.live, table));
  if (r.cli_help) parts.push(cliHelpText(r.cli_help, table));
  if (r.kafka_serve) parts.push(kafkaServeText(r.kafka_serve, table));
  if (r.keyed_deletes) parts.push(keyedDeletesText(r.keyed_deletes, table));
  for (const [section, why] of Object.entries(r.sections_skipped)) parts.push(`(${section} skipped: ${why})`);
  parts.push(`(${r.duration_s.toFixed(0)} s)`);
  return `${parts.join('\n\n')}\n`;
}
