import { CfnParameter, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { deriveMskArn } from '../../../infra/permissions.js';
import { CLUSTER_ARN, fullProps, ORDERS_TABLE, selfManagedRestProps, synthPipeline } from './stacks.js';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

/** Every role's statements (inline default policies), keyed by the role's logical id. */
function statementsByRole(template: Template): Map<string, Statement[]> {
  const byRole = new Map<string, Statement[]>();
  for (const policy of Object.values(template.findResources('AWS::IAM::Policy'))) {
    const props = policy.Properties as {
      Roles: { Ref: string }[];
      PolicyDocument: { Statement: Statement[] };
    };
    for (const role of props.Roles) {
      byRole.set(role.Ref, [...(byRole.get(role.Ref) ?? []), ...props.PolicyDocument.Statement]);
    }
  }
  return byRole;
}

function roleMatching(byRole: Map<string, Statement[]>, pattern: RegExp): Statement[] {
  const ids = [...byRole.keys()].filter((id) => pattern.test(id));
  expect(ids, `exactly one role matching ${pattern}`).toHaveLength(1);
  return byRole.get(ids[0])!;
}

const actionsOf = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
const resourcesOf = (s: Statement) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]);
const allActions = (statements: Statement[]) => statements.flatMap(actionsOf).sort();
const withAction = (statements: Statement[], action: string) =>
  statements.filter((s) => actionsOf(s).includes(action));

/** The actions a role may perform on `*`. */
function starActions(statements: Statement[]): string[] {
  return statements
    .filter((s) => resourcesOf(s).includes('*'))
    .flatMap(actionsOf)
    .sort();
}

const ESM_NETWORKING = [
  'ec2:CreateNetworkInterface',
  'ec2:DeleteNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSecurityGroups',
  'ec2:DescribeSubnets',
  'ec2:DescribeVpcs',
];

