/**
 * The props of the `KafkaToIceberg` construct: where records come from (Kafka), where they go (tables in a
 * catalog), how the tables are kept healthy (maintenance) and how the pipeline is watched (alarms).
 * Everything is readonly and carries its default, as aws-solutions-constructs do.
 */
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as scheduler from 'aws-cdk-lib/aws-scheduler';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Schema } from '../functions/core/spec/types.js';

/** Where the Kafka event source mapping starts reading when its consumer group has no committed offset. */
export type StartingPosition = 'TRIM_HORIZON' | 'LATEST' | 'AT_TIMESTAMP';

/** Provisioned-mode pollers of a Kafka event source mapping (needed for schema registries and retries). */
export interface ProvisionedPollers {
  /**
   * Pollers kept warm (1–200).
   * @default 1
   */
  readonly minimum?: number;
  /**
   * Upper bound the mapping scales to (1–2000).
   * @default 200
   */
  readonly maximum?: number;
  /**
   * Mappings with the same group name share poller capacity.
   * @default - a dedicated poller group per mapping
   */
  readonly groupName?: string;
}

/** Settings shared by every kind of Kafka source. */
export interface KafkaSourceBase {
  /**
   * Topics to consume; one event source mapping is created per topic (Lambda allows one topic per mapping).
   * @default - every topic named by a table route
   */
  readonly topics?: readonly string[];
  /**
   * Consumer group the mappings join. Lambda requires a group id to be unique among event source mappings,
   * so with several topics each mapping joins `<consumerGroupId>-<topic>`.
   * @default - `floe-<unique id of the construct>`
   */
  readonly consumerGroupId?: string;
  /**
   * Where to start when the consumer group has no committed offset.
   * @default 'TRIM_HORIZON' (a lake should not silently skip history)
   */
  readonly startingPosition?: StartingPosition;
  /**
   * Unix time in seconds to start from; required with `AT_TIMESTAMP` (backfills), refused otherwise.
   * @default - none
   */
  readonly startingPositionTimestamp?: number;
  /**
   * Most records per invocation (1–10,000); the 6 MB payload limit applies first.
   * @default 10000 (fewer, larger files and snapshots)
   */
  readonly batchSize?: number;
  /**
   * Longest time the mapping gathers records before invoking (0–300 s).
   * @default Duration.seconds(60)
   */
  readonly maxBatchingWindow?: Duration;
  /**
   * Provisioned mode for the mappings.
   * @default - on-demand pollers
   */
  readonly provisionedPollers?: ProvisionedPollers;
  /**
   * Schema registry (Glue or Confluent) the mapping decodes Avro/Protobuf/JSON Schema records with.
   * Requires `provisionedPollers`.
   * @default - records are delivered as they are on the topic
   */
  readonly schemaRegistry?: lambda.ISchemaRegistry;
  /**
   * Retries before a batch goes to the on-failure destination (-1 = until the records expire).
   * Lambda supports this for Kafka in provisioned mode only.
   * @default - the Lambda default (-1)
   */
  readonly retryAttempts?: number;
  /**
   * Oldest record the mapping still sends (60 s – 7 days); provisioned mode only.
   * @default - the Lambda default (no limit)
   */
  readonly maxRecordAge?: Duration;
  /**
   * Split a failing batch in two and retry each half; provisioned mode only. Off by default because
   * floe already sends undecodable records to its dead-letter path and commits the rest of the batch.
   * @default false
   */
  readonly bisectBatchOnError?: boolean;
  /**
   * Whether the mappings are enabled on creation.
   * @default true
   */
  readonly enabled?: boolean;
}

/** An Amazon MSK cluster (provisioned or serverless) reached with IAM authentication. */
export interface MskSource extends KafkaSourceBase {
  readonly kind: 'msk';
  /** `arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>`; topic and group ARNs are derived from it. */
  readonly clusterArn: string;
}

/** How the mapping authenticates to a self-managed Kafka cluster. */
export interface SelfManagedKafkaAuthentication {
  /** SASL/SCRAM (512 or 256) with `{"username","password"}`, or mutual TLS with a client certificate. */
  readonly method: 'SASL_SCRAM_512' | 'SASL_SCRAM_256' | 'MTLS';
  /** The Secrets Manager secret holding the credentials or the client certificate and key. */
  readonly secret: secretsmanager.ISecret;
}

