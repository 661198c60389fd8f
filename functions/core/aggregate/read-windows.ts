/**
 * The committed rows a batch must merge with: the windows its records fall in (by window_start) and
 * the open windows the new watermark closes (window_closed = false and window_end <= watermark).
 * Read through the table's own scan, so partition and column-metrics pruning skip the files that
 * hold neither (a table partitioned by day(window_start) reads a day's files; an unpartitioned one
 * still skips files by their window_start / window_end bounds) — never a full scan by design.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import type { Expression } from '../scan/expression.js';
import { planScan } from '../scan/plan-scan.js';
import { type LocatedRow, readScanLocated } from '../scan/read-scan.js';
import { currentSnapshot } from '../spec/metadata.js';

/** The filter for a batch's windows (exported for tests of the pruning). Undefined: nothing to read. */
export function touchedWindowsFilter(
  starts: readonly bigint[],
  watermark: bigint | undefined,
): Expression | undefined {
  const touched: Expression | undefined =
    starts.length > 0 ? { op: 'in', term: 'window_start', values: [...starts] } : undefined;
  const closing: Expression | undefined =
    watermark === undefined
      ? undefined
      : {
          op: 'and',
          left: { op: 'eq', term: 'window_closed', value: false },
          right: { op: 'lt-eq', term: 'window_end', value: watermark },
        };
  if (touched && closing) return { op: 'or', left: touched, right: closing };
  return touched ?? closing;
}

/**
 * The live rows of the windows a batch touches or closes, each with its data file and position (what
 * a position delete of the row names).
 * @throws whatever planScan / readScan throw (NotFoundError, TransientIOError, ValidationError)
 */
export async function readTouchedWindows(
  table: LoadedTable,
  starts: readonly bigint[],
  watermark: bigint | undefined,
): Promise<LocatedRow[]> {
  if (!currentSnapshot(table.metadata)) return [];
  const filter = touchedWindowsFilter(starts, watermark);
  if (!filter) return [];
  const plan = await planScan(table, { filter });
  const rows: LocatedRow[] = [];
  for await (const located of readScanLocated(table, plan, { filter })) rows.push(located);
  return rows;
}
