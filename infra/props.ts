/**
 * The props of the `KafkaToIceberg` construct: where records come from (Kafka, ./props/kafka-source.ts),
 * where they go (tables in a catalog, ./props/table-route.ts and ./props/catalog.ts), how the tables are
 * kept healthy (./props/maintenance.ts) and how the pipeline is watched (./props/alarms.ts). Everything is
 * readonly and carries its default, as aws-solutions-constructs do. Every type is importable from here.
 */
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { AlarmOptions } from './props/alarms.js';
import type { CatalogConfig } from './props/catalog.js';
import type { KafkaSource } from './props/kafka-source.js';
import type { MaintenanceOptions } from './props/maintenance.js';
import type { TableRoute } from './props/table-route.js';

export type { AlarmOptions, RecordAgeAlarmOptions, StaleTableAlarmOptions } from './props/alarms.js';
export type { CatalogConfig, RestCatalog, S3TablesCatalog } from './props/catalog.js';
export type {
  KafkaSource,
  KafkaSourceBase,
  MskSource,
  ProvisionedPollers,
  SelfManagedKafkaAuthentication,
  SelfManagedKafkaSource,
  StartingPosition,
} from './props/kafka-source.js';
export type { MaintenanceOptions } from './props/maintenance.js';
export type { AggregateRouteProps, IngestMode, SchemaPolicy, TableRoute } from './props/table-route.js';

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
