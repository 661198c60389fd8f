import { readFile } from 'node:fs/promises';
import { parseIdentifier } from '../../core/catalog/catalog.js';
import { ValidationError } from '../../core/errors.js';
import { ingestEvent, type IngestEventReport } from '../../core/ingest/ingest-event.js';
import { parseEventJson } from '../../core/records/event-json.js';
import { INGEST_MODES, type IngestMode, parseRoutes, type TableRoute } from '../../core/routing/routes.js';
import { parseEvolutionPolicy } from '../../core/mapping/evolution/evolution-policy.js';
import { FORMAT_VERSION_PROPERTY } from '../../core/spec/metadata.js';
import { parseSchema } from '../../core/spec/schema.js';
import { DELETE_MODE_PROPERTY, DELETE_MODES, type DeleteMode } from '../../core/spec/table-properties.js';
import { openCatalog } from '../catalog-options.js';
import { type ParsedOptions, requireOption, UsageError } from '../options.js';

/** @param parse parseEventJson for a file holding an ESM event (its offsets read exactly) */
export async function readJsonFile(
  path: string,
  what: string,
  parse: (text: string) => unknown = JSON.parse,
): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ValidationError(
      `cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
  try {
    return parse(text);
  } catch (error) {
    throw new ValidationError(`${what} ${path} is not valid JSON: ${(error as Error).message}`);
  }
}

function topicsOf(event: unknown): string[] {
  const records = (event as { records?: Record<string, { topic?: unknown }[]> })?.records ?? {};
  const topics = new Set<string>();
  for (const [key, list] of Object.entries(records)) {
    for (const r of Array.isArray(list) ? list : []) {
      topics.add(typeof r?.topic === 'string' ? r.topic : key.replace(/-\d+$/, ''));
    }
  }
  return [...topics];
}

function describeCdc(t: IngestEventReport['tables'][number]): string {
  if (t.mode === undefined || t.mode === 'append') return '';
  const ignored = Object.entries(t.ignored ?? {})
    .map(([reason, n]) => `${n} ${reason}`)
    .join(', ');
  const deletes = t.positionDeletes
    ? `${t.positionDeletes} rows deleted/replaced in ${t.deleteFiles ?? 0} position-delete files`
    : `${t.equalityDeletes ?? 0} keys deleted/replaced in ${t.deleteFiles ?? 0} equality-delete files`;
  return `, ${deletes}${ignored ? `, ignored: ${ignored}` : ''}`;
}

export function printIngestReport(file: string, report: IngestEventReport): void {
  for (const t of report.tables) {
    const outcome =
      t.status === 'committed'
        ? `snapshot ${t.snapshotId} (${t.attempts} attempt${t.attempts === 1 ? '' : 's'})`
        : t.status === 'already-committed'
          ? 'already committed (replay skipped)'
          : 'nothing new (replay skipped)';
    process.stdout.write(
      `${file} → ${t.table}: ${t.recordsIn} records, ${t.skippedAsReplayed} replayed, ${t.rowsWritten} rows in ${t.dataFiles} files (${t.bytesWritten} bytes)${describeCdc(t)}, ${t.deadLettered} dead-lettered; ${outcome}\n`,
    );
    for (const warning of t.warnings ?? []) process.stderr.write(`warning: ${t.table}: ${warning}\n`);
  }
}

function modeFromOptions(values: ParsedOptions): IngestMode | undefined {
  if (values.mode === undefined) return undefined;
  if (!INGEST_MODES.includes(values.mode as IngestMode)) {
    throw new UsageError(`--mode must be one of ${INGEST_MODES.join(', ')}, got '${values.mode}'`);
  }
  return values.mode as IngestMode;
}

function identifierFromOptions(values: ParsedOptions): string[] | undefined {
  if (values.identifier === undefined) return undefined;
  const columns = values.identifier
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  if (columns.length === 0) throw new UsageError('--identifier needs at least one column name');
  return columns;
}

/** `--delete-mode` as the table property it sets when the table is created. */
function deleteModeFromOptions(values: ParsedOptions): Record<string, string> {
  const mode = values['delete-mode'];
  if (mode === undefined) return {};
  if (!DELETE_MODES.includes(mode as DeleteMode)) {
    throw new UsageError(`--delete-mode must be one of ${DELETE_MODES.join(', ')}, got '${mode}'`);
  }
  return { [DELETE_MODE_PROPERTY]: mode };
}

/** `--format-version` as Iceberg's reserved creation property (the catalog takes it, the table keeps none). */
function formatVersionFromOptions(values: ParsedOptions): Record<string, string> {
  const version = values['format-version'];
  if (version === undefined) return {};
  if (version !== '2' && version !== '3') {
    throw new UsageError(`--format-version must be 2 or 3, got '${version}'`);
  }
  return { [FORMAT_VERSION_PROPERTY]: version };
}

/** Builds the route for `floe ingest` from its flags. */
export async function routeFromOptions(values: ParsedOptions, events: unknown[]): Promise<TableRoute> {
  const table = parseIdentifier(requireOption(values, 'table'));
  const schema = values.schema
    ? parseSchema(await readJsonFile(values.schema, 'schema file'), 'schema')
    : undefined;
  const topics = values.topics
    ? values.topics
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean)
    : [...new Set(events.flatMap(topicsOf))];
  return {
    table,
    topics,
    schema,
    partitionBy: values['partition-by'],
    sortBy: values['sort-by'],
    schemaEvolution:
      values['schema-evolution'] === undefined
        ? undefined
        : parseEvolutionPolicy(values['schema-evolution'], '--schema-evolution'),
    mode: modeFromOptions(values),
    identifierColumns: identifierFromOptions(values),
    kafkaLineage: true,
    ...(values['kafka-value'] ? { kafkaValue: true } : {}),
    properties: { ...deleteModeFromOptions(values), ...formatVersionFromOptions(values) },
  };
}

/** The flags that describe one route; a routes file describes every route itself. */
const ROUTE_FLAGS = [
  'table',
  'schema',
  'partition-by',
  'sort-by',
  'topics',
  'mode',
  'identifier',
  'delete-mode',
  'format-version',
  'schema-evolution',
  'kafka-value',
] as const;

/**
 * Every route of a routes file (the JSON the Lambda takes as FLOE_TABLES: several tables, formats,
 * mappings, `when`, CDC modes), or the one route the flags describe.
 * @throws UsageError when both are given; ValidationError for a routes file that does not parse
 */
async function routesFor(values: ParsedOptions, events: unknown[]): Promise<TableRoute[]> {
  if (values.routes === undefined) return [await routeFromOptions(values, events)];
  const flag = ROUTE_FLAGS.find((f) => values[f] !== undefined);
  if (flag) throw new UsageError(`--routes describes the tables itself; leave out --${flag}`);
  return parseRoutes(await readJsonFile(values.routes, 'routes file'));
}

export async function runIngest(values: ParsedOptions, files: string[]): Promise<number> {
  if (files.length === 0) throw new UsageError('ingest needs at least one event file');
  const events = await Promise.all(files.map((f) => readJsonFile(f, 'event file', parseEventJson)));
  const routes = await routesFor(values, events);
  const { catalog, lock } = await openCatalog(values, { withLock: true });
  for (let i = 0; i < files.length; i++) {
    const report = await ingestEvent({ catalog, routes, lock }, events[i]);
    printIngestReport(files[i], report);
  }
  return 0;
}
