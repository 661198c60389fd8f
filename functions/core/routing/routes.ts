/**
 * Table routes: which topics feed which table, and how. Validated once at start-up, so a bad
 * configuration is one clear error (listing every problem found), not a failure per batch: first
 * against the one route schema (route-schema.ts), then for what a schema cannot say.
 */
import { formatIdentifier, parseIdentifier } from '../catalog/catalog.js';
import { refuseSetting, settingsError, settingsProblems } from '../check-settings.js';
import { ValidationError } from '../errors.js';
import { dlqIdentifier } from '../records/dead-letters.js';
import { parseSchema } from '../spec/schema.js';
import { type EvolutionPolicy, parseEvolutionPolicy } from '../mapping/evolution/evolution-policy.js';
import { type FormatConfig, parseFormatConfig } from '../formats/format-config.js';
import { checkCdcMapping } from '../mapping/cdc-mapping.js';
import { type MappingConfig, parseMappingConfig } from '../mapping/mapping-config.js';
import { parseRouteCondition, type RouteCondition } from '../mapping/route-condition.js';
import { type AggregateConfig, parseAggregateConfig } from '../sql/aggregate-config.js';
import { INGEST_MODES, type IngestMode } from '../spec/table-properties.js';
import type { Schema, TableIdentifier } from '../spec/types.js';
import {
  RouteDocumentShape,
  RouteListShape,
  type RouteSettings,
  RouteSettingsSchema,
} from './route-schema.js';

export interface TableRoute {
  table: TableIdentifier;
  topics: string[];
  /** Iceberg schema JSON for creating the table when it does not exist. */
  schema?: Schema;
  /** Partition expression for creating the table, e.g. `day(order_ts), bucket(16, customer_id)`. */
  partitionBy?: string;
  /** Sort order for creating the table, e.g. `customer_id, order_ts desc nulls last`. */
  sortBy?: string;
  /** Add the `_kafka` lineage struct (default true). */
  kafkaLineage: boolean;
  /**
   * Keep each record's original value bytes in `_kafka.value` (ingest/kafka-value-column.ts); a table's
   * `floe.kafka-value` property asks for it too. @default false
   */
  kafkaValue?: boolean;
  /** Dead-letter table name (default `<table>__dlq` in the same namespace). */
  dlqTable?: string;
  /** Table properties set at creation (e.g. write.target-file-size-bytes). */
  properties: Record<string, string>;
  /**
   * How records become rows: `append` (every record a new row), `debezium` (change envelopes with
   * op/before/after), `upsert` (the key identifies the row; a tombstone deletes it). Stored as the
   * table property `floe.mode` when floe creates the table. @default the table's property, else append
   */
  mode?: IngestMode;
  /** Identifier columns for debezium/upsert (Iceberg `identifier-field-ids`). */
  identifierColumns?: string[];
  /** How value (and key) bytes are decoded: JSON, Confluent/Glue registry formats. @default JSON values */
  format?: FormatConfig;
  /** What becomes columns (value fields, key, headers, timestamp; renames, coercions, defaults). */
  mapping?: MappingConfig;
  /** Schema evolution policy. @default the table property `floe.schema-evolution`, else evolve */
  schemaEvolution?: EvolutionPolicy;
  /** Only records matching this condition (a value field or a header) go to this table. */
  when?: RouteCondition;
  /** A windowed aggregation of the mapped records instead of the records themselves (aggregate/). */
  aggregate?: AggregateConfig;
}

// Defined with the table property that stores them (floe.mode).
export { INGEST_MODES, type IngestMode };

