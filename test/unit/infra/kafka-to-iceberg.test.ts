import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseRoutes } from '../../../functions/core/routing/routes.js';
import type { KafkaToIceberg } from '../../../infra/kafka-to-iceberg.js';
import { FUNCTION_RUNTIME_ENVIRONMENT } from '../../../infra/functions.js';
import { tableLayout } from '../../../infra/table-routes.js';
import {
  CLUSTER_ARN,
  fullProps,
  ORDERS_TABLE,
  selfManagedRestProps,
  synthExample,
  synthPipeline,
} from './stacks.js';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

function resourcesOf(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

function environmentOf(template: Template): Record<string, unknown> {
  const id = template.getResourceId('AWS::Lambda::Function', {
    Properties: { Description: 'Kafka batches to Iceberg snapshots' },
  });
  return (
    resourcesOf(template, 'AWS::Lambda::Function')[id].Properties.Environment as {
      Variables: Record<string, unknown>;
    }
  ).Variables;
}

describe('KafkaToIceberg with every prop set (MSK, S3 Tables)', () => {
  let template: Template;
  let pipeline: KafkaToIceberg;

  beforeAll(() => {
    ({ template, pipeline } = synthPipeline(fullProps));
  }, 120_000);

  it('runs every function on nodejs22.x, arm64, as an ESM bundle handler', () => {
    // Prepare
    const functions = Object.values(resourcesOf(template, 'AWS::Lambda::Function'));
    // Assess: 1 ingest + 7 maintenance tasks
    expect(functions).toHaveLength(8);
    for (const fn of functions) {
      expect(fn.Properties.Runtime).toBe('nodejs22.x');
      expect(fn.Properties.Architectures).toEqual(['arm64']);
      expect(fn.Properties.Handler).toMatch(/^index\.\w+Handler$|^index\.handler$/);
    }
  });

  it('sizes the ingest function from memorySize, timeout and reservedConcurrency', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'Kafka batches to Iceberg snapshots',
      Handler: 'index.handler',
      MemorySize: 2048,
      Timeout: 120,
      ReservedConcurrentExecutions: 5,
    });
  });

  it('sets exactly the handlers’ configuration variables', () => {
    // Act
    const env = environmentOf(template);
    // Assess: the variables every floe function runs with (infra/functions.ts), then the handlers' own
    expect(env).toMatchObject(FUNCTION_RUNTIME_ENVIRONMENT);
    expect(
      Object.keys(env)
        .filter((k) => !(k in FUNCTION_RUNTIME_ENVIRONMENT))
        .sort(),
    ).toEqual(
      [
        'FLOE_CATALOG',
        'FLOE_TABLE_BUCKET_ARN',
        'FLOE_LOCK_TABLE',
        'FLOE_LOCK_LEASE_MS',
        'FLOE_TABLES_FILE',
        'POWERTOOLS_SERVICE_NAME',
        'POWERTOOLS_METRICS_NAMESPACE',
        'POWERTOOLS_LOG_LEVEL',
      ].sort(),
    );
    expect(env.FLOE_CATALOG).toBe('s3tables');
    expect(env.FLOE_TABLE_BUCKET_ARN).toEqual({
      'Fn::GetAtt': [expect.stringMatching(/TableBucket/), 'TableBucketARN'],
    });
    expect(env.FLOE_LOCK_TABLE).toEqual({ Ref: expect.stringMatching(/LockTable/) });
    expect(env.FLOE_LOCK_LEASE_MS).toBe('45000');
    expect(env.FLOE_TABLES_FILE).toBe('floe-routes.json');
    expect(env.POWERTOOLS_SERVICE_NAME).toBe('sales-pipeline');
    expect(env.POWERTOOLS_METRICS_NAMESPACE).toBe('floe-test');
    expect(env.POWERTOOLS_LOG_LEVEL).toBe('DEBUG');
  });

  it('renders the routes for the routes file with the defaults filled in', () => {
    const routes = JSON.parse(JSON.stringify(pipeline.renderedRoutes));
    const { schemaPolicy, ...orders } = ORDERS_TABLE;
    expect(routes).toEqual([
      // The construct's schemaPolicy is the handlers' schemaEvolution.
      { ...orders, schemaEvolution: schemaPolicy },
      {
        topics: ['payments'],
        table: 'sales.payments',
        mode: 'append',
        targetFileSizeBytes: 134217728,
      },
    ]);
    expect(parseRoutes(routes)[0].schemaEvolution).toBe('dlq');
  });

  it('gives the maintenance functions the shared environment and no routes, their own handlers and sizes', () => {
    const ingestEnv = environmentOf(template);
    const tasks = Object.values(resourcesOf(template, 'AWS::Lambda::Function')).filter(
      (f) => f.Properties.Handler !== 'index.handler',
    );
    expect(tasks.map((t) => t.Properties.Handler).sort()).toEqual(
      [
        'index.commitHandler',
        'index.compactHandler',
        'index.convertEqualityDeletesHandler',
        'index.expireHandler',
        'index.planHandler',
        'index.removeOrphansHandler',
        'index.rewriteManifestsHandler',
      ].sort(),
    );
    for (const task of tasks) {
      const { FLOE_TABLES_FILE: _file, ...shared } = ingestEnv;
      // maintenance works from the execution input; the routes (and their secrets) are ingest's
      expect((task.Properties.Environment as { Variables: unknown }).Variables).toEqual({
        ...shared,
        FLOE_TABLES: '[]',
      });
      expect(task.Properties.MemorySize).toBe(4096);
      expect(task.Properties.Timeout).toBe(600);
    }
  });

  it('maps each topic with its own consumer group and the source settings', () => {
    // Prepare
    const mappings = Object.values(resourcesOf(template, 'AWS::Lambda::EventSourceMapping'));
    // Assess
    expect(mappings).toHaveLength(2);
    const byTopic = Object.fromEntries(
      mappings.map((m) => [(m.Properties.Topics as string[])[0], m.Properties]),
    );
    expect(Object.keys(byTopic).sort()).toEqual(['orders', 'payments']);
    for (const topic of ['orders', 'payments']) {
      expect(byTopic[topic]).toMatchObject({
        EventSourceArn: CLUSTER_ARN,
        AmazonManagedKafkaEventSourceConfig: { ConsumerGroupId: `floe-sales-${topic}` },
        StartingPosition: 'AT_TIMESTAMP',
        StartingPositionTimestamp: 1_767_225_600,
        BatchSize: 500,
        MaximumBatchingWindowInSeconds: 20,
        ProvisionedPollerConfig: { MinimumPollers: 2, MaximumPollers: 8, PollerGroupName: 'floe' },
        MaximumRetryAttempts: 3,
        MaximumRecordAgeInSeconds: 3600,
        BisectBatchOnFunctionError: true,
        Enabled: true,
        DestinationConfig: {
          OnFailure: { Destination: { 'Fn::GetAtt': [expect.stringMatching(/FailedBatches/), 'Arn'] } },
        },
      });
      expect(byTopic[topic].FilterCriteria).toBeUndefined();
    }
  });

  it('creates the lock table on demand with PITR, TTL on expiresAt and key pk', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResource('AWS::DynamoDB::Table', {
      Properties: {
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it('creates the table bucket with orphan removal from orphanFileAge, one namespace, and the table that has a schema', () => {
    // Prepare: the layout floe itself would create the table with
    const layout = tableLayout(ORDERS_TABLE)!;
    // Assess
    template.hasResourceProperties('AWS::S3Tables::TableBucket', {
      TableBucketName: 'floe-sales',
      UnreferencedFileRemoval: { Status: 'Enabled', UnreferencedDays: 1 },
    });
    template.resourceCountIs('AWS::S3Tables::Namespace', 1);
    template.hasResourceProperties('AWS::S3Tables::Namespace', { Namespace: 'sales' });
    template.resourceCountIs('AWS::S3Tables::Table', 1);
    template.hasResource('AWS::S3Tables::Table', {
      Properties: {
        Namespace: 'sales',
        TableName: 'orders',
        OpenTableFormat: 'ICEBERG',
        IcebergMetadata: {
          IcebergSchemaV2: {
            SchemaV2FieldType: 'struct',
            SchemaId: 0,
            IdentifierFieldIds: [1],
            SchemaV2FieldList: Match.arrayWith([
              { Id: 1, Name: 'order_id', Required: true, Type: 'long' },
              { Id: 2, Name: 'order_ts', Required: false, Type: 'timestamptz' },
              { Id: 3, Name: 'region', Required: false, Type: 'string' },
              Match.objectLike({ Id: 4, Name: '_kafka', Required: false }),
            ]),
          },
          IcebergPartitionSpec: {
            SpecId: 0,
            Fields: [
              { SourceId: 2, FieldId: 1000, Name: 'order_ts_day', Transform: 'day' },
              { SourceId: 1, FieldId: 1001, Name: 'order_id_bucket', Transform: 'bucket[8]' },
            ],
          },
          TableProperties: { 'write.target-file-size-bytes': '268435456' },
        },
        Compaction: { Status: 'enabled', TargetFileSizeMB: 256 },
        SnapshotManagement: { Status: 'enabled', MaxSnapshotAgeHours: 48, MinSnapshotsToKeep: 3 },
      },
      DeletionPolicy: 'Retain',
      DependsOn: [Match.stringLikeRegexp('Namespace')],
    });
    const table = Object.values(resourcesOf(template, 'AWS::S3Tables::Table'))[0].Properties as {
      IcebergMetadata: { IcebergSchemaV2: { SchemaV2FieldList: { Id: number; Type: unknown }[] } };
    };
    const fields = table.IcebergMetadata.IcebergSchemaV2.SchemaV2FieldList;
    expect(fields.map((f) => f.Id)).toEqual(layout.schema.fields.map((f) => f.id));
    // nested types go to S3 Tables as Iceberg JSON, unchanged
    expect(fields[3].Type).toEqual(layout.schema.fields[3].type);
  });

  it('schedules maintenance per table with the table and retention as execution input', () => {
    // Prepare
    const schedules = Object.values(resourcesOf(template, 'AWS::Scheduler::Schedule'));
    // Assess
    expect(schedules).toHaveLength(2);
    const inputs = schedules.map((s) => {
      expect(s.Properties.ScheduleExpression).toBe('rate(2 hours)');
      const target = s.Properties.Target as { Arn: unknown; Input: string };
      expect(target.Arn).toEqual({ Ref: expect.stringMatching(/StateMachine/) });
      return JSON.parse(target.Input);
    });
    expect(inputs.sort((a, b) => a.table.localeCompare(b.table))).toEqual([
      {
        table: 'sales.orders',
        maxSnapshotAgeMs: 172_800_000,
        minSnapshotsToKeep: 3,
        orphanFileAgeMs: 86_400_000,
      },
      {
        table: 'sales.payments',
        maxSnapshotAgeMs: 172_800_000,
        minSnapshotsToKeep: 3,
        orphanFileAgeMs: 86_400_000,
      },
    ]);
  });

  it('runs the state machine with full logging, tracing and the execution timeout', () => {
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: true },
      DefinitionString: Match.anyValue(),
    });
    const machine = Object.values(resourcesOf(template, 'AWS::StepFunctions::StateMachine'))[0];
    const definition = JSON.stringify(machine.Properties.DefinitionString);
    expect(definition).toContain('\\"TimeoutSeconds\\":3600');
    expect(definition).toContain('\\"MaxConcurrency\\":8');
  });

  it('alarms on lag, errors, throttles, dead letters, conflicts, unknown outcomes, commit age, maintenance and offset identity', () => {
    // Prepare
    // (the per-table alarms, under Monitoring/Tables, are table-alarms.test.ts's)
    const alarms = Object.entries(resourcesOf(template, 'AWS::CloudWatch::Alarm'))
      .filter(([id]) => !id.includes('MonitoringTables'))
      .map(([, a]) => a.Properties);
    const byMetric = (name: string) => alarms.find((a) => a.MetricName === name);
    // Assess
    expect(alarms).toHaveLength(10);
    expect(byMetric('OffsetIdentityMismatches')).toMatchObject({
      Namespace: 'floe-test',
      Dimensions: [{ Name: 'service', Value: 'sales-pipeline' }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(byMetric('OffsetLag')).toMatchObject({
      Namespace: 'AWS/Lambda',
      Statistic: 'Maximum',
      Threshold: 5000,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(byMetric('Errors')).toMatchObject({ Namespace: 'AWS/Lambda', Threshold: 1 });
    expect(byMetric('Throttles')).toMatchObject({ Namespace: 'AWS/Lambda', Threshold: 1 });
    for (const name of ['DeadLetteredRecords', 'CommitConflicts', 'CommitStateUnknown', 'Commits']) {
      expect(byMetric(name)).toMatchObject({
        Namespace: 'floe-test',
        Dimensions: [{ Name: 'service', Value: 'sales-pipeline' }],
      });
    }
    expect(byMetric('CommitConflicts')).toMatchObject({ Threshold: 3, Period: 900 });
    expect(byMetric('Commits')).toMatchObject({
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      EvaluationPeriods: 6,
      DatapointsToAlarm: 6,
      TreatMissingData: 'breaching',
    });
    const maintenance = alarms.find((a) => JSON.stringify(a.Metrics ?? []).includes('ExecutionsFailed'));
    expect(maintenance).toBeDefined();
    // lag behind failing invocations in every period of blockedPartitionAfter (default 30 min)
    const blocked = alarms.find((a) => JSON.stringify(a.Metrics ?? []).includes('IF(lag > 0 AND errors > 0'));
    expect(blocked).toMatchObject({ EvaluationPeriods: 6, DatapointsToAlarm: 6, Threshold: 1 });
    expect(JSON.stringify(blocked)).toContain('"OffsetLag"');
    expect(JSON.stringify(blocked)).toContain('"Errors"');
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual([{ Ref: expect.stringMatching(/AlarmTopic/) }]);
      expect(alarm.OKActions).toEqual([{ Ref: expect.stringMatching(/AlarmTopic/) }]);
    }
  });

  it('exposes what it creates', () => {
    expect(pipeline.eventSourceMappings).toHaveLength(2);
    expect(pipeline.schedules).toHaveLength(2);
    expect(pipeline.maintenanceStateMachine).toBeDefined();
    expect(Object.keys(pipeline.maintenanceFunctions ?? {})).toHaveLength(7);
    expect(Object.keys(pipeline.alarms)).toHaveLength(9);
    expect(pipeline.failureBucket).toBeDefined();
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });
});

describe('KafkaToIceberg defaults (the example app)', () => {
  let template: Template;

  beforeAll(() => {
    ({ template } = synthExample());
  }, 120_000);

  it('uses the documented mapping defaults', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      Topics: ['orders'],
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 10000,
      MaximumBatchingWindowInSeconds: 60,
      AmazonManagedKafkaEventSourceConfig: {
        ConsumerGroupId: Match.stringLikeRegexp('^floe-FloeExampleOrders'),
      },
      // the example's provisioned-mode choices (infra/README.md says what each costs)
      ProvisionedPollerConfig: { MinimumPollers: 1, MaximumPollers: 2 },
      MaximumRetryAttempts: 10,
      MaximumRecordAgeInSeconds: 86400,
      BisectBatchOnFunctionError: true,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('FailedBatches'), 'Arn'] } },
      },
    });
  });

  it('uses the documented function and alarm defaults', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      MemorySize: 1024,
      Timeout: 300,
      ReservedConcurrentExecutions: Match.absent(),
      Environment: {
        Variables: Match.objectLike({
          FLOE_LOCK_LEASE_MS: '30000',
          POWERTOOLS_SERVICE_NAME: 'floe',
          POWERTOOLS_LOG_LEVEL: 'INFO',
        }),
      },
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'OffsetLag', Threshold: 100000 });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Commits',
      EvaluationPeriods: 12,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'CommitConflicts',
      Threshold: 10,
    });
    template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'rate(6 hours)' });
  });
});

