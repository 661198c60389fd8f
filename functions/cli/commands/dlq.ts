import { parseIdentifier } from '../../core/catalog/catalog.js';
import { EmbeddedCatalog } from '../../core/catalog/embedded-catalog.js';
import { redriveDeadLetters } from '../../core/ingest/redrive.js';
import { parseExpression } from '../../core/scan/parse-expression.js';
import { type ParsedOptions, requireOption, UsageError } from '../main.js';

/** `floe dlq redrive --warehouse DIR --table NS.NAME [--where EXPR]` */
export async function runDlq(values: ParsedOptions, positionals: string[]): Promise<number> {
  if (positionals[0] !== 'redrive') throw new UsageError("dlq takes one subcommand: 'redrive'");
  const catalog = new EmbeddedCatalog({ warehouse: requireOption(values, 'warehouse') });
  const table = parseIdentifier(requireOption(values, 'table'));
  const filter = values.where ? parseExpression(values.where) : undefined;
  const report = await redriveDeadLetters({ catalog, table, filter });
  process.stdout.write(
    `${report.selected} dead letter(s) selected: ${report.redriven} redriven` +
      `${report.snapshotId === undefined ? '' : ` in snapshot ${report.snapshotId}`}, ` +
      `${report.alreadyRedriven} already redriven before, ${report.stillFailing.length} still failing\n`,
  );
  for (const f of report.stillFailing) {
    process.stdout.write(`  ${f.topic}-${f.partition}@${f.offset}: ${f.error}\n`);
  }
  return 0;
}
