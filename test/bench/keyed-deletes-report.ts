/** The keyed-deletes section as text tables (keyed-deletes.ts measures it). */
import type { KeyedDeletesFigures } from './keyed-deletes.js';

type Table = (head: string[], rows: (string | number)[][]) => string;

export function keyedDeletesText(k: KeyedDeletesFigures, table: Table): string {
  const read = (mode: 'position' | 'equality') => {
    const r = k.read[mode];
    return [
      mode,
      String(r.data_files),
      String(r.delete_files),
      r.floe_wall_ms,
      r.floe_cpu_ms,
      r.duckdb_wall_ms,
      r.duckdb_cpu_ms,
    ];
  };
  return [
    `## keyed-deletes. A CDC table after ${k.keys.toLocaleString('en')} keys loaded and ${k.batches} batches of ${k.changes_per_batch} changes (${k.live_rows.toLocaleString('en')} live rows; built in ${k.build_s.toFixed(0)} s)`,
    'Full scan, every live row and column (medians):',
    table(
      [
        'deletes',
        'data files',
        'delete files',
        'floe wall ms',
        'floe CPU ms',
        'DuckDB wall ms',
        'DuckDB CPU ms',
      ],
      [
        read('position'),
        read('equality'),
        [
          'equality ÷ position',
          '',
          '',
          k.read_ratio_floe_wall,
          k.read_ratio_floe,
          k.read_ratio_duckdb_wall,
          k.read_ratio_duckdb,
        ],
      ],
    ),
    `(target: equality ÷ position CPU ≥ 5 at 200 batches; one change batch through ingestEvent: ${k.ingest_batch_cpu_ms.position.toFixed(0)} ms CPU by position, ${k.ingest_batch_cpu_ms.equality.toFixed(0)} by equality)`,
    'Writer, per change batch: locating the live rows of its keys against writing its Parquet files (medians):',
    table(
      [
        'locator',
        'keys',
        'locate wall ms',
        'locate CPU ms',
        'locate MB read',
        'write wall ms',
        'write CPU ms',
        'write KB',
        'equality write CPU ms',
        'locate ÷ write',
      ],
      k.locate.map((l) => [
        l.locator,
        String(l.keys_located),
        l.locate_wall_ms,
        l.locate_cpu_ms,
        l.locate_bytes_read / 1e6,
        l.write_wall_ms,
        l.write_cpu_ms,
        l.write_bytes / 1e3,
        l.equality_write_cpu_ms,
        l.locate_write_ratio,
      ]),
    ),
    "(target: the warm index locate ÷ write CPU ≤ 1. index-cold: a process's first batch, the index read whole; index-incremental: a view that reads what the last commit appended, as after another writer; index: the process's own view, kept current by its commits)",
    `The process's view of the key index: ${k.index_view.keys.toLocaleString('en')} keys, ${k.index_view.estimated_mb.toFixed(0)} MB by its estimate, ${k.index_view.measured_mb.toFixed(0)} MB measured (heap + buffers), bound ${k.index_view.bound_mb.toFixed(0)} MB`,
  ].join('\n');
}
