/**
 * A route's table, created on first use from the route's schema and partition expression. A table
 * floe creates records how it is fed: `floe.mode`, and for `debezium`/`upsert` the key as the
 * schema's `identifier-field-ids` plus `floe.identifier-columns`, so later ingests need no flags.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import {
  cdcCreateSchema,
  cdcTableProperties,
  MODE_PROPERTY,
  withIdentifierFields,
} from '../routing/table-mode.js';
import { NoSuchTableError, ValidationError } from '../errors.js';
import { parsePartitionExpression, parseSortOrder } from '../spec/partition-spec.js';
import { EVOLUTION_PROPERTY } from '../mapping/evolution/evolution-policy.js';
import { KAFKA_VALUE_PROPERTY, readIngestProperties } from '../spec/table-properties.js';
import type { CommitOptions } from '../table/commit-loop.js';
import { ensureKafkaValue, wantsKafkaValue, wantsSchemaId } from './kafka-value-column.js';
import type { Schema } from '../spec/types.js';
import { withKafkaLineage } from '../records/kafka-lineage.js';
import type { TableRoute } from '../routing/routes.js';

/**
 * The schema and properties floe creates a route's table with.
 * @throws ValidationError when the route has no schema, a CDC mode has no key, a key column
 *   cannot be a key (not a required primitive, or a float/double), or a `floe.*` property is malformed
 */
export function creationRequest(route: TableRoute): { schema: Schema; properties: Record<string, string> } {
  if (!route.schema) {
    throw new ValidationError(
      `table ${formatIdentifier(route.table)} does not exist and no schema was given to create it`,
    );
  }
  const mode = route.mode ?? readIngestProperties(route.properties).mode ?? 'append';
  let schema = route.schema;
  if (mode !== 'append') schema = cdcCreateSchema(schema, mode, route.identifierColumns, route.properties);
  else if (route.identifierColumns?.length) schema = withIdentifierFields(schema, route.identifierColumns);
  const value = wantsKafkaValue(route, route.properties);
  if (value && !route.kafkaLineage)
    throw new ValidationError(
      `table ${formatIdentifier(route.table)}: the original value bytes (kafkaValue, ${KAFKA_VALUE_PROPERTY}) are kept in _kafka, which kafkaLineage: false leaves out`,
    );
  if (route.kafkaLineage)
    schema = withKafkaLineage(schema, { value, schemaId: wantsSchemaId(route, route.properties) });
  const properties = {
    ...route.properties,
    ...(value ? { [KAFKA_VALUE_PROPERTY]: 'true' } : {}),
    ...(route.schemaEvolution ? { [EVOLUTION_PROPERTY]: route.schemaEvolution } : {}),
    ...(mode === 'append' ? { [MODE_PROPERTY]: mode } : cdcTableProperties(mode, schema)),
  };
  // A bad floe.delete-mode (or other floe.* value) fails here, before a table holds it.
  readIngestProperties(properties);
  return { schema, properties };
}

/**
 * Loads the table, creating it from the route when missing; an existing table gains `_kafka.value` and
 * `_kafka.schema_id` when the route or the table asks for them (kafka-value-column.ts).
 * @throws ValidationError (see creationRequest, ensureKafkaValue); whatever the catalog throws
 * @throws CommitFailedError / CommitStateUnknownError when adding `_kafka.value` did not (surely) land
 */
export async function loadOrCreateTable(
  catalog: Catalog,
  route: TableRoute,
  options: CommitOptions = {},
): Promise<LoadedTable> {
  let table: LoadedTable;
  try {
    table = await catalog.loadTable(route.table);
  } catch (error) {
    if (!(error instanceof NoSuchTableError)) throw error;
    const { schema, properties } = creationRequest(route);
    const partitionSpec = route.partitionBy ? parsePartitionExpression(route.partitionBy, schema) : undefined;
    const sortOrder = route.sortBy ? parseSortOrder(route.sortBy, schema) : undefined;
    try {
      return await catalog.createTable(route.table, { schema, partitionSpec, sortOrder, properties });
    } catch (createError) {
      // Another writer created it first: theirs is as good as ours.
      if (!(await catalog.tableExists(route.table))) throw createError;
      table = await catalog.loadTable(route.table);
    }
  }
  return ensureKafkaValue(catalog, table, route, options);
}