/** A Kafka cluster floe does not manage, reached by bootstrap servers. */
export interface SelfManagedKafkaSource extends KafkaSourceBase {
  readonly kind: 'self-managed';
  /** `host:port` of the bootstrap brokers. */
  readonly bootstrapServers: readonly string[];
  /** Credentials of the mapping. */
  readonly authentication: SelfManagedKafkaAuthentication;
  /**
   * Root CA certificate of brokers whose certificates a private CA signed.
   * @default - the brokers' certificates are publicly trusted
   */
  readonly rootCaCertificate?: secretsmanager.ISecret;
  /**
   * VPC the brokers are reachable in (the mapping creates network interfaces there).
   * @default - brokers are reachable over the internet
   */
  readonly vpc?: ec2.IVpc;
  /**
   * Subnets for the mapping's network interfaces; required with `vpc`.
   * @default - none
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /**
   * Security group for the mapping's network interfaces; required with `vpc`.
   * @default - none
   */
  readonly securityGroup?: ec2.ISecurityGroup;
}

/** Where records come from. */
export type KafkaSource = MskSource | SelfManagedKafkaSource;

/** How records become rows: plain appends, a Debezium change envelope, or upserts by key. */
export type IngestMode = 'append' | 'debezium' | 'upsert';

/** What happens to records whose schema the table cannot take as it is. */
export type SchemaPolicy = 'evolve' | 'block' | 'dlq';

/** One topic → table route; rendered into the routes file the ingest function reads (`FLOE_TABLES_FILE`). */
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
  readonly format?: { readonly [key: string]: unknown };
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
  readonly mapping?: { readonly [key: string]: unknown };
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
   * Table that receives this route's dead-lettered records: a name in the route's namespace, or
   * `namespace.name`. floe creates it at the first dead letter.
   * @default - `<table>__dlq` in the route's namespace
   */
  readonly dlqTable?: string;
}

/** Amazon S3 Tables as the catalog: a table bucket that the construct creates or that exists already. */
export interface S3TablesCatalog {
  readonly kind: 's3tables';
  /**
   * ARN of an existing table bucket.
   * @default - the construct creates a table bucket
   */
  readonly tableBucketArn?: string;
  /**
   * Name of the table bucket to create (ignored with `tableBucketArn`).
   * @default - a name derived from the construct path
   */
  readonly tableBucketName?: string;
  /**
   * Create the routes' namespaces with CloudFormation. Namespaces that already exist make the deployment fail.
   * @default - true when the construct creates the table bucket, false otherwise (floe creates them)
   */
  readonly createNamespaces?: boolean;
  /**
   * Create the routes' tables (those with a `schema`) with CloudFormation instead of at the first write,
   * exactly as floe would (the `_kafka` lineage column included, the same partition spec), with S3 Tables'
   * own compaction and snapshot retention configured from `maintenance`. These tables are always retained
   * on delete. Changing a created table's `schema` or `partitionBy` later makes CloudFormation try to
   * replace the table, which fails (the name is taken): evolve schemas through floe, not through the stack.
   * @default false (floe creates each table, and its dead-letter table, at its first write)
   */
  readonly createTables?: boolean;
}

/** A self-hosted Iceberg REST catalog. */
export interface RestCatalog {
  readonly kind: 'rest';
  /** Catalog base URI, e.g. `https://catalog.example.com/api/catalog`. */
  readonly uri: string;
  /** Warehouse identifier sent to the catalog. */
  readonly warehouse: string;
  /**
   * Secret holding `{"credential":"id:secret"}` (OAuth2 client credentials) or `{"token":"..."}`.
   * @default - no OAuth2
   */
  readonly credentialSecret?: secretsmanager.ISecret;
  /**
   * Sign catalog requests with SigV4 under this service name (e.g. `s3tables`, `glue`).
   * @default - requests are not signed
   */
  readonly sigV4SigningName?: string;
  /**
   * Bucket holding the warehouse's files, when the catalog does not vend credentials.
   * @default - the catalog vends credentials, or `policyStatements` grant storage access
   */
  readonly warehouseBucket?: s3.IBucket;
  /**
   * Extra statements every catalog-using function gets, e.g. the target service's actions with SigV4.
   * @default - none
   */
  readonly policyStatements?: readonly iam.PolicyStatement[];
}

/** The catalog that owns the tables' metadata pointers. */
export type CatalogConfig = S3TablesCatalog | RestCatalog;

