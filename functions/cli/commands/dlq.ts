import { formatIdentifier, parseIdentifier } from '../../core/catalog/catalog.js';
import { ValidationError } from '../../core/errors.js';
import { parseEvolutionPolicy } from '../../core/mapping/evolution/evolution-policy.js';
import { defaultRoute, redriveDeadLetters } from '../../core/ingest/redrive.js';
import { parseRoutes, type TableRoute } from '../../core/routing/routes.js';
import { parseExpression } from '../../core/scan/parse-expression.js';
import type { TableIdentifier } from '../../core/spec/types.js';
import { openCatalog } from '../catalog-options.js';
import { type ParsedOptions, requireOption, UsageError } from '../options.js';
import { readJsonFile } from './ingest.js';

/** The table's route from a routes file (the JSON the Lambda takes as FLOE_TABLES). */
async function routeFor(values: ParsedOptions, table: TableIdentifier): Promise<TableRoute | undefined> {
  if (values.routes === undefined) return undefined;
  const routes = parseRoutes(await readJsonFile(values.routes, 'routes file'));
  const name = formatIdentifier(table);
  const route = routes.find((r) => formatIdentifier(r.table) === name);
  if (!route) {
    throw new ValidationError(
      `routes file ${values.routes} has no route for ${name} (it has: ${routes.map((r) => formatIdentifier(r.table)).join(', ') || 'none'})`,
    );
  }
  return route;
}

/** `floe dlq redrive <catalog> --table NS.NAME [--where EXPR] [--routes FILE] [--schema-evolution P]` */
export async function runDlq(values: ParsedOptions, positionals: string[]): Promise<number> {
  if (positionals[0] !== 'redrive') throw new UsageError("dlq takes one subcommand: 'redrive'");
  const table = parseIdentifier(requireOption(values, 'table'));
  const filter = values.where ? parseExpression(values.where) : undefined;
  let route = await routeFor(values, table);
  if (values['schema-evolution'] !== undefined) {
    const policy = parseEvolutionPolicy(values['schema-evolution'], '--schema-evolution');
    route = {
      ...(route ?? defaultRoute(table)),
      schemaEvolution: policy,
    };
  }
  const { catalog, lock } = await openCatalog(values, { withLock: true });
  const report = await redriveDeadLetters({ catalog, lock, table, filter, route });
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
