/**
 * `_kafka.value`, the record's original value bytes, for a route that asks for it (`kafkaValue`) or a
 * table whose `floe.kafka-value` property is true. A table created so has it from the start
 * (load-or-create-table.ts); an existing one gains it here, before the batch is mapped, as a schema-only
 * change through the commit loop: an optional field under a new id, so rows written before read it as
 * null, and every writer after fills it (the mapping writes it whenever the schema has it). It is added
 * once per table, so a commit of its own costs nothing a batch would notice.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import { ValidationError } from '../errors.js';
import { hasKafkaValue, KAFKA_FIELD, withKafkaValue } from '../records/kafka-lineage.js';
import type { TableRoute } from '../routing/routes.js';
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
 * The table with `_kafka.value` when the route or the table asks for it and it is missing; else the
 * table as given.
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
  if (hasKafkaValue(schema) || !wantsKafkaValue(route, table.metadata.properties)) return table;
  if (!schema.fields.some((f) => f.name === KAFKA_FIELD))
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
        if (hasKafkaValue(current)) return { kind: 'noop', reason: 'another writer added _kafka.value' };
        const evolved = withKafkaValue(current, md['last-column-id']);
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