/** Scheduled table maintenance (Step Functions). */
export interface MaintenanceOptions {
  /**
   * Whether to create the state machine, its task functions and the schedules.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * When each table's maintenance runs (EventBridge Scheduler).
   * @default ScheduleExpression.rate(Duration.hours(6))
   */
  readonly schedule?: scheduler.ScheduleExpression;
  /**
   * Snapshots older than this are expired (the newest `minSnapshotsToKeep` always stay).
   * @default Duration.days(5) (Iceberg's `history.expire.max-snapshot-age-ms`)
   */
  readonly snapshotRetention?: Duration;
  /**
   * Snapshots always kept.
   * @default 1
   */
  readonly minSnapshotsToKeep?: number;
  /**
   * Unreferenced files younger than this are never removed (they may belong to a commit in flight).
   * @default Duration.days(3)
   */
  readonly orphanFileAge?: Duration;
  /**
   * Compaction groups rewritten in parallel.
   * @default 4
   */
  readonly maxConcurrency?: number;
  /**
   * Memory of the maintenance functions (compaction holds a group's rows).
   * @default 3008
   */
  readonly memorySize?: number;
  /**
   * Timeout of the maintenance functions.
   * @default Duration.minutes(15)
   */
  readonly timeout?: Duration;
  /**
   * Longest one maintenance execution may run.
   * @default Duration.hours(2)
   */
  readonly executionTimeout?: Duration;
}

/** Alarm thresholds and where alarms notify. */
export interface AlarmOptions {
  /**
   * Topic every alarm notifies (alarm and OK).
   * @default - alarms have no actions
   */
  readonly topic?: sns.ITopic;
  /**
   * Records behind the topic head (ESM `OffsetLag`, maximum over 5 minutes, 3 periods in a row).
   * @default 100000
   */
  readonly offsetLagThreshold?: number;
  /**
   * Alarm when no batch has committed for this long (no `Commits` datapoint counts as breaching), so an
   * idle topic alarms too: raise it for topics that are quiet for long. Between 5 minutes and one day.
   * @default Duration.hours(1)
   */
  readonly maxCommitAge?: Duration;
  /**
   * Alarm (`partitionBlocked`) when records have waited (`OffsetLag` > 0) behind a failing ingest
   * function (`Errors` > 0) in every 5-minute period for this long. Between 5 minutes and one day.
   * @default Duration.minutes(30)
   */
  readonly blockedPartitionAfter?: Duration;
  /**
   * Commit conflicts (retried, but a sign of contention) per 15 minutes.
   * @default 10
   */
  readonly commitConflictThreshold?: number;
}

/** Props of `KafkaToIceberg`. */
export interface KafkaToIcebergProps {
  /** Where records come from. */
  readonly source: KafkaSource;
  /** Topic → table routes (shipped as `floe-routes.json` in the ingest function's code). At least one. */
  readonly tables: readonly TableRoute[];
  /** The catalog that owns the tables. */
  readonly catalog: CatalogConfig;
  /**
   * Scheduled maintenance.
   * @default - enabled with the defaults of `MaintenanceOptions`
   */
  readonly maintenance?: MaintenanceOptions;
  /**
   * Memory of the ingest function. A 6 MB batch needs ~160 MiB of RSS; given 1024 MB, it peaks at ~210
   * MiB, because the handler lets V8's heap grow as on a large machine (functions/handlers/heap-growth.ts:
   * ~35 % less CPU per batch). For batches near the ESM's 6 MB, 1536 takes ~7 % less CPU than 1024.
   * Small batches mostly wait on S3, billed by memory (README, Performance).
   * @default 1024
   */
  readonly memorySize?: number;
  /**
   * Timeout of the ingest function.
   * @default Duration.minutes(5)
   */
  readonly timeout?: Duration;
  /**
   * Reserved concurrency of the ingest function.
   * @default - unreserved
   */
  readonly reservedConcurrency?: number;
  /**
   * Lease of the DynamoDB commit lock (`FLOE_LOCK_LEASE_MS`).
   * @default Duration.seconds(30)
   */
  readonly lockLease?: Duration;
  /**
   * Where the mappings send batches they give up on. The default bucket receives the whole batch
   * (SQS and SNS destinations receive only metadata for Kafka).
   * @default - an encrypted S3 bucket created by the construct
   */
  readonly onFailure?: lambda.IEventSourceDlq;
  /**
   * Powertools service name (`POWERTOOLS_SERVICE_NAME`); the alarms filter floe's metrics on it, so give
   * each pipeline in an account and region its own.
   * @default 'floe'
   */
  readonly serviceName?: string;
  /**
   * CloudWatch namespace of floe's metrics (`POWERTOOLS_METRICS_NAMESPACE`).
   * @default 'floe'
   */
  readonly metricsNamespace?: string;
  /**
   * Powertools log level (`POWERTOOLS_LOG_LEVEL`).
   * @default 'INFO'
   */
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /**
   * Retention of the functions' and the state machine's log groups.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Removal policy of the stateful resources (table bucket, namespaces, lock table, failure bucket).
   * Created tables are always retained.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Alarm thresholds and actions.
   * @default - the defaults of `AlarmOptions`, no actions
   */
  readonly alarms?: AlarmOptions;
}
