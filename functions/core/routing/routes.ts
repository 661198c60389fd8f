/**
 * Table routes: which topics feed which table, and how. Validated once at start-up, so a bad
 * configuration is one clear error, not a failure per batch.
 */
import { parseIdentifier } from '../catalog/catalog.js';
import { ValidationError } from '../errors.js';
import { parseSchema } from '../spec/schema.js';
import { type EvolutionPolicy, parseEvolutionPolicy } from '../mapping/evolution/evolution-policy.js';
import { type FormatConfig, parseFormatConfig } from '../formats/format-config.js';
import { checkCdcMapping } from '../mapping/cdc-mapping.js';
import { type MappingConfig, parseMappingConfig } from '../mapping/mapping-config.js';
import { parseRouteCondition, type RouteCondition } from '../mapping/route-condition.js';
import { type AggregateConfig, parseAggregateConfig } from '../sql/aggregate-config.js';
import { INGEST_MODES, type IngestMode } from '../spec/table-properties.js';
import type { Schema, TableIdentifier } from '../spec/types.js';

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

function fail(path: string, message: string): never {
  throw new ValidationError(`table route ${path}: ${message}`);
}

/** The keys a route may have; anything else is a typo or a setting floe does not have, never ignored. */
const ROUTE_KEYS = [
  'table',
  'topics',
  'schema',
  'partitionBy',
  'sortBy',
  'mode',
  'identifierColumns',
  'format',
  'mapping',
  'when',
  'schemaEvolution',
  'kafkaLineage',
  'dlqTable',
  'targetFileSizeBytes',
  'properties',
  'aggregate',
] as const;

/** Parses routes from JSON (the FLOE_TABLES variable or a CLI flag). @throws ValidationError */
export function parseRoutes(json: unknown): TableRoute[] {
  if (!Array.isArray(json)) fail('', 'expected a JSON array of routes');
  const routes = json.map((raw, i): TableRoute => {
    const r = raw as Record<string, unknown>;
    if (!r || typeof r !== 'object' || Array.isArray(r)) fail(`[${i}]`, 'must be an object');
    for (const key of Object.keys(r)) {
      if (!(ROUTE_KEYS as readonly string[]).includes(key)) {
        fail(`[${i}].${key}`, `unknown setting (a route takes: ${ROUTE_KEYS.join(', ')})`);
      }
    }
    if (typeof r.table !== 'string') fail(`[${i}].table`, 'must be "namespace.table"');
    let table: TableIdentifier;
    try {
      table = parseIdentifier(r.table);
    } catch (error) {
      fail(`[${i}].table`, (error as Error).message);
    }
    if (
      !Array.isArray(r.topics) ||
      r.topics.length === 0 ||
      !r.topics.every((t) => typeof t === 'string' && t)
    ) {
      fail(`[${i}].topics`, 'must be a non-empty array of topic names');
    }
    const properties: Record<string, string> = {};
    if (r.targetFileSizeBytes !== undefined) {
      if (!Number.isSafeInteger(r.targetFileSizeBytes) || (r.targetFileSizeBytes as number) <= 0) {
        fail(`[${i}].targetFileSizeBytes`, 'must be a positive integer');
      }
      properties['write.target-file-size-bytes'] = String(r.targetFileSizeBytes);
    }
    if (r.properties !== undefined) {
      for (const [k, v] of Object.entries(r.properties as Record<string, unknown>)) properties[k] = String(v);
    }
    if (r.mode !== undefined && !INGEST_MODES.includes(r.mode as IngestMode)) {
      fail(`[${i}].mode`, `must be one of ${INGEST_MODES.join(', ')}`);
    }
    if (
      r.identifierColumns !== undefined &&
      (!Array.isArray(r.identifierColumns) || !r.identifierColumns.every((c) => typeof c === 'string' && c))
    ) {
      fail(`[${i}].identifierColumns`, 'must be an array of column names');
    }
    const mapping =
      r.mapping === undefined ? undefined : parseMappingConfig(r.mapping, `routes[${i}].mapping`);
    // A CDC table's row is the change event's row image: refuse, at start-up, what it cannot apply.
    if (r.mode === 'debezium' || r.mode === 'upsert') checkCdcMapping(mapping, `routes[${i}].mapping`);
    const schema = r.schema === undefined ? undefined : parseSchema(r.schema, `routes[${i}].schema`);
    if (r.aggregate !== undefined && (r.mode !== undefined || r.identifierColumns !== undefined)) {
      // The result table's key is the query's GROUP BY and window; a second key would contradict it.
      fail(
        `[${i}].aggregate`,
        'an aggregate route takes neither mode nor identifierColumns (its key is GROUP BY + window_start)',
      );
    }
    const aggregate =
      r.aggregate === undefined
        ? undefined
        : parseAggregateConfig(r.aggregate, `routes[${i}].aggregate`, {
            topics: r.topics as string[],
            schema,
          });
    return {
      table,
      ...(aggregate ? { aggregate } : {}),
      format: r.format === undefined ? undefined : parseFormatConfig(r.format, `routes[${i}].format`),
      mapping,
      schemaEvolution:
        r.schemaEvolution === undefined
          ? undefined
          : parseEvolutionPolicy(r.schemaEvolution, `routes[${i}].schemaEvolution`),
      when: r.when === undefined ? undefined : parseRouteCondition(r.when, `routes[${i}].when`),
      mode: r.mode as IngestMode | undefined,
      identifierColumns: r.identifierColumns as string[] | undefined,
      topics: r.topics as string[],
      schema,
      partitionBy: typeof r.partitionBy === 'string' ? r.partitionBy : undefined,
      sortBy: typeof r.sortBy === 'string' ? r.sortBy : undefined,
      kafkaLineage: r.kafkaLineage !== false,
      dlqTable: typeof r.dlqTable === 'string' ? r.dlqTable : undefined,
      properties,
    };
  });
  return routes;
}

/** The routes a topic feeds. */
export function routesForTopic(routes: readonly TableRoute[], topic: string): TableRoute[] {
  return routes.filter((r) => r.topics.includes(topic));
}
