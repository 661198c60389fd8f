/**
 * The one definition of a table route as users write it: FLOE_TABLES (and FLOE_TABLES_FILE), the
 * CLI's `--routes` files and, rendered from its props, the construct's routes are all checked against
 * it (routes.ts), and routes.schema.json, which editors use to complete a routes file, is generated
 * from it (`npm run schema`). TypeBox schemas are JSON Schema, so the check and the published schema
 * cannot disagree. The nested settings are defined beside the code that reads them (mapping/, formats/,
 * sql/); what no schema can say (a `when` condition, an Iceberg schema, SQL) is checked after it.
 */
import { type Static, Type } from '@sinclair/typebox';
import { NonEmptyString, OneOf, Settings } from '../check-settings.js';
import { FormatSettingsSchema } from '../formats/format-schema.js';
import { MappingSettingsSchema } from '../mapping/mapping-schema.js';
import { EVOLUTION_POLICIES, INGEST_MODES } from '../spec/table-properties.js';
import { AggregateSettingsSchema } from '../sql/aggregate-settings-schema.js';

/** One route: which topics feed which table, and how. Only `table` and `topics` are required. */
export const RouteSettingsSchema = Settings(
  {
    table: NonEmptyString({ expected: '"namespace.table"', description: 'Target table as namespace.table.' }),
    topics: Type.Array(NonEmptyString({ expected: 'a topic name' }), {
      minItems: 1,
      description: 'Topics whose records land in this table.',
    }),
    schema: Type.Optional(
      Type.Object(
        {},
        {
          expected: 'an Iceberg schema ({ "type": "struct", "fields": [...] })',
          description: 'Iceberg schema JSON (spec form, with field ids) for creating the table.',
        },
      ),
    ),
    partitionBy: Type.Optional(
      NonEmptyString({ description: 'Partition expression, e.g. day(order_ts), bucket(16, customer_id).' }),
    ),
    sortBy: Type.Optional(
      NonEmptyString({ description: 'Sort order, e.g. customer_id, order_ts desc nulls last.' }),
    ),
    mode: Type.Optional(OneOf(INGEST_MODES)),
    identifierColumns: Type.Optional(
      Type.Array(NonEmptyString({ expected: 'a column name' }), {
        description: 'Key columns for debezium and upsert (Iceberg identifier fields).',
      }),
    ),
    format: Type.Optional(FormatSettingsSchema),
    mapping: Type.Optional(MappingSettingsSchema),
    when: Type.Optional(
      Type.Object(
        {},
        {
          expected:
            'a condition ({ "field" or "header", "equals", "in" or "exists" } or { "all", "any" or "not" })',
          description: 'Only records matching this condition (a value field or a header) go to this table.',
        },
      ),
    ),
    schemaEvolution: Type.Optional(OneOf(EVOLUTION_POLICIES)),
    kafkaLineage: Type.Optional(
      Type.Boolean({ description: 'Add the _kafka lineage struct (default true).' }),
    ),
    kafkaValue: Type.Optional(
      Type.Boolean({
        description:
          "Keep each record's original value bytes in _kafka.value (default false; needs kafkaLineage). Sets floe.kafka-value.",
      }),
    ),
    dlqTable: Type.Optional(
      NonEmptyString({ description: 'Dead-letter table (default <table>__dlq in the same namespace).' }),
    ),
    targetFileSizeBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
    properties: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: 'Table properties set at creation (names and values are text).',
      }),
    ),
    aggregate: Type.Optional(AggregateSettingsSchema),
  },
  {
    description: 'One topic → table route.',
    expected: 'a route (an object { "table", "topics", ... })',
  },
);

/** FLOE_TABLES and a routes file: a JSON array of routes... */
export const RoutesSchema = Type.Array(RouteSettingsSchema, {
  expected: 'a JSON array of routes (or an object { "$schema", "routes": [...] })',
});

/** ...or, so that editors find the schema, an object naming it with `$schema` and holding the routes. */
export const RoutesDocumentSchema = Settings({
  $schema: Type.Optional(Type.String({ description: 'Where editors find this schema.' })),
  routes: RoutesSchema,
});

/**
 * The two forms with each route left unchecked: parseRoutes checks the form first, then each route on
 * its own, so that one route's schema problems do not hide another's that only reading it finds.
 */
export const RouteListShape = Type.Array(Type.Unknown(), { expected: RoutesSchema.expected as string });
export const RouteDocumentShape = Settings({
  $schema: Type.Optional(Type.String()),
  routes: RouteListShape,
});

/** A route as written (before routes.ts reads it into a TableRoute). */
export type RouteSettings = Static<typeof RouteSettingsSchema>;
