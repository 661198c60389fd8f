/**
 * What kafka-serve learns from the routes file the tables are ingested with (`--routes`, the same file
 * `floe run`/`ingest` take): each served table's DLQ table (a route's `dlqTable`, else `<table>__dlq`)
 * and the schema registry its values were decoded through (`format.registry`), which re-encodes rows
 * that kept no value bytes as the frames they were. Without the file: `<table>__dlq` and JSON values.
 */
import { formatIdentifier } from '../core/catalog/catalog.js';
import type { RegistryConfig } from '../core/formats/format-config.js';
import {
  createSchemaRegistryClient,
  type SchemaRegistryClient,
} from '../core/formats/schema-registry-client.js';
import { dlqIdentifier } from '../core/records/dead-letters.js';
import { parseRoutes, type TableRoute } from '../core/routing/routes.js';
import type { TableIdentifier } from '../core/spec/types.js';
import { readJsonFile } from './commands/ingest.js';
import { UsageError } from './options.js';

export interface ServedRoutes {
  /** The DLQ table of a served table. */
  dlqOf(table: TableIdentifier): TableIdentifier;
  /** The registry a served table's values were decoded through, if its routes name one. */
  registryFor(table: TableIdentifier): SchemaRegistryClient | undefined;
  /** One line per table for the start-up message: where its letters and re-encoded values come from. */
  describe(): string[];
}

/**
 * Reads `routesFile` (when given) for the served `tables`.
 * @throws UsageError when the routes of one table name different DLQ tables or registries, or a table
 *   has no route; ValidationError for a routes file that does not parse
 */
export async function servedRoutesFrom(
  routesFile: string | undefined,
  tables: readonly TableIdentifier[],
): Promise<ServedRoutes> {
  const routes = routesFile === undefined ? [] : parseRoutes(await readJsonFile(routesFile, 'routes file'));
  const dlqs = new Map<string, TableIdentifier>();
  const registries = new Map<string, SchemaRegistryClient>();
  // One client (and schema cache) per registry, however many tables it serves.
  const clients = new Map<string, SchemaRegistryClient>();
  const lines: string[] = [];
  for (const table of tables) {
    const name = formatIdentifier(table);
    const own = routes.filter((r) => formatIdentifier(r.table) === name);
    if (routesFile !== undefined && own.length === 0)
      throw new UsageError(`--routes ${routesFile} has no route for ${name}`);
    const dlq = only(
      own.map((r) => formatIdentifier(dlqIdentifier(r.table, r.dlqTable))),
      name,
      'DLQ tables',
    );
    dlqs.set(name, dlq === undefined ? dlqIdentifier(table) : dlqIdentifier(table, dlq));
    const registry = only(registryConfigs(own), name, 'schema registries');
    if (registry !== undefined) {
      let client = clients.get(registry);
      if (!client) {
        client = createSchemaRegistryClient(JSON.parse(registry) as RegistryConfig);
        clients.set(registry, client);
      }
      registries.set(name, client);
    }
    lines.push(
      `${name}: dead letters from ${formatIdentifier(dlqs.get(name) ?? dlqIdentifier(table))}; rows without _kafka.value ${registry === undefined ? 'as JSON' : `re-encoded through ${shownUrl((JSON.parse(registry) as RegistryConfig).url)} where they kept _kafka.schema_id, else as JSON`}`,
    );
  }
  return {
    dlqOf: (table) => dlqs.get(formatIdentifier(table)) ?? dlqIdentifier(table),
    registryFor: (table) => registries.get(formatIdentifier(table)),
    describe: () => lines,
  };
}

/** The registry settings of routes that decode Confluent frames, as comparable JSON. */
function registryConfigs(routes: readonly TableRoute[]): string[] {
  return routes.flatMap((r) => (r.format?.registry ? [JSON.stringify(r.format.registry)] : []));
}

/** The one distinct value, undefined for none. @throws UsageError for several */
function only(values: readonly string[], table: string, what: string): string | undefined {
  const distinct = [...new Set(values)];
  if (distinct.length > 1)
    throw new UsageError(
      `the routes of ${table} name different ${what} (${distinct.join(', ')}): kafka-serve serves one`,
    );
  return distinct[0];
}

/** A registry URL without any user or password it holds, for the start-up line. */
function shownUrl(url: string): string {
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  return shown.toString();
}
