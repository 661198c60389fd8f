/**
 * `KafkaToIceberg`: Kafka topics → Apache Iceberg tables with no servers to run. One construct wires the
 * ingest function to the topics (event source mappings), the catalog (S3 Tables or REST), the DynamoDB
 * commit lock, scheduled maintenance (Step Functions + EventBridge Scheduler), alarms and a dashboard.
 *
 *     new KafkaToIceberg(this, 'Orders', {
 *       source: { kind: 'msk', clusterArn },
 *       tables: [{ topics: ['orders'], table: 'sales.orders', mode: 'debezium', identifierColumns: ['order_id'] }],
 *       catalog: { kind: 's3tables' },
 *     });
 */
import { Duration, RemovalPolicy, Token } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as scheduler from 'aws-cdk-lib/aws-scheduler';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { type FloeAlarms, FloeMonitoring } from './alarms.js';
import { formatIdentifier, parseIdentifier } from '../functions/core/catalog/catalog.js';
import { offsetIdentityAlarm } from './identity-alarm.js';
import { FloeCatalog } from './catalog.js';
import { createIngest } from './ingest.js';
import { FloeMaintenance, resolveMaintenance } from './maintenance.js';
import type { MaintenanceTaskKey } from './maintenance-definition.js';
import type { KafkaToIcebergProps } from './props.js';
import { ROUTES_FILE_NAME, stageRoutesFile } from './routes-file.js';
import type { FloeTableAlarms } from './table-alarms.js';
import { checkRoutes, planRegistrySecrets, type RenderedRoute, renderRoutes } from './table-routes.js';

/** Lambda refuses a function whose environment variables take more than 4 KB in total. */
const LAMBDA_ENVIRONMENT_LIMIT = 4096;

/** Room assumed for a value only known at deploy time (an ARN or a generated name). */
const TOKEN_ALLOWANCE = 128;

/**
 * Refuses an environment Lambda would reject. The routes are in a file, so what is left grows only with
 * the number of distinct registry secrets; this guards against what a future variable might add.
 * @throws Error when the variables may exceed Lambda's 4 KB
 */
export function checkEnvironmentSize(environment: Record<string, string>): void {
  const size = Object.entries(environment).reduce(
    (sum, [key, value]) =>
      sum + key.length + (Token.isUnresolved(value) ? TOKEN_ALLOWANCE : Buffer.byteLength(value)),
    0,
  );
  if (size > LAMBDA_ENVIRONMENT_LIMIT) {
    throw new Error(
      `the functions' environment would take ~${size} bytes, over Lambda's 4 KB: ` +
        Object.keys(environment).join(', '),
    );
  }
}

/** Kafka → Iceberg ingestion with its lock, maintenance, alarms and dashboard. */
export class KafkaToIceberg extends Construct {
  /** The ingest function (nodejs22.x, arm64). */
  public readonly ingestFunction: nodejs.NodejsFunction;
  /** One Kafka event source mapping per topic. */
  public readonly eventSourceMappings: readonly lambda.EventSourceMapping[];
  /** Receives the batches the mappings give up on; undefined when `onFailure` was given. */
  public readonly failureBucket?: s3.Bucket;
  /** The DynamoDB commit lock (on-demand, PITR, TTL on `expiresAt`, key `pk`). */
  public readonly lockTable: dynamodb.Table;
  /** The catalog resources (S3 Tables bucket, namespaces, tables when created here). */
  public readonly catalog: FloeCatalog;
  /** The maintenance state machine; undefined when maintenance is disabled. */
  public readonly maintenanceStateMachine?: sfn.StateMachine;
  /** The maintenance task functions by task; undefined when maintenance is disabled. */
  public readonly maintenanceFunctions?: Readonly<Record<MaintenanceTaskKey, nodejs.NodejsFunction>>;
  /** One maintenance schedule per table (its input names the table); empty when maintenance is disabled. */
  public readonly schedules: readonly scheduler.Schedule[];
  /** The pipeline's CloudWatch dashboard. */
  public readonly dashboard: cloudwatch.Dashboard;
  /** The pipeline's alarms. */
  public readonly alarms: FloeAlarms;
  /** The per-table alarms (stale table, committed record age), keyed by table: see table-alarms.ts. */
  public readonly tableAlarms: FloeTableAlarms;
  /** A topic's history changed under a table (`OffsetIdentityMismatches`): see identity-alarm.ts. */
  public readonly offsetIdentityAlarm: cloudwatch.Alarm;
  /**
   * The environment every floe function gets (the handlers' configuration contract: catalog, lock,
   * Powertools). The ingest function adds `FLOE_TABLES_FILE` and its registry secrets' ARNs; the
   * maintenance functions add `FLOE_TABLES=[]` (they work from the execution's input, not the routes).
   */
  public readonly environment: Readonly<Record<string, string>>;
  /** The ingest function's environment: `environment` plus the routes file and registry secret ARNs. */
  public readonly ingestEnvironment: Readonly<Record<string, string>>;
  /** The routes as the ingest function reads them from `floe-routes.json` in its code. */
  public readonly renderedRoutes: readonly RenderedRoute[];

