/** Text tables of the scan, compaction and targets figures (report.ts holds the other sections). */
import type { CompactionFigures, ScanFigures, TimedPair } from './scan-compaction.js';
import type { ScalingFigures } from './scaling-cost.js';
import type { TargetCheck } from './targets.js';

type Table = (headers: string[], rows: (string | number)[][]) => string;
type Fmt = (n: number) => string;

export function scanText(s: ScanFigures, c: CompactionFigures | undefined, table: Table, fmt: Fmt): string {
  const row = (name: string, p: TimedPair): (string | number)[] => [
    name,
    p.rows,
    p.floe_wall_ms,
    p.floe_cpu_ms,
    p.duckdb_wall_ms,
    p.duckdb_cpu_ms,
    p.ratio_cpu,
  ];
  const lines = [
    `## 8. Scans and compaction — ${s.files} files of ${(s.records / s.files).toFixed(0)} orders (${s.records.toLocaleString('en-US')} records); medians, DuckDB 1 thread on the same Parquet files`,
    table(
      ['query', 'rows', 'floe wall ms', 'floe CPU ms', 'DuckDB wall ms', 'DuckDB CPU ms', 'ratio (CPU)'],
      [
        row(`country = 'DE', ${s.files} files`, s.filter_small_files),
        row(`country = 'DE', compacted`, s.filter_compacted),
        row('order_id = …, compacted', s.point_compacted),
        ...(
          [
            [`country = 'DE', ${s.files} files, no pruning inside files`, s.filter_small_files_unpruned],
            ["country = 'DE', compacted, no pruning inside files", s.filter_compacted_unpruned],
            ['order_id = …, compacted, no pruning inside files', s.point_compacted_unpruned],
          ] as const
        ).map(([name, f]) => [name, '', f.floe_wall_ms, f.floe_cpu_ms, '', '', '']),
      ],
    ),
  ];
  lines.push(
    table(
      ['data fetched, compacted (one run)', 'requests', 'bytes fetched', 'bytes of the files whole', 'share'],
      (
        [
          ['order_id = …', s.point_fetch_compacted],
          ["country = 'DE'", s.filter_fetch_compacted],
        ] as const
      ).map(([name, f]) => [
        name,
        String(f.requests),
        f.bytes_fetched,
        f.bytes_whole_file,
        fmt(f.bytes_fetched / Math.max(1, f.bytes_whole_file)),
      ]),
    ),
  );
  if (c) {
    lines.push(
      table(
        [
          'compaction',
          'MB in',
          'floe wall ms',
          'floe CPU ms',
          'floe MB/s (CPU)',
          'DuckDB CPU ms',
          'DuckDB MB/s (CPU)',
          'ratio',
        ],
        [
          [
            `${c.files_in} files → 1 (plan, compact, commit)`,
            c.bytes_in / 1e6,
            c.floe_wall_ms,
            c.floe_cpu_ms,
            c.floe_mb_per_s_cpu,
            c.duckdb_cpu_ms,
            c.duckdb_mb_per_s_cpu,
            fmt(c.ratio),
          ],
        ],
      ),
    );
  }
  return lines.join('\n');
}

export function targetsText(checks: TargetCheck[], table: Table): string {
  return [
    '## Targets (issue 18)',
    table(
      ['key', 'value', 'target', 'met'],
      checks.map((t) => [
        t.key,
        t.value ?? 'not measured',
        t.target,
        t.met === null ? '—' : t.met ? 'yes' : 'NO',
      ]),
    ),
  ].join('\n');
}

export function scalingText(s: ScalingFigures, table: Table): string {
  return [
    '## 9. Scaling (event text → JSON.parse → ingestEvent → snapshot, local embedded catalog; medians)',
    table(
      [
        'workload',
        'records',
        'columns',
        'wall ms',
        'CPU ms',
        'records/s (CPU)',
        'µs/record CPU',
        'µs/record wall',
      ],
      s.rows.map((r) => [
        r.workload,
        r.records,
        r.columns,
        r.wall_ms,
        r.cpu_ms,
        r.records_per_s_cpu,
        r.us_per_record_cpu,
        r.us_per_record_wall,
      ]),
    ),
    table(
      [
        'cost per batch',
        'CPU ms',
        'requests',
        'USD / million batches',
        'USD / GB ingested',
        'Firehose USD / GB',
      ],
      s.cost.map((c) => [
        `${c.batch_records.toLocaleString('en-US')} records`,
        c.cpu_ms,
        c.requests_per_batch,
        c.usd_per_million_batches,
        c.usd_per_gb.toFixed(4),
        c.firehose_usd_per_gb.toFixed(3),
      ]),
    ),
    `(Lambda arm64 $${s.prices.lambda_arm64_usd_per_million_gb_s} per million GB-s at CPU time × 1.769 GB, $${s.prices.lambda_usd_per_million_requests} per million requests, every commit request priced as an S3 PUT, $${s.prices.s3_put_usd_per_million_requests} per million; Firehose → Iceberg $${s.prices.firehose_iceberg_usd_per_gb}/GB; prices read ${s.prices.read_on}, us-east-1)`,
  ].join('\n');
}