describe('least privilege with an MSK source and S3 Tables', () => {
  let template: Template;
  let byRole: Map<string, Statement[]>;

  beforeAll(() => {
    ({ template } = synthPipeline(fullProps));
    byRole = statementsByRole(template);
  }, 120_000);

  it('attaches no managed policy to any role', () => {
    for (const role of Object.values(template.findResources('AWS::IAM::Role'))) {
      expect((role.Properties as Record<string, unknown>).ManagedPolicyArns).toBeUndefined();
    }
  });

  it('uses * only for ESM networking (ingest) and X-Ray / log delivery (state machine)', () => {
    // Act
    const star = new Map([...byRole].map(([id, statements]) => [id, starActions(statements)]));
    // Assess
    for (const [id, actions] of star) {
      if (/IngestRole/.test(id)) expect(actions).toEqual(ESM_NETWORKING);
      else if (/StateMachineRole/.test(id)) {
        expect(actions.every((a) => a.startsWith('xray:') || a.startsWith('logs:'))).toBe(true);
        expect(actions).toContain('xray:PutTraceSegments');
        expect(actions).toContain('logs:CreateLogDelivery');
      } else expect(actions, id).toEqual([]);
    }
  });

  it('lets the ingest role read the cluster, its topics and its groups, derived from the cluster ARN', () => {
    // Prepare
    const ingest = roleMatching(byRole, /IngestRole/);
    const prefix = 'arn:aws:kafka:eu-west-1:111122223333';
    const suffix = 'sales/5a6b7c8d-1111-2222-3333-444455556666-2';
    // Assess
    expect(withAction(ingest, 'kafka:DescribeClusterV2').map((s) => s.Resource)).toEqual([CLUSTER_ARN]);
    expect(withAction(ingest, 'kafka:GetBootstrapBrokers').map((s) => s.Resource)).toEqual([CLUSTER_ARN]);
    expect(withAction(ingest, 'kafka-cluster:Connect').map((s) => s.Resource)).toEqual([CLUSTER_ARN]);
    expect(
      withAction(ingest, 'kafka-cluster:DescribeClusterDynamicConfiguration').map((s) => s.Resource),
    ).toEqual([CLUSTER_ARN]);
    const [readData] = withAction(ingest, 'kafka-cluster:ReadData');
    expect(actionsOf(readData)).toEqual(['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData']);
    expect(readData.Resource).toEqual([
      `${prefix}:topic/${suffix}/orders`,
      `${prefix}:topic/${suffix}/payments`,
    ]);
    const [alterGroup] = withAction(ingest, 'kafka-cluster:AlterGroup');
    expect(actionsOf(alterGroup)).toEqual(['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup']);
    expect(alterGroup.Resource).toEqual([
      `${prefix}:group/${suffix}/floe-sales-orders`,
      `${prefix}:group/${suffix}/floe-sales-payments`,
    ]);
  });

  it('lets the ingest role write failed batches only (PutObject, ListBucket)', () => {
    const ingest = roleMatching(byRole, /IngestRole/);
    const s3 = ingest.filter((s) => actionsOf(s).some((a) => a.startsWith('s3:')));
    expect(s3.map((s) => actionsOf(s))).toEqual([['s3:PutObject'], ['s3:ListBucket']]);
  });

  it('scopes s3tables actions to the table bucket and its tables', () => {
    // Prepare
    const ingest = roleMatching(byRole, /IngestRole/);
    const bucketArn = { 'Fn::GetAtt': [expect.stringMatching(/TableBucket/), 'TableBucketARN'] };
    // Assess
    const [bucketLevel] = withAction(ingest, 's3tables:CreateTable');
    expect(bucketLevel.Resource).toEqual(bucketArn);
    const [tableLevel] = withAction(ingest, 's3tables:UpdateTableMetadataLocation');
    expect(tableLevel.Resource).toEqual({ 'Fn::Join': ['', [bucketArn, '/table/*']] });
    expect(actionsOf(tableLevel).sort()).toEqual(
      [
        's3tables:GetTable',
        's3tables:GetTableData',
        's3tables:GetTableMetadataLocation',
        's3tables:PutTableData',
        's3tables:UpdateTableMetadataLocation',
      ].sort(),
    );
  });

  it('gives each maintenance task only what its step does', () => {
    // Prepare
    const role = (name: string) => roleMatching(byRole, new RegExp(`Maintenance${name}FunctionRole`));
    const s3tables = (name: string) =>
      allActions(role(name)).filter(
        (a) => a.startsWith('s3tables:') && !/List|GetTableBucket|GetNamespace/.test(a),
      );
    const read = ['s3tables:GetTable', 's3tables:GetTableData', 's3tables:GetTableMetadataLocation'];
    const commit = [...read, 's3tables:PutTableData', 's3tables:UpdateTableMetadataLocation'].sort();
    // Assess
    expect(s3tables('ConvertEqualityDeletes')).toEqual(commit);
    expect(s3tables('Plan')).toEqual(read);
    expect(s3tables('Compact')).toEqual([...read, 's3tables:PutTableData'].sort());
    expect(s3tables('Commit')).toEqual(commit);
    expect(s3tables('RewriteManifests')).toEqual(commit);
    expect(s3tables('ExpireSnapshots')).toEqual(
      [
        ...commit,
        's3tables:GetTableMaintenanceConfiguration',
        's3tables:PutTableMaintenanceConfiguration',
      ].sort(),
    );
    expect(s3tables('RemoveOrphans')).toEqual(read);
    for (const name of [
      'ConvertEqualityDeletes',
      'Plan',
      'Compact',
      'Commit',
      'ExpireSnapshots',
      'RemoveOrphans',
      'RewriteManifests',
    ]) {
      expect(allActions(role(name))).not.toContain('s3tables:CreateTable');
    }
  });

  it('lets only committing functions touch the lock table, with item actions on that table', () => {
    // Prepare
    const lockActions = [
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ];
    const lockUsers =
      /IngestRole|ConvertEqualityDeletesFunctionRole|CommitFunctionRole|ExpireSnapshotsFunctionRole|RewriteManifestsFunctionRole/;
    // Assess
    for (const [id, statements] of byRole) {
      const dynamo = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
      if (lockUsers.test(id)) {
        expect(dynamo.flatMap(actionsOf).sort(), id).toEqual(lockActions);
        expect(dynamo.flatMap(resourcesOf), id).toEqual([
          { 'Fn::GetAtt': [expect.stringMatching(/LockTable/), 'Arn'] },
        ]);
      } else expect(dynamo, id).toEqual([]);
    }
  });

  it('lets each function write its own log group only', () => {
    for (const [id, statements] of byRole) {
      if (!/FunctionRole|IngestRole/.test(id)) continue;
      const logs = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
      expect(logs.flatMap(actionsOf).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
      const group = id.replace(/Role[0-9A-F]{8}$/, 'Logs');
      expect(logs.flatMap(resourcesOf)).toEqual([
        { 'Fn::GetAtt': [expect.stringMatching(new RegExp(`^${group}`)), 'Arn'] },
      ]);
    }
  });
});

describe('least privilege when the stack creates the tables', () => {
  it('still scopes table actions to the bucket’s tables (floe creates dead-letter tables at run time)', () => {
    // Prepare
    const { template } = synthPipeline((stack) => ({ ...fullProps(stack), tables: [ORDERS_TABLE] }));
    template.resourceCountIs('AWS::S3Tables::Table', 1);
    const ingest = roleMatching(statementsByRole(template), /IngestRole/);
    // Act
    const [tableLevel] = withAction(ingest, 's3tables:UpdateTableMetadataLocation');
    // Assess
    expect(tableLevel.Resource).toEqual({
      'Fn::Join': [
        '',
        [{ 'Fn::GetAtt': [expect.stringMatching(/TableBucket/), 'TableBucketARN'] }, '/table/*'],
      ],
    });
  });
});

describe('least privilege with a self-managed source and a REST catalog', () => {
  let byRole: Map<string, Statement[]>;

  beforeAll(() => {
    byRole = statementsByRole(synthPipeline(selfManagedRestProps).template);
  }, 120_000);

  it('reads the Kafka, root CA and catalog secrets and nothing from MSK', () => {
    const ingest = roleMatching(byRole, /IngestRole/);
    const secrets = ingest
      .filter((s) => actionsOf(s).includes('secretsmanager:GetSecretValue'))
      .flatMap(resourcesOf);
    expect(secrets.sort()).toEqual(
      ['kafka', 'root-ca', 'catalog']
        .map((n) => `arn:aws:secretsmanager:eu-west-1:111122223333:secret:${n}-AbCdEf`)
        .sort(),
    );
    expect(allActions(ingest).some((a) => a.startsWith('kafka'))).toBe(false);
    expect(allActions(ingest).some((a) => a.startsWith('s3tables:'))).toBe(false);
  });

  it('grants ESM networking because the brokers are in a VPC', () => {
    expect(starActions(roleMatching(byRole, /IngestRole/))).toEqual(ESM_NETWORKING);
  });

  it('reads and writes warehouse objects without deleting them from the ingest function', () => {
    const ingest = roleMatching(byRole, /IngestRole/);
    const objects = ingest.find((s) => actionsOf(s).includes('s3:GetObject'))!;
    expect(actionsOf(objects)).toEqual(['s3:GetObject', 's3:PutObject']);
    expect(JSON.stringify(objects.Resource)).toContain('lake-warehouse/*');
  });
});

describe('deriveMskArn', () => {
  it('derives topic and group ARNs from a literal cluster ARN', () => {
    expect(deriveMskArn(CLUSTER_ARN, 'topic', 'orders')).toBe(
      'arn:aws:kafka:eu-west-1:111122223333:topic/sales/5a6b7c8d-1111-2222-3333-444455556666-2/orders',
    );
  });

  it('splits a deploy-time cluster ARN in the template', () => {
    // Prepare
    const stack = new Stack();
    const arn = new CfnParameter(stack, 'ClusterArn').valueAsString;
    // Act
    const derived = stack.resolve(deriveMskArn(arn, 'group', 'g1'));
    // Assess
    expect(JSON.stringify(derived)).toContain('":cluster/"');
    expect(JSON.stringify(derived)).toContain(':group/');
    expect(JSON.stringify(derived)).toContain('/g1');
  });

  it('refuses an ARN that is not a cluster', () => {
    expect(() => deriveMskArn('arn:aws:kafka:eu-west-1:111122223333:topic/x/y/z', 'topic', 't')).toThrow(
      /not an MSK cluster ARN/,
    );
  });
});