/** The route at `path` (`routes[0]`), already shaped by the schema, checked for what it cannot say. */
function readRoute(r: RouteSettings, path: string): TableRoute {
  let table: TableIdentifier;
  try {
    table = parseIdentifier(r.table);
  } catch (error) {
    refuseSetting(`${path}.table`, (error as Error).message);
  }
  const properties: Record<string, string> = {};
  if (r.targetFileSizeBytes !== undefined) {
    properties['write.target-file-size-bytes'] = String(r.targetFileSizeBytes);
  }
  Object.assign(properties, r.properties);
  const mapping = r.mapping === undefined ? undefined : parseMappingConfig(r.mapping, `${path}.mapping`);
  // A CDC table's row is the change event's row image: refuse, at start-up, what it cannot apply.
  if (r.mode === 'debezium' || r.mode === 'upsert') checkCdcMapping(mapping, `${path}.mapping`);
  const schema = r.schema === undefined ? undefined : parseSchema(r.schema, `${path}.schema`);
  if (r.aggregate !== undefined && (r.mode !== undefined || r.identifierColumns !== undefined)) {
    // The result table's key is the query's GROUP BY and window; a second key would contradict it.
    refuseSetting(
      `${path}.aggregate`,
      'an aggregate route takes neither mode nor identifierColumns (its key is GROUP BY + window_start)',
    );
  }
  if (r.kafkaValue === true && (r.kafkaLineage === false || r.aggregate !== undefined)) {
    // The bytes live in the lineage struct, which an aggregate's rows (one per window and group) lack.
    refuseSetting(
      `${path}.kafkaValue`,
      r.aggregate !== undefined
        ? 'an aggregate route has no per-record rows to keep value bytes in'
        : 'the value bytes are kept in _kafka, which kafkaLineage: false leaves out',
    );
  }
  const aggregate =
    r.aggregate === undefined
      ? undefined
      : parseAggregateConfig(r.aggregate, `${path}.aggregate`, { topics: r.topics, schema });
  return {
    table,
    ...(aggregate ? { aggregate } : {}),
    format: r.format === undefined ? undefined : parseFormatConfig(r.format, `${path}.format`),
    mapping,
    schemaEvolution:
      r.schemaEvolution === undefined
        ? undefined
        : parseEvolutionPolicy(r.schemaEvolution, `${path}.schemaEvolution`),
    when: r.when === undefined ? undefined : parseRouteCondition(r.when, `${path}.when`),
    mode: r.mode,
    identifierColumns: r.identifierColumns,
    topics: r.topics,
    schema,
    partitionBy: r.partitionBy,
    sortBy: r.sortBy,
    kafkaLineage: r.kafkaLineage !== false,
    ...(r.kafkaValue === true ? { kafkaValue: true } : {}),
    dlqTable: r.dlqTable,
    properties,
  };
}

/**
 * The routes of FLOE_TABLES, a `--routes` file or the construct: a JSON array of routes, or an object
 * `{ "$schema": ..., "routes": [...] }` (so that editors find routes.schema.json).
 */
function routeList(json: unknown): unknown[] {
  const document = json !== null && typeof json === 'object' && !Array.isArray(json);
  const problems = document
    ? settingsProblems(RouteDocumentShape, json, '')
    : settingsProblems(RouteListShape, json, 'routes');
  if (problems.length > 0) throw settingsError(problems);
  return document ? (json as { routes: unknown[] }).routes : (json as unknown[]);
}

/**
 * Parses routes from JSON (the FLOE_TABLES variable, a routes file, the construct's rendered routes).
 * @throws RouteConfigError (a ValidationError, not retryable) listing every problem with its path
 *   (`routes[0].partitionBy: expected a non-empty string, got 5`): of each route, all the schema finds,
 *   else the first that only reading it finds (an unknown column type, a `when` or SQL that does not parse)
 */
export function parseRoutes(json: unknown): TableRoute[] {
  const problems: string[] = [];
  const routes = routeList(json).map((route, i) => {
    const path = `routes[${i}]`;
    const found = settingsProblems(RouteSettingsSchema, route, path);
    if (found.length > 0) {
      problems.push(...found);
      return undefined;
    }
    try {
      return readRoute(route as RouteSettings, path);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      problems.push(error.message);
      return undefined;
    }
  });
  if (problems.length > 0) throw settingsError(problems);
  const shared = sharedDeadLetterTables(routes as TableRoute[]);
  if (shared.length > 0) throw settingsError(shared);
  return routes as TableRoute[];
}

/**
 * A dead-letter table serves one table. Its committed offsets say which letters it holds, per topic
 * partition and offset, with no word of the table they were meant for: shared, one table's letters (and
 * the main table's ranges recorded beside them) would make the other table's letters at the same
 * offsets look like replays, and they would be dropped. Refused at start-up, naming both routes.
 */
function sharedDeadLetterTables(routes: readonly TableRoute[]): string[] {
  const owners = new Map<string, { index: number; table: string }>();
  const problems: string[] = [];
  routes.forEach((route, index) => {
    const table = formatIdentifier(route.table);
    const dlq = formatIdentifier(dlqIdentifier(route.table, route.dlqTable));
    const owner = owners.get(dlq);
    if (owner && owner.table !== table)
      problems.push(
        `routes[${index}].dlqTable: ${dlq} is already the dead-letter table of routes[${owner.index}] (${owner.table}); ` +
          "each table needs its own, or one table's dead letters would be taken for replays of the other's and dropped",
      );
    else if (!owner) owners.set(dlq, { index, table });
  });
  const tables = new Set(routes.map((r) => formatIdentifier(r.table)));
  routes.forEach((route, index) => {
    const dlq = formatIdentifier(dlqIdentifier(route.table, route.dlqTable));
    if (tables.has(dlq))
      problems.push(`routes[${index}].dlqTable: ${dlq} is a route's table, not a dead-letter table`);
  });
  return problems;
}

/** The routes a topic feeds. */
export function routesForTopic(routes: readonly TableRoute[], topic: string): TableRoute[] {
  return routes.filter((r) => r.topics.includes(topic));
}
