/**
 * Example stack: an existing MSK cluster's `orders` topic (Debezium change events) → the S3 Tables table
 * `sales.orders`, merged by `order_id`, with scheduled maintenance, a provisioned-mode mapping with bounded
 * retries and an S3 on-failure destination.
 *
 *     npx cdk deploy -c mskClusterArn=arn:aws:kafka:eu-west-1:111122223333:cluster/prod/abcd-1234
 *
 * Settings come from CDK context (`-c key=value`) or the environment (FLOE_*), context first:
 * `mskClusterArn` / FLOE_MSK_CLUSTER_ARN, `topic` / FLOE_TOPIC, `table` / FLOE_TABLE_NAME. Without a
 * cluster ARN the app still synthesizes against a placeholder, so `cdk synth` works anywhere; deploying
 * that placeholder fails. infra/app.ts runs it (cdk.json points there). It imports the construct from
 * ./index.ts, which the package exports as `floe/cdk`: a user's app writes the same with that import.
 */
import { App, CfnOutput, Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Construct } from 'constructs';
// the public entry point only (`floe/cdk` in a user's app), so the example shows what a user can write
import { KafkaToIceberg, type Schema } from './index.js';

/** An ARN of the right shape that points at nothing; deploying it fails loudly. */
export const PLACEHOLDER_CLUSTER_ARN =
  'arn:aws:kafka:us-east-1:111122223333:cluster/placeholder/00000000-0000-0000-0000-000000000000-1';

/** The example's table: the Debezium `after` image of an order. */
export const ORDERS_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'order_id', required: true, type: 'long' },
    { id: 2, name: 'customer_id', required: false, type: 'long' },
    { id: 3, name: 'status', required: false, type: 'string' },
    { id: 4, name: 'amount', required: false, type: 'decimal(12, 2)' },
    { id: 5, name: 'order_ts', required: false, type: 'timestamptz' },
  ],
};

export interface ExampleSettings {
  readonly mskClusterArn: string;
  readonly topic: string;
  readonly table: string;
}

/** Context first, then FLOE_* environment variables, then the example's defaults. */
export function readSettings(app: App): ExampleSettings {
  const setting = (contextKey: string, envKey: string, fallback: string): string => {
    const fromContext: unknown = app.node.tryGetContext(contextKey);
    if (typeof fromContext === 'string' && fromContext.length > 0) return fromContext;
    return process.env[envKey] || fallback;
  };
  return {
    mskClusterArn: setting('mskClusterArn', 'FLOE_MSK_CLUSTER_ARN', PLACEHOLDER_CLUSTER_ARN),
    topic: setting('topic', 'FLOE_TOPIC', 'orders'),
    table: setting('table', 'FLOE_TABLE_NAME', 'sales.orders'),
  };
}

/** The example stack: one MSK topic of Debezium events into one S3 Tables table, with maintenance. */
export class FloeExampleStack extends Stack {
  readonly pipeline: KafkaToIceberg;

  constructor(scope: Construct, id: string, settings: ExampleSettings, props?: StackProps) {
    super(scope, id, props);
    this.pipeline = new KafkaToIceberg(this, 'Orders', {
      source: {
        kind: 'msk',
        clusterArn: settings.mskClusterArn,
        startingPosition: 'TRIM_HORIZON',
        // Provisioned mode, because only it bounds a failing batch: an on-demand mapping retries it until
        // its records expire, blocking the partition. One warm poller (5 MB/s) is billed around the clock;
        // infra/README.md says what each of these costs.
        provisionedPollers: { minimum: 1, maximum: 2 },
        // ~10 retries ride out a catalog or S3 hiccup; after that the batch goes to the on-failure
        // destination (the construct's FailedBatches bucket: the whole invocation, records included)
        // and the partition moves on. Redrive it with `floe ingest` once the cause is fixed.
        retryAttempts: 10,
        // Records older than a day are not sent (they go to the destination too): a backlog after a long
        // outage is then redriven from S3 rather than blocking live data.
        maxRecordAge: Duration.days(1),
        // Halve a failing batch so one bad record sends ~1 record to the destination, not 10,000.
        bisectBatchOnError: true,
      },
      tables: [
        {
          topics: [settings.topic],
          table: settings.table,
          schema: ORDERS_SCHEMA,
          partitionBy: 'day(order_ts)',
          mode: 'debezium',
          identifierColumns: ['order_id'],
        },
      ],
      catalog: { kind: 's3tables' },
      maintenance: { schedule: scheduler.ScheduleExpression.rate(Duration.hours(6)) },
    });
    // what the README's commands need after a deployment
    new CfnOutput(this, 'MaintenanceStateMachineArn', {
      value: this.pipeline.maintenanceStateMachine!.stateMachineArn,
    });
    new CfnOutput(this, 'TableBucketArn', { value: this.pipeline.environment.FLOE_TABLE_BUCKET_ARN! });
    new CfnOutput(this, 'FailedBatchesBucket', { value: this.pipeline.failureBucket!.bucketName });
    new CfnOutput(this, 'DashboardName', { value: this.pipeline.dashboard.dashboardName });
  }
}

/** Builds the example app (exported so tests synthesize it in-process). */
export function buildExampleApp(app = new App()): { app: App; stack: FloeExampleStack } {
  const stack = new FloeExampleStack(app, 'FloeExample', readSettings(app), {
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
  return { app, stack };
}

/**
 * Registers cdk-nag's AwsSolutions pack as a synthesis validation (the v3 API; `Aspects.of(app).add`
 * is the v2 one and crashes with v3): `app.synth()` then throws on any unacknowledged finding.
 */
export function addNagChecks(app: App): App {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return app;
}