describe('KafkaToIceberg with a self-managed source and a REST catalog', () => {
  let template: Template;
  let pipeline: KafkaToIceberg;

  beforeAll(() => {
    ({ template, pipeline } = synthPipeline(selfManagedRestProps));
  }, 120_000);

  it('leaves the mapping on demand with Lambda’s own retry settings when none are given', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      ProvisionedPollerConfig: Match.absent(),
      MaximumRetryAttempts: Match.absent(),
      MaximumRecordAgeInSeconds: Match.absent(),
      BisectBatchOnFunctionError: Match.absent(),
    });
  });

  it('maps the bootstrap servers with SASL/SCRAM, the root CA and the VPC', () => {
    const mapping = Object.values(resourcesOf(template, 'AWS::Lambda::EventSourceMapping'))[0].Properties;
    expect(mapping.SelfManagedEventSource).toEqual({
      Endpoints: { KafkaBootstrapServers: ['b-1.kafka.internal:9096', 'b-2.kafka.internal:9096'] },
    });
    expect(mapping.EventSourceArn).toBeUndefined();
    const access = mapping.SourceAccessConfigurations as { Type: string; URI: unknown }[];
    expect(access.map((a) => a.Type).sort()).toEqual(
      [
        'SASL_SCRAM_512_AUTH',
        'SERVER_ROOT_CA_CERTIFICATE',
        'VPC_SECURITY_GROUP',
        'VPC_SUBNET',
        'VPC_SUBNET',
      ].sort(),
    );
    expect(access.find((a) => a.Type === 'SASL_SCRAM_512_AUTH')?.URI).toBe(
      'arn:aws:secretsmanager:eu-west-1:111122223333:secret:kafka-AbCdEf',
    );
  });

  it('configures the REST catalog and creates no S3 Tables resources', () => {
    const env = environmentOf(template);
    expect(env).toMatchObject({
      FLOE_CATALOG: 'rest',
      FLOE_REST_URI: 'https://catalog.example.com/api/catalog',
      FLOE_REST_WAREHOUSE: 'lake',
      FLOE_REST_CREDENTIAL_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:catalog-AbCdEf',
    });
    expect(env.FLOE_TABLE_BUCKET_ARN).toBeUndefined();
    expect(env.FLOE_REST_SIGV4_SIGNING_NAME).toBeUndefined();
    template.resourceCountIs('AWS::S3Tables::TableBucket', 0);
    template.resourceCountIs('AWS::S3Tables::Table', 0);
  });

  it('creates no maintenance when disabled', () => {
    template.resourceCountIs('AWS::StepFunctions::StateMachine', 0);
    template.resourceCountIs('AWS::Scheduler::Schedule', 0);
    template.resourceCountIs('AWS::Lambda::Function', 1);
    expect(pipeline.maintenanceStateMachine).toBeUndefined();
    expect(pipeline.schedules).toEqual([]);
    expect(pipeline.alarms.maintenanceFailures).toBeUndefined();
  });
});
