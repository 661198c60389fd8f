/** Text tables of the scan, compaction and targets figures (report.ts holds the other sections). */
import type { CompactionFigures, ScanFigures, TimedPair } from './scan-compaction.js';
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
        [
          'order_id = …, compacted, no pruning inside files',
          1,
          s.point_compacted_unpruned.floe_wall_ms,
          s.point_compacted_unpruned.floe_cpu_ms,
          '',
          '',
          '',
        ],
      ],
    ),
  ];
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
