import { parseIdentifier } from '../../core/catalog/catalog.js';
import { parseExpression } from '../../core/scan/parse-expression.js';
import { planScan } from '../../core/scan/plan-scan.js';
import { readScan } from '../../core/scan/read-scan.js';
import type { ScanFunnel } from '../../core/scan/scan-plan.js';
import { stringifyJson } from '../../core/spec/json-codec.js';
import { currentSchema } from '../../core/spec/metadata.js';
import { toDisplayRow } from '../format-value.js';
import { openCatalog } from '../catalog-options.js';
import { type ParsedOptions, requireOption, UsageError } from '../options.js';
import { printTable } from '../print-table.js';

export function formatFunnel(f: ScanFunnel, manifestsRead: number): string {
  return (
    `files: ${f.filesInTable} in table → ${f.filesAfterPartitionPruning} after partition pruning → ` +
    `${f.filesAfterManifestSummaries} after manifest summaries → ${f.filesAfterStats} after file stats ` +
    `(manifests: ${f.manifestsTotal} listed, ${manifestsRead} read)`
  );
}

export async function runScan(values: ParsedOptions): Promise<number> {
  const id = parseIdentifier(requireOption(values, 'table'));
  const { catalog } = await openCatalog(values);
  const table = await catalog.loadTable(id);
  const limit = values.limit === undefined ? Number.POSITIVE_INFINITY : Number(values.limit);
  if (!Number.isInteger(limit) && limit !== Number.POSITIVE_INFINITY)
    throw new UsageError('--limit must be a whole number');
  const filter = values.where ? parseExpression(values.where) : undefined;
  const plan = await planScan(table, { filter });
  const schema = currentSchema(table.metadata);
  const rows: Record<string, unknown>[] = [];
  for await (const row of readScan(table, plan, { filter })) {
    if (rows.length >= limit) break;
    const display = toDisplayRow(schema, row);
    if (values.json) process.stdout.write(`${stringifyJson(display)}\n`);
    else rows.push(display);
  }
  const funnel = formatFunnel(plan.funnel, plan.manifestsRead);
  if (values.json) {
    process.stderr.write(`${funnel}\n`);
  } else {
    printTable(rows);
    process.stdout.write(`${rows.length} row(s)${values.where ? ` where ${values.where}` : ''}\n${funnel}\n`);
  }
  return 0;
}
