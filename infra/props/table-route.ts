/**
 * Where records go: the topic → table routes, rendered into the routes file the ingest function reads
 * (`FLOE_TABLES_FILE`), and how each route turns records into rows.
 */
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { FormatSettings } from '../../functions/core/formats/format-schema.js';
import type { MappingSettings } from '../../functions/core/mapping/mapping-schema.js';
import type { Schema } from '../../functions/core/spec/types.js';

/** How records become rows: plain appends, a Debezium change envelope, or upserts by key. */
export type IngestMode = 'append' | 'debezium' | 'upsert';

/** What happens to records whose schema the table cannot take as it is. */
export type SchemaPolicy = 'evolve' | 'block' | 'dlq';

/** An aggregate route's query and window rules (the handlers' `aggregate` key, as is). */
export interface AggregateRouteProps {
  /** `SELECT ... FROM <topic> [WHERE ...] GROUP BY <columns>, TUMBLE(<ts>, INTERVAL 'n' UNIT)`. */
  readonly sql: string;
  /**
   * Seconds after a window's end (by the watermark) in which its records still count.
   * @default 0
   */
  readonly allowedLatenessSeconds?: number;
  /**
   * The source topic's partition count: no window closes before every partition has been seen.
   * @default - the partitions seen so far
   */
  readonly partitions?: number;
  /**
   * Produce each closed window to this topic (key = group columns + window_start as JSON), at least once.
   * `bootstrapServers` is `host:port,...` reachable from the function, which is attached to no VPC (on
   * MSK: the public endpoint). `auth: 'aws-msk-iam'` signs in with the function's role (MSK's IAM
   * listeners, TLS; public port 9198): the source must then be the MSK
   * cluster the topic is on, and the role gets `kafka-cluster:WriteData` on it (create the topic first:
   * no `CreateTopic` is granted). `tls` turns TLS on without IAM.
   * @default - no emit
   */
  readonly emit?: {
    readonly topic: string;
    readonly bootstrapServers: string;
    readonly auth?: 'none' | 'aws-msk-iam';
    readonly tls?: boolean;
  };
}

/**
 * One topic → table route; rendered into the routes file the ingest function reads (`FLOE_TABLES_FILE`)
 * and checked at synth against the same route schema the handlers use (functions/core/routing/
 * route-schema.ts; a unit test keeps these types in agreement with it). `format` and `mapping` are that
 * schema's own types.
 */
export interface TableRoute {
  /** Topics whose records land in this table. */
  readonly topics: readonly string[];
  /** Target table as `namespace.name`. */
  readonly table: string;
  /**
   * Iceberg schema (spec JSON, with field ids). With S3 Tables the construct can create the table from it.
   * @default - floe creates the table from the first records
   */
  readonly schema?: Schema;
  /**
   * Partition spec as transforms over columns, comma-separated: `day(order_ts)`, `bucket(16, id)`, `region`.
   * @default - unpartitioned
   */
  readonly partitionBy?: string;
  /**
   * How records become rows.
   * @default 'append'
   */
  readonly mode?: IngestMode;
  /**
   * Key columns for `debezium` and `upsert` (Iceberg identifier fields); required by those modes.
   * @default - none
   */
  readonly identifierColumns?: readonly string[];
  /**
   * Data file size floe aims for when writing and compacting (`write.target-file-size-bytes`).
   * @default 134217728 (128 MiB)
   */
  readonly targetFileSizeBytes?: number;
  /**
   * What to do with records whose schema does not fit (the handlers' `schemaEvolution`).
   * @default - the table property `floe.schema-evolution`, else 'evolve'
   */
  readonly schemaPolicy?: SchemaPolicy;
  /**
   * Sort order floe gives the table when it creates it: `customer_id, order_ts desc nulls last`.
   * @default - unsorted
   */
  readonly sortBy?: string;
  /**
   * How floe decodes keys and values itself (functions/handlers/README.md, `format`): JSON, the
   * Confluent wire format through a Schema Registry, AWS Glue Schema Registry. Credentials never go
   * here: `registry.basicAuth` / `registry.bearerToken` are refused at synth (they would be written in
   * plain text into the function's code and the template); pass `registryCredentials` instead.
   * @default - JSON values (or what the event source mapping's schema registry decoded)
   */
  readonly format?: FormatSettings;
  /**
   * Secret holding the credentials of `format.registry`: `{"username","password"}`,
   * `{"basicAuth":"user:password"}` or `{"bearerToken":"..."}`. The ingest function may read it and
   * reads it once per cold start; its ARN reaches the function as an environment variable, its value never.
   * @default - the registry is asked without credentials
   */
  readonly registryCredentials?: secretsmanager.ISecret;
  /**
   * What becomes columns (`mapping`: value fields, key, headers, timestamp, renames, type rules,
   * defaults; for CDC modes only type rules). Checked at synth.
   * @default - the value's fields are the columns
   */
  readonly mapping?: MappingSettings;
  /**
   * Only records matching this condition go to this table (`when`: a value field or a header), so one
   * topic can feed several tables. Checked at synth.
   * @default - every record of the topics
   */
  readonly when?: { readonly [key: string]: unknown };
  /**
   * A windowed aggregation of the mapped records instead of the records themselves: the table holds one
   * row per GROUP BY key and TUMBLE window (see the README's "SQL path"). `schema` is then the mapped
   * record's schema the SQL reads; the table's own schema is derived from the query. Checked at synth.
   * @default - none: the route writes its records
   */
  readonly aggregate?: AggregateRouteProps;
  /**
   * Table properties floe sets when it creates the table (e.g. `write.parquet.compression-codec`).
   * @default - none beyond floe's own
   */
  readonly properties?: { readonly [key: string]: string };
  /**
   * Add floe's `_kafka` lineage struct (topic, partition, offset, timestamp, key, headers) to every row.
   * @default true
   */
  readonly kafkaLineage?: boolean;
  /**
   * Keep each record's original value bytes in `_kafka.value` (served as they were by `floe kafka-serve`).
   * Needs `kafkaLineage`; an existing table gains the field at its next batch.
   * @default false
   */
  readonly kafkaValue?: boolean;
  /**
   * Table that receives this route's dead-lettered records: a name in the route's namespace, or
   * `namespace.name`. floe creates it at the first dead letter.
   * @default - `<table>__dlq` in the route's namespace
   */
  readonly dlqTable?: string;
}
