/**
 * The ingest side: one function that turns Kafka batches into Iceberg snapshots, one event source mapping
 * per topic, and the on-failure destination for batches the mapping gives up on.
 *
 * The mappings are built with `lambda.EventSourceMapping` rather than `ManagedKafkaEventSource`, because
 * the latter attaches the AWSLambdaMSKExecutionRole managed policy (kafka and ec2 actions on `*`); here the
 * role gets the same abilities scoped to the cluster, its topics and the consumer groups.
 */
import path from 'node:path';
import { Duration, Names, type RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { CatalogResources } from './catalog.js';
import { createFloeFunction, HANDLERS_DIR } from './functions.js';
import { acknowledgeRule, acknowledgeWildcardResource } from './nag.js';
import {
  grantCatalog,
  grantEsmNetworking,
  grantGlueSchemaRead,
  grantLock,
  grantMskRead,
  grantMskWrite,
} from './permissions.js';
import type { KafkaSource, KafkaToIcebergProps, SelfManagedKafkaSource } from './props.js';
import { routeTopics } from './table-routes.js';

/**
 * An S3 on-failure destination that grants only what Lambda uses to write a failed batch
 * (`s3:PutObject` on the bucket's objects, `s3:ListBucket` on the bucket), where CDK's
 * `S3OnFailureDestination` grants full read/write.
 */
export class S3FailureDestination implements lambda.IEventSourceDlq {
  constructor(private readonly bucket: s3.IBucket) {}

  bind(_target: lambda.IEventSourceMapping, targetHandler: lambda.IFunction): lambda.DlqDestinationConfig {
    const objects = this.bucket.arnForObjects('*');
    targetHandler.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [objects] }),
    );
    if (targetHandler.role) {
      acknowledgeWildcardResource(
        targetHandler.role,
        objects,
        'Lambda names the failed-batch objects it writes',
      );
    }
    targetHandler.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn] }),
    );
    return { destination: this.bucket.bucketArn };
  }
}

export interface IngestOptions {
  readonly props: KafkaToIcebergProps;
  readonly environment: Record<string, string>;
  /** Files shipped next to the bundle (the routes file). */
  readonly assetFiles: Readonly<Record<string, string>>;
  /** Secrets the routes name (schema registry credentials): the ingest role may read them. */
  readonly registrySecrets: readonly secretsmanager.ISecret[];
  readonly catalog: CatalogResources;
  readonly lockTable: dynamodb.ITable;
  readonly removalPolicy: RemovalPolicy;
  readonly logRetention: logs.RetentionDays;
}

export interface IngestResources {
  readonly fn: nodejs.NodejsFunction;
  readonly mappings: lambda.EventSourceMapping[];
  readonly failureBucket?: s3.Bucket;
}

/**
 * The topics to map and the consumer group of each (unique per mapping, as Lambda requires).
 * @throws Error when a route reads a topic the source does not consume
 */
export function planMappings(
  scope: Construct,
  props: KafkaToIcebergProps,
): { topic: string; group: string }[] {
  const routed = routeTopics(props.tables);
  const topics = props.source.topics ? [...props.source.topics] : routed;
  for (const topic of routed) {
    if (!topics.includes(topic))
      throw new Error(`topic '${topic}' is routed to a table but not consumed by the source`);
  }
  const base = props.source.consumerGroupId ?? `floe-${Names.uniqueId(scope)}`;
  return topics.map((topic) => ({ topic, group: topics.length === 1 ? base : `${base}-${topic}` }));
}

/** The topics aggregate routes emit to with MSK IAM auth. */
function mskEmitTopics(props: KafkaToIcebergProps): string[] {
  const topics = props.tables.flatMap((route) =>
    route.aggregate?.emit?.auth === 'aws-msk-iam' ? [route.aggregate.emit.topic] : [],
  );
  return [...new Set(topics)];
}

/** The Glue registries routes decode from themselves (undefined: the route names none). */
function glueRegistries(props: KafkaToIcebergProps): (string | undefined)[] {
  return props.tables.flatMap((route) => {
    const format = route.format as
      | { value?: unknown; key?: unknown; glue?: { registryName?: unknown } }
      | undefined;
    const usesGlue =
      format !== undefined &&
      (format.glue !== undefined || [format.value, format.key].some((f) => f === 'glue' || f === 'auto'));
    if (!usesGlue) return [];
    const name = format.glue?.registryName;
    return [typeof name === 'string' ? name : undefined];
  });
}

function checkSource(source: KafkaSource): void {
  const provisionedOnly = { schemaRegistry: source.schemaRegistry, retryAttempts: source.retryAttempts };
  const needsProvisioned =
    Object.entries(provisionedOnly).find(([, v]) => v !== undefined)?.[0] ??
    (source.maxRecordAge ? 'maxRecordAge' : source.bisectBatchOnError ? 'bisectBatchOnError' : undefined);
  if (needsProvisioned && !source.provisionedPollers) {
    throw new Error(
      `source.${needsProvisioned} needs provisionedPollers (Lambda offers it in provisioned mode only)`,
    );
  }
  if (source.kind === 'self-managed' && source.vpc && (!source.vpcSubnets || !source.securityGroup)) {
    throw new Error('a self-managed source in a VPC needs vpcSubnets and securityGroup');
  }
}

