/**
 * The targets, checked against the figures of this run (never in tests: timings are the
 * machine's). Each is reported met / not met / not measured beside its value.
 */
import { tailFigure } from './live-read.js';
import type { BenchReport } from './report.js';

export interface TargetCheck {
  key: string;
  value: number | null;
  target: string;
  met: boolean | null;
}

/** Every target whose figure this run measured (null: the section did not run). */
export function checkTargets(r: BenchReport): TargetCheck[] {
  const atLeast = (key: string, value: number | undefined, min: number): TargetCheck => ({
    key,
    value: value ?? null,
    target: `≥ ${min}`,
    met: value === undefined || !Number.isFinite(value) ? null : value >= min,
  });
  const atMost = (key: string, value: number | undefined, max: number): TargetCheck => ({
    key,
    value: value ?? null,
    target: `≤ ${max}`,
    met: value === undefined || !Number.isFinite(value) ? null : value <= max,
  });
  return [
    atLeast('ingest.cpu_ratio', r.ingest?.cpu_ratio, 0.5),
    atLeast('ingest.cpu_ratio_same_input', r.ingest?.cpu_ratio_same_input, 1.0),
    atMost('ingest.gc_share', r.ingest?.gc_share, 0.1),
    atLeast('compaction.ratio', r.compaction?.ratio, 0.7),
    atLeast('scan.filter_ratio', r.scan?.filter_ratio, 0.7),
    atLeast('scan.filter_ratio_compacted', r.scan?.filter_ratio_compacted, 0.5),
    atLeast('scan.point_ratio_compacted', r.scan?.point_ratio_compacted, 1.0),
    atMost('memory.peak_rss_mb', r.memory?.peak_rss_mb, 160),
    // 200 concurrent loads of one table share one tail read: the serve process stays bounded.
    atMost(
      `live.concurrent_peak_rss_mb_${r.live?.tail ?? '10k'}_tail`,
      r.live ? tailFigure(r.live, 'concurrent_peak_rss_mb') : undefined,
      300,
    ),
    // `floe --help` prints before any of floe's core loads (the CLI imports its commands lazily).
    atMost('cli_help.wall_ms', r.cli_help?.wall_ms, 500),
    // Cold reads through kafka-serve (cached batches) at half the broker's own rate or better.
    atLeast('kafka_serve.ratio', r.kafka_serve?.ratio, 0.5),
    // ...and a range no one has read yet, built from the table by a running endpoint (a process that
    // has served before: a long-running kafka-serve's steady state). A freshly started process's first
    // read (`ratio_first`) is reported beside it: it pays V8's warm-up on top.
    atLeast('kafka_serve.ratio_warm_first', r.kafka_serve?.ratio_warm_first, 0.5),
    // A keyed table's full scan: equality deletes cost floe's reader at least 5× position deletes (at
    // 200 batches); floe applies each delete file where the spec scopes it, as the per-file readers do.
    atLeast('keyed_deletes.read_ratio_floe', r.keyed_deletes?.read_ratio_floe, 5),
    // DuckDB in plain SQL applies all of either kind in one hash anti-join, so both cost it about the
    // same: position deletes must cost it no more (0.8 leaves room for the run's noise). The slowdown
    // the field reports (duckdb-iceberg, iceberg-go) is in readers that apply equality deletes per data
    // file; duckdb-iceberg cannot be installed here (extensions are not reachable).
    atLeast('keyed_deletes.read_ratio_duckdb', r.keyed_deletes?.read_ratio_duckdb, 0.8),
    // Locating a batch's rows through the key index costs no more than writing the batch's files.
    atMost('keyed_deletes.locate_write_ratio_index', r.keyed_deletes?.locate_write_ratio_index, 1),
  ];
}