  constructor(scope: Construct, id: string, props: KafkaToIcebergProps) {
    super(scope, id);
    checkRoutes(props.tables);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const maintenanceEnabled = props.maintenance?.enabled ?? true;
    const maintenance = resolveMaintenance(props.maintenance);
    const serviceName = props.serviceName ?? 'floe';
    const metricsNamespace = props.metricsNamespace ?? 'floe';

    this.catalog = new FloeCatalog(this, 'Catalog', {
      catalog: props.catalog,
      routes: props.tables,
      maintenance,
      removalPolicy,
    });
    this.lockTable = new dynamodb.Table(this, 'LockTable', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: 'expiresAt',
      removalPolicy,
    });
    this.environment = {
      ...this.catalog.resources.environment,
      FLOE_LOCK_TABLE: this.lockTable.tableName,
      FLOE_LOCK_LEASE_MS: String((props.lockLease ?? Duration.seconds(30)).toMilliseconds()),
      POWERTOOLS_SERVICE_NAME: serviceName,
      POWERTOOLS_METRICS_NAMESPACE: metricsNamespace,
      POWERTOOLS_LOG_LEVEL: props.logLevel ?? 'INFO',
    };
    const registrySecrets = planRegistrySecrets(props.tables);
    this.renderedRoutes = renderRoutes(props.tables, registrySecrets.variableOf);
    this.ingestEnvironment = {
      ...this.environment,
      FLOE_TABLES_FILE: ROUTES_FILE_NAME,
      ...registrySecrets.environment,
    };
    const maintenanceEnvironment = { ...this.environment, FLOE_TABLES: '[]' };
    checkEnvironmentSize(this.ingestEnvironment);
    checkEnvironmentSize(maintenanceEnvironment);

    const ingest = createIngest(this, {
      props,
      environment: { ...this.ingestEnvironment },
      assetFiles: { [ROUTES_FILE_NAME]: stageRoutesFile(JSON.stringify(this.renderedRoutes)) },
      registrySecrets: registrySecrets.secrets,
      catalog: this.catalog.resources,
      lockTable: this.lockTable,
      removalPolicy,
      logRetention,
    });
    this.ingestFunction = ingest.fn;
    this.eventSourceMappings = ingest.mappings;
    if (ingest.failureBucket) this.failureBucket = ingest.failureBucket;

    if (maintenanceEnabled) {
      const flow = new FloeMaintenance(this, 'Maintenance', {
        options: maintenance,
        routes: props.tables,
        environment: maintenanceEnvironment,
        catalog: this.catalog.resources,
        lockTable: this.lockTable,
        removalPolicy,
        logRetention,
      });
      this.maintenanceStateMachine = flow.stateMachine;
      this.maintenanceFunctions = flow.functions;
      this.schedules = flow.schedules;
    } else {
      this.schedules = [];
    }

    const monitoring = new FloeMonitoring(this, 'Monitoring', {
      ingestFunction: this.ingestFunction,
      ...(this.maintenanceStateMachine ? { stateMachine: this.maintenanceStateMachine } : {}),
      serviceName,
      metricsNamespace,
      // named as the ingest handler names them in its per-table metrics (one alarm per table)
      tables: [...new Set(props.tables.map((t) => formatIdentifier(parseIdentifier(t.table))))],
      options: props.alarms ?? {},
    });
    this.alarms = monitoring.alarms;
    this.tableAlarms = monitoring.tableAlarms;
    this.dashboard = monitoring.dashboard;
    this.offsetIdentityAlarm = offsetIdentityAlarm(monitoring, {
      serviceName,
      metricsNamespace,
      topic: props.alarms?.topic,
    });
  }
}
