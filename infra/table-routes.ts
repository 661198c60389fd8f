/**
 * Checks the construct's table routes at synth time and renders them as the handlers read them
 * (`FLOE_TABLES`, see functions/handlers/README.md). A route that cannot work fails `cdk synth`, not the
 * first batch in production.
 */
import { withKafkaLineage } from '../functions/core/ingest/kafka-lineage.js';
import { parseRoutes } from '../functions/core/ingest/routes.js';
import { parsePartitionExpression } from '../functions/core/spec/partition-spec.js';
import { findFieldByName } from '../functions/core/spec/schema-index.js';
import type { PartitionSpec, Schema } from '../functions/core/spec/types.js';
import type { IngestMode, SchemaPolicy, TableRoute } from './props.js';

/** Iceberg's `write.target-file-size-bytes` default. */
export const DEFAULT_TARGET_FILE_SIZE_BYTES = 134_217_728;

/** One route exactly as `FLOE_TABLES` carries it, defaults filled in. */
export interface RenderedRoute {
  topics: string[];
  table: string;
  schema?: Schema;
  partitionBy?: string;
  mode: IngestMode;
  identifierColumns?: string[];
  targetFileSizeBytes: number;
  schemaEvolution?: SchemaPolicy;
  sortBy?: string;
  format?: { readonly [key: string]: unknown };
  mapping?: { readonly [key: string]: unknown };
  when?: { readonly [key: string]: unknown };
  properties?: { readonly [key: string]: string };
  kafkaLineage?: boolean;
  dlqTable?: string;
}

/** A table name split at its last dot: the namespace (possibly multi-level for REST) and the name. */
export interface TableName {
  namespace: string;
  name: string;
}

/**
 * Splits `ns.name` (or `a.b.name` for multi-level REST namespaces).
 * @throws Error when there is no namespace or an empty part
 */
export function splitTableName(table: string): TableName {
  const dot = table.lastIndexOf('.');
  const parts = table.split('.');
  if (dot <= 0 || parts.some((p) => p.length === 0)) {
    throw new Error(`table '${table}' must be written 'namespace.name'`);
  }
  return { namespace: table.slice(0, dot), name: table.slice(dot + 1) };
}

/** S3 Tables allows lowercase letters, digits and underscores (3–255 chars for tables, 1–255 for namespaces). */
const S3_TABLES_NAME = /^[a-z0-9][a-z0-9_]*$/;

/**
 * Refuses table names S3 Tables would reject (one namespace level, lowercase letters, digits, `_`).
 * @throws Error naming the table
 */
export function checkS3TablesName(table: string): void {
  const { namespace, name } = splitTableName(table);
  if (namespace.includes('.') || !S3_TABLES_NAME.test(namespace) || !S3_TABLES_NAME.test(name)) {
    throw new Error(
      `table '${table}': S3 Tables needs one namespace level and names of lowercase letters, digits and '_'`,
    );
  }
}

/**
 * The schema and partition spec floe gives a route's table when it creates it (the `_kafka` lineage
 * column appended unless turned off), from the same core functions the handlers use.
 * @throws ValidationError for a partition expression the schema cannot take
 */
export function tableLayout(
  route: TableRoute,
): { schema: Schema; partitionSpec?: PartitionSpec } | undefined {
  if (route.schema === undefined) return undefined;
  const schema = route.kafkaLineage === false ? route.schema : withKafkaLineage(route.schema);
  return route.partitionBy === undefined
    ? { schema }
    : { schema, partitionSpec: parsePartitionExpression(route.partitionBy, schema) };
}

function checkRoute(route: TableRoute, parsedSchema: Schema | undefined): void {
  const where = `table route '${route.table}'`;
  splitTableName(route.table);
  const mode = route.mode ?? 'append';
  if (mode !== 'append' && (route.identifierColumns ?? []).length === 0) {
    throw new Error(`${where}: mode '${mode}' needs identifierColumns`);
  }
  if (parsedSchema === undefined) return;
  for (const column of route.identifierColumns ?? []) {
    if (!findFieldByName(parsedSchema, column))
      throw new Error(`${where}: identifier column '${column}' is not in the schema`);
  }
  try {
    tableLayout({ ...route, schema: parsedSchema });
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Checks every route as the handlers will read it (the core's `parseRoutes` over the rendered
 * `FLOE_TABLES`), plus what only shows once data flows: key columns for CDC modes that exist in the
 * schema, a partition expression the schema can take, no table routed twice.
 * @throws Error naming the first bad route
 */
export function checkRoutes(routes: readonly TableRoute[]): void {
  if (routes.length === 0) throw new Error('KafkaToIceberg needs at least one table route');
  const parsed = parseRoutes(JSON.parse(JSON.stringify(renderRoutes(routes))));
  const seen = new Set<string>();
  routes.forEach((route, i) => {
    if (seen.has(route.table)) throw new Error(`table '${route.table}' is routed twice`);
    seen.add(route.table);
    checkRoute(route, parsed[i].schema);
  });
}

/**
 * The routes as `FLOE_TABLES` carries them, with the defaults filled in (so handlers never guess), in
 * the handlers' own keys (`parseRoutes` refuses any other: checkRoutes runs it at synth).
 */
export function renderRoutes(routes: readonly TableRoute[]): RenderedRoute[] {
  return routes.map((route) => ({
    topics: [...route.topics],
    table: route.table,
    ...(route.schema === undefined ? {} : { schema: route.schema }),
    ...(route.partitionBy === undefined ? {} : { partitionBy: route.partitionBy }),
    mode: route.mode ?? 'append',
    ...(route.identifierColumns === undefined ? {} : { identifierColumns: [...route.identifierColumns] }),
    targetFileSizeBytes: route.targetFileSizeBytes ?? DEFAULT_TARGET_FILE_SIZE_BYTES,
    // The handlers' key; unset, the table's own `floe.schema-evolution` property (else evolve) decides.
    ...(route.schemaPolicy === undefined ? {} : { schemaEvolution: route.schemaPolicy }),
    ...(route.sortBy === undefined ? {} : { sortBy: route.sortBy }),
    ...(route.format === undefined ? {} : { format: route.format }),
    ...(route.mapping === undefined ? {} : { mapping: route.mapping }),
    ...(route.when === undefined ? {} : { when: route.when }),
    ...(route.properties === undefined ? {} : { properties: { ...route.properties } }),
    ...(route.kafkaLineage === undefined ? {} : { kafkaLineage: route.kafkaLineage }),
    ...(route.dlqTable === undefined ? {} : { dlqTable: route.dlqTable }),
  }));
}

/** Every topic any route reads, in first-seen order. */
export function routeTopics(routes: readonly TableRoute[]): string[] {
  return [...new Set(routes.flatMap((r) => r.topics))];
}