function selfManagedAccess(source: SelfManagedKafkaSource): lambda.SourceAccessConfiguration[] {
  const authType = {
    SASL_SCRAM_512: lambda.SourceAccessConfigurationType.SASL_SCRAM_512_AUTH,
    SASL_SCRAM_256: lambda.SourceAccessConfigurationType.SASL_SCRAM_256_AUTH,
    MTLS: lambda.SourceAccessConfigurationType.CLIENT_CERTIFICATE_TLS_AUTH,
  }[source.authentication.method];
  const access = [{ type: authType, uri: source.authentication.secret.secretArn }];
  if (source.rootCaCertificate) {
    access.push({
      type: lambda.SourceAccessConfigurationType.SERVER_ROOT_CA_CERTIFICATE,
      uri: source.rootCaCertificate.secretArn,
    });
  }
  if (source.vpc && source.vpcSubnets && source.securityGroup) {
    for (const subnetId of source.vpc.selectSubnets(source.vpcSubnets).subnetIds) {
      access.push({ type: lambda.SourceAccessConfigurationType.VPC_SUBNET, uri: subnetId });
    }
    access.push({
      type: lambda.SourceAccessConfigurationType.VPC_SECURITY_GROUP,
      uri: source.securityGroup.securityGroupId,
    });
  }
  return access;
}

function createFailureBucket(scope: Construct, removalPolicy: RemovalPolicy): s3.Bucket {
  const bucket = new s3.Bucket(scope, 'FailedBatches', {
    encryption: s3.BucketEncryption.S3_MANAGED,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    versioned: false,
    removalPolicy,
  });
  acknowledgeRule(
    bucket,
    'AwsSolutions-S1',
    'only the event source mapping writes here (one object per failed batch); the function role is the sole writer and CloudTrail records its calls',
  );
  return bucket;
}

/** The ingest function, its mappings (one per topic) and the on-failure destination. */
export function createIngest(scope: Construct, options: IngestOptions): IngestResources {
  const { props } = options;
  const { source } = props;
  checkSource(source);
  const mappings = planMappings(scope, props);
  const fn = createFloeFunction(scope, 'Ingest', {
    entry: path.join(HANDLERS_DIR, 'ingest.ts'),
    handler: 'handler',
    description: 'Kafka batches to Iceberg snapshots',
    memorySize: props.memorySize ?? 1024,
    timeout: props.timeout ?? Duration.minutes(5),
    environment: options.environment,
    assetFiles: options.assetFiles,
    logRetention: options.logRetention,
    removalPolicy: options.removalPolicy,
    ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrency: props.reservedConcurrency }),
  });
  const role = fn.role!;
  grantCatalog(role, options.catalog, { writeFiles: true, commit: true, create: true });
  grantLock(role, options.lockTable);
  for (const secret of options.registrySecrets) secret.grantRead(role);
  grantGlueSchemaRead(role, glueRegistries(props));
  if (source.kind === 'msk') {
    grantMskRead(
      role,
      source.clusterArn,
      mappings.map((m) => m.topic),
      mappings.map((m) => m.group),
    );
    grantEsmNetworking(role);
    const emitted = mskEmitTopics(props);
    if (emitted.length > 0) grantMskWrite(role, source.clusterArn, emitted);
  } else {
    if (mskEmitTopics(props).length > 0) {
      throw new Error(
        "an aggregate route emits with auth 'aws-msk-iam', but the source is not an MSK cluster: floe grants IAM write on the source cluster's topics only",
      );
    }
    source.authentication.secret.grantRead(role);
    source.rootCaCertificate?.grantRead(role);
    if (source.vpc) grantEsmNetworking(role);
  }
  const failureBucket = props.onFailure ? undefined : createFailureBucket(scope, options.removalPolicy);
  const onFailure = props.onFailure ?? new S3FailureDestination(failureBucket!);
  const poller = source.provisionedPollers;
  const built = mappings.map(
    ({ topic, group }) =>
      new lambda.EventSourceMapping(scope, `Mapping-${topic}`, {
        target: fn,
        kafkaTopic: topic,
        kafkaConsumerGroupId: group,
        ...(source.kind === 'msk'
          ? { eventSourceArn: source.clusterArn }
          : {
              kafkaBootstrapServers: [...source.bootstrapServers],
              sourceAccessConfigurations: selfManagedAccess(source),
            }),
        startingPosition: lambda.StartingPosition[source.startingPosition ?? 'TRIM_HORIZON'],
        ...(source.startingPositionTimestamp === undefined
          ? {}
          : { startingPositionTimestamp: source.startingPositionTimestamp }),
        batchSize: source.batchSize ?? 10_000,
        maxBatchingWindow: source.maxBatchingWindow ?? Duration.seconds(60),
        enabled: source.enabled ?? true,
        onFailure,
        supportS3OnFailureDestination: true,
        ...(poller
          ? {
              provisionedPollerConfig: {
                ...(poller.minimum === undefined ? {} : { minimumPollers: poller.minimum }),
                ...(poller.maximum === undefined ? {} : { maximumPollers: poller.maximum }),
                ...(poller.groupName === undefined ? {} : { pollerGroupName: poller.groupName }),
              },
            }
          : {}),
        ...(source.schemaRegistry ? { schemaRegistryConfig: source.schemaRegistry } : {}),
        ...(source.retryAttempts === undefined ? {} : { retryAttempts: source.retryAttempts }),
        ...(source.maxRecordAge ? { maxRecordAge: source.maxRecordAge } : {}),
        ...(source.bisectBatchOnError ? { bisectBatchOnError: true } : {}),
      }),
  );
  return { fn, mappings: built, ...(failureBucket ? { failureBucket } : {}) };
}
