/**
 * The optional `_kafka` fields: `value`, the record's original value bytes, for a route that asks for it
 * (`kafkaValue`) or a table whose `floe.kafka-value` property is true; `schema_id`, the Confluent schema
 * id of the value's frame, for a route that reads registry frames and keeps the value's fields as its
 * columns (wantsSchemaId), so kafka-serve can encode its rows back as the frames they were. A table
 * created so has them from the start (load-or-create-table.ts); an existing one gains them here, before
 * the batch is mapped, as a schema-only change through the commit loop: optional fields under new ids,
 * so rows written before read them as null, and every writer after fills them (the mapping writes them
 * whenever the schema has them). They are added once per table, so a commit of their own costs nothing a
 * batch would notice.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import { ValidationError } from '../errors.js';
import {
  hasKafkaSchemaId,
  hasKafkaValue,
  KAFKA_FIELD,
  type LineageExtras,
  withLineageExtras,
} from '../records/kafka-lineage.js';
import type { TableRoute } from '../routing/routes.js';
import { resolveMode } from '../routing/table-mode.js';
import { currentSchema } from '../spec/metadata.js';
import { maxFieldId } from '../spec/schema-index.js';
import { readIngestProperties } from '../spec/table-properties.js';
import { type CommitOptions, commitAction } from '../table/commit-loop.js';
import { evolveSchema } from '../table/actions/evolve-schema.js';

/**
 * Whether rows of `route` into a table with these properties keep the original value bytes.
 * @throws ValidationError for a malformed `floe.*` property
 */
export function wantsKafkaValue(route: TableRoute, properties: Record<string, string> | undefined): boolean {
  return route.kafkaValue === true || readIngestProperties(properties).kafkaValue;
}

/**
 * Whether rows of `route` keep their value frame's schema id: the route decodes Confluent frames (value
 * format `confluent`, or `auto` with a registry), is not a Debezium table (its rows are the envelope's
 * `after`, not the value) nor an aggregate, and its mapping keeps the value's fields as the columns (no
 * value column, flattening, exclusion or column rule: the registry schema's fields must be found by their
 * names and types). Key, header and timestamp columns may be added: re-encoding reads only the schema's
 * fields.
 * @throws ValidationError for a malformed `floe.*` property or a mode that conflicts with the table's
 */
export function wantsSchemaId(route: TableRoute, properties: Record<string, string> | undefined): boolean {
  const format = route.format;
  if (!route.kafkaLineage || route.aggregate || !format) return false;
  if (format.value !== 'confluent' && !(format.value === 'auto' && format.registry)) return false;
  if (resolveMode(route, properties ?? {}) === 'debezium') return false;
  const m = route.mapping;
  return !m || (m.value.kind === 'fields' && !m.flatten && m.exclude.length === 0 && m.columns.length === 0);
}

/** The optional `_kafka` fields rows of `route` into a table with these properties carry. @throws as both */
export function wantedLineageExtras(
  route: TableRoute,
  properties: Record<string, string> | undefined,
): LineageExtras {
  return { value: wantsKafkaValue(route, properties), schemaId: wantsSchemaId(route, properties) };
}

/**
 * The table with the `_kafka` fields the route or the table asks for (`value`, `schema_id`) when they
 * are missing; else the table as given.
 * @throws ValidationError when the table has no `_kafka` struct (lineage off) or a `_kafka.value` that is
 *   not binary, or a malformed `floe.*` property
 * @throws CommitFailedError / CommitStateUnknownError from the commit loop (retryable: the next delivery
 *   tries again)
 */
export async function ensureKafkaValue(
  catalog: Catalog,
  table: LoadedTable,
  route: TableRoute,
  options: CommitOptions = {},
): Promise<LoadedTable> {
  const schema = currentSchema(table.metadata);
  const lineage = schema.fields.some((f) => f.name === KAFKA_FIELD);
  const asked = wantedLineageExtras(route, table.metadata.properties);
  // A table without `_kafka` (created without lineage) simply keeps no schema ids; only the value bytes,
  // which a route asks for by name, are refused.
  const wanted = { value: asked.value, schemaId: asked.schemaId && lineage };
  const missing = (s: typeof schema) =>
    (wanted.value === true && !hasKafkaValue(s)) || (wanted.schemaId === true && !hasKafkaSchemaId(s));
  if (!missing(schema)) return table;
  if (!lineage)
    throw new ValidationError(
      `${formatIdentifier(route.table)} has no ${KAFKA_FIELD} lineage struct, so it cannot keep the original value bytes (kafkaValue): turn kafkaLineage on for a new table, or turn kafkaValue off`,
    );
  const outcome = await commitAction<{ kind: 'noop'; reason: string }>(
    catalog,
    route.table,
    {
      prepare: async (base) => {
        const md = base.metadata;
        const current = currentSchema(md);
        if (!missing(current)) return { kind: 'noop', reason: 'another writer added the _kafka fields' };
        const evolved = withLineageExtras(current, md['last-column-id'], wanted);
        const schemaId = Math.max(...md.schemas.map((s) => s['schema-id'])) + 1;
        const lastColumnId = Math.max(md['last-column-id'], maxFieldId(evolved));
        return {
          kind: 'change',
          change: evolveSchema(
            { schemaId: current['schema-id'], lastColumnId: md['last-column-id'] },
            { ...evolved, 'schema-id': schemaId },
            lastColumnId,
          ),
        };
      },
    },
    { ...options, base: table },
  );
  return outcome.kind === 'committed' ? outcome.result.table : catalog.loadTable(route.table);
}
