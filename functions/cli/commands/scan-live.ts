/**
 * `floe scan --live`: the merged view of a table (functions/core/live/): its rows at the current
 * snapshot plus the Kafka records it does not hold yet, mapped by its own route. Prints the rows as
 * `scan` does, and the funnel with a hot line (records read per partition, offsets read up to).
 */
import { helpFor } from '../help.js';
import { parseIdentifier } from '../../core/catalog/catalog.js';
import { readLiveTable, type LiveReport } from '../../core/live/read-live-table.js';
import { parseExpression } from '../../core/scan/parse-expression.js';
import { stringifyJson } from '../../core/spec/json-codec.js';
import { openCatalog } from '../catalog-options.js';
import { toDisplayRow } from '../format-value.js';
import { kafkaFromOptions, kafkaTimeoutOf, liveRouteFor, parseLiveArgs } from '../live-options.js';
import { type ParsedOptions, requireOption, UsageError } from '../options.js';
import { printTable } from '../print-table.js';
import { formatFunnel } from './scan.js';

/** `hot: N record(s) from Kafka (t/0: 3 at 10-12, read up to 13; ...) → R row(s), ...`. Never throws. */
export function formatHotLine(report: LiveReport): string {
  const parts = report.hot.partitions.map((p) => {
    const ranges = p.ranges.map((r) => `${r.from}-${r.toExclusive - 1n}`).join(',');
    return `${p.topic}/${p.partition}: ${p.records}${ranges ? ` at ${ranges}` : ''}, read up to ${p.readUpTo}`;
  });
  const replaced = report.mode === 'append' ? '' : `, ${report.hot.replaced} cold row(s) replaced or deleted`;
  const byStage = Object.entries(report.leftOut.byStage)
    .map(([stage, n]) => `${stage}: ${n}`)
    .join(', ');
  const left = report.leftOut.total > 0 ? `; ${report.leftOut.total} left out (${byStage})` : '';
  const schema = report.schemaChanges ? `; view schema: ${report.schemaChanges}` : '';
  return (
    `hot: ${report.hot.records} record(s) from Kafka (${parts.join('; ') || 'no partitions'}) → ` +
    `${report.hot.rows} row(s)${replaced}${left}${schema}; snapshot ${report.snapshotId ?? 'none'}`
  );
}

/**
 * `fresh: newest record 2026-12-05T08:00:00.000Z (tail of 12 record(s)); read up to t/0@13, t/1@9`:
 * how current the view is (core/live/freshness.ts). Never throws.
 */
export function formatFreshnessLine(report: LiveReport): string {
  const f = report.freshness;
  const newest =
    f.newestRecordMs === null
      ? 'no record in the tail (the table alone is current)'
      : `newest record ${new Date(f.newestRecordMs).toISOString()} (tail of ${f.hotRecords} record(s))`;
  const upTo = f.readUpTo.map((p) => `${p.topic}/${p.partition}@${p.readUpTo}`).join(', ');
  return `fresh: ${newest}; read up to ${upTo || 'nothing'}`;
}

export async function runLiveScan(args: string[]): Promise<number> {
  const values = parseLiveArgs(args, 'scan');
  if (values.help) {
    process.stdout.write(helpFor('scan-live')!);
    return 0;
  }
  const id = parseIdentifier(requireOption(values as ParsedOptions, 'table'));
  const limit = values.limit === undefined ? Number.POSITIVE_INFINITY : Number(values.limit);
  if (!Number.isInteger(limit) && limit !== Number.POSITIVE_INFINITY)
    throw new UsageError('--limit must be a whole number');
  const timeoutMs = kafkaTimeoutOf(values);
  const { catalog } = await openCatalog(values);
  const kafka = await kafkaFromOptions(values);
  const loaded = await catalog.loadTable(id);
  const route = await liveRouteFor(values, loaded);
  const where = values.where ? parseExpression(values.where) : undefined;
  const live = await readLiveTable({ catalog, table: id, route, kafka, where, loaded, timeoutMs });
  const rows: Record<string, unknown>[] = [];
  for (const row of live.rows.slice(0, limit)) {
    const display = toDisplayRow(live.schema, row);
    if (values.json) process.stdout.write(`${stringifyJson(display)}\n`);
    else rows.push(display);
  }
  for (const warning of live.report.warnings) process.stderr.write(`warning: ${warning}\n`);
  const funnel = `${formatFunnel(live.plan.funnel, live.plan.manifestsRead)}\n${formatHotLine(live.report)}\n${formatFreshnessLine(live.report)}`;
  if (values.json) {
    process.stderr.write(`${funnel}\n`);
  } else {
    printTable(rows);
    const shown = Math.min(limit, live.rows.length);
    process.stdout.write(`${shown} row(s)${values.where ? ` where ${values.where}` : ''}\n${funnel}\n`);
  }
  return 0;
}
