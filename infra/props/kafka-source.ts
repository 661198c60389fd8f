/**
 * Where records come from: the Kafka cluster (Amazon MSK with IAM, or self-managed with SASL/SCRAM or
 * mTLS) and the settings of the event source mappings that read it (one per topic).
 */
import type { Duration } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';

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
