/**
 * Stacks the infra tests synthesize. Bundling is skipped (`aws:cdk:bundling-stacks: []`): these tests
 * look at the template; bundling.test.ts and synth-cli.test.ts bundle for real.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import {
  buildExampleApp,
  type FloeExampleStack,
  PLACEHOLDER_CLUSTER_ARN,
} from '../../../infra/example-stack.js';
import { KafkaToIceberg } from '../../../infra/kafka-to-iceberg.js';
import type { KafkaToIcebergProps } from '../../../infra/props.js';

export const CLUSTER_ARN =
  'arn:aws:kafka:eu-west-1:111122223333:cluster/sales/5a6b7c8d-1111-2222-3333-444455556666-2';
export const ENV = { account: '111122223333', region: 'eu-west-1' };

/** A test app that does not bundle. */
export function newApp(): App {
  return new App({ context: { 'aws:cdk:bundling-stacks': [] } });
}

/** Variables the example app reads; cleared so the template does not depend on the shell. */
const EXAMPLE_VARIABLES = [
  'FLOE_MSK_CLUSTER_ARN',
  'FLOE_TOPIC',
  'FLOE_TABLE_NAME',
  'CDK_DEFAULT_ACCOUNT',
  'CDK_DEFAULT_REGION',
];

/** The example app's stack (infra/example-stack.ts), as `cdk synth` builds it without settings. */
export function synthExample(): { stack: FloeExampleStack; template: Template } {
  const saved = EXAMPLE_VARIABLES.map((name) => [name, process.env[name]] as const);
  for (const name of EXAMPLE_VARIABLES) delete process.env[name];
  try {
    const { stack } = buildExampleApp(newApp());
    return { stack, template: Template.fromStack(stack) };
  } finally {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
  }
}

export { PLACEHOLDER_CLUSTER_ARN };

export const ORDERS_TABLE = {
  topics: ['orders'],
  table: 'sales.orders',
  schema: {
    type: 'struct' as const,
    'schema-id': 0,
    fields: [
      { id: 1, name: 'order_id', required: true, type: 'long' as const },
      { id: 2, name: 'order_ts', required: false, type: 'timestamptz' as const },
      { id: 3, name: 'region', required: false, type: 'string' as const },
    ],
  },
  partitionBy: 'day(order_ts), bucket(8, order_id)',
  mode: 'debezium' as const,
  identifierColumns: ['order_id'],
  targetFileSizeBytes: 268_435_456,
  schemaPolicy: 'dlq' as const,
};

/** Every prop set away from its default, on an MSK source with two topics and an S3 Tables catalog. */
export function fullProps(stack: Stack): KafkaToIcebergProps {
  return {
    source: {
      kind: 'msk',
      clusterArn: CLUSTER_ARN,
      consumerGroupId: 'floe-sales',
      startingPosition: 'AT_TIMESTAMP',
      startingPositionTimestamp: 1_767_225_600,
      batchSize: 500,
      maxBatchingWindow: Duration.seconds(20),
      provisionedPollers: { minimum: 2, maximum: 8, groupName: 'floe' },
      retryAttempts: 3,
      maxRecordAge: Duration.hours(1),
      bisectBatchOnError: true,
    },
    tables: [ORDERS_TABLE, { topics: ['payments'], table: 'sales.payments' }],
    catalog: { kind: 's3tables', tableBucketName: 'floe-sales', createTables: true },
    maintenance: {
      schedule: scheduler.ScheduleExpression.rate(Duration.hours(2)),
      snapshotRetention: Duration.days(2),
      minSnapshotsToKeep: 3,
      orphanFileAge: Duration.days(1),
      maxConcurrency: 8,
      memorySize: 4096,
      timeout: Duration.minutes(10),
      executionTimeout: Duration.hours(1),
    },
    memorySize: 2048,
    timeout: Duration.minutes(2),
    reservedConcurrency: 5,
    lockLease: Duration.seconds(45),
    serviceName: 'sales-pipeline',
    metricsNamespace: 'floe-test',
    logLevel: 'DEBUG',
    alarms: {
      topic: new sns.Topic(stack, 'AlarmTopic', { enforceSSL: true }),
      offsetLagThreshold: 5000,
      maxCommitAge: Duration.minutes(30),
      commitConflictThreshold: 3,
    },
  };
}

/** One `KafkaToIceberg` in its own stack, synthesized. */
export function synthPipeline(makeProps: (stack: Stack) => KafkaToIcebergProps): {
  stack: Stack;
  pipeline: KafkaToIceberg;
  template: Template;
} {
  const stack = new Stack(newApp(), 'Test', { env: ENV });
  const pipeline = new KafkaToIceberg(stack, 'Pipeline', makeProps(stack));
  return { stack, pipeline, template: Template.fromStack(stack) };
}

/** A self-managed SASL/SCRAM source in a VPC and a REST catalog with OAuth2 and a warehouse bucket. */
export function selfManagedRestProps(stack: Stack): KafkaToIcebergProps {
  const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
    vpcId: 'vpc-0123456789abcdef0',
    availabilityZones: ['eu-west-1a', 'eu-west-1b'],
    isolatedSubnetIds: ['subnet-0aaaaaaaaaaaaaaa1', 'subnet-0bbbbbbbbbbbbbbb2'],
  });
  const secret = (id: string, name: string) =>
    secretsmanager.Secret.fromSecretCompleteArn(
      stack,
      id,
      `arn:aws:secretsmanager:eu-west-1:111122223333:secret:${name}-AbCdEf`,
    );
  return {
    source: {
      kind: 'self-managed',
      bootstrapServers: ['b-1.kafka.internal:9096', 'b-2.kafka.internal:9096'],
      authentication: { method: 'SASL_SCRAM_512', secret: secret('KafkaSecret', 'kafka') },
      rootCaCertificate: secret('RootCa', 'root-ca'),
      vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'EsmSg', 'sg-0123456789abcdef0'),
    },
    tables: [{ topics: ['events'], table: 'lake.events' }],
    catalog: {
      kind: 'rest',
      uri: 'https://catalog.example.com/api/catalog',
      warehouse: 'lake',
      credentialSecret: secret('CatalogSecret', 'catalog'),
      warehouseBucket: s3.Bucket.fromBucketName(stack, 'Warehouse', 'lake-warehouse'),
    },
    maintenance: { enabled: false },
  };
}
