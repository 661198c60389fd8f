/**
 * Least-privilege statements for floe's functions. Each function's role gets only what its step does;
 * a `*` resource appears only for actions AWS gives no resource-level permission for, each said so where
 * it is granted.
 */
import { Fn, Stack, Token } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { CatalogResources } from './catalog.js';
import { acknowledgeWildcardResource } from './nag.js';

/** What one function does to the tables. */
export interface CatalogAccess {
  /** Writes data, manifest or metadata files (compaction, commits). */
  readonly writeFiles?: boolean;
  /** Moves the table's metadata pointer (a commit). */
  readonly commit?: boolean;
  /** Creates namespaces and tables that do not exist yet (ingest only). */
  readonly create?: boolean;
  /** Reads and sets S3 Tables' own maintenance configuration (expiry, orphan removal). */
  readonly maintenanceConfig?: boolean;
  /** Deletes files in a REST catalog's warehouse bucket (orphan removal, expiry). */
  readonly deleteFiles?: boolean;
}

/**
 * Grants one role what `access` says on the catalog: S3 Tables actions on the table bucket and its tables,
 * or a REST catalog's secret, warehouse bucket and extra statements.
 */
export function grantCatalog(role: iam.IRole, catalog: CatalogResources, access: CatalogAccess): void {
  for (const secret of catalog.secrets) secret.grantRead(role);
  for (const statement of catalog.policyStatements) role.addToPrincipalPolicy(statement);
  if (catalog.warehouseBucket) grantWarehouse(role, catalog.warehouseBucket, access);
  const bucketArn = catalog.tableBucketArn;
  if (bucketArn === undefined) return;
  const bucketActions = [
    's3tables:GetTableBucket',
    's3tables:GetNamespace',
    's3tables:ListNamespaces',
    's3tables:ListTables',
  ];
  if (access.create) bucketActions.push('s3tables:CreateNamespace', 's3tables:CreateTable');
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: bucketActions, resources: [bucketArn] }));
  const tableActions = ['s3tables:GetTable', 's3tables:GetTableMetadataLocation', 's3tables:GetTableData'];
  if (access.writeFiles || access.commit || access.create) tableActions.push('s3tables:PutTableData');
  if (access.commit || access.create) tableActions.push('s3tables:UpdateTableMetadataLocation');
  if (access.maintenanceConfig) {
    tableActions.push(
      's3tables:GetTableMaintenanceConfiguration',
      's3tables:PutTableMaintenanceConfiguration',
    );
  }
  // A table's ARN carries an id S3 Tables assigns at creation, and floe creates tables (routes' tables,
  // dead-letter tables) at run time: they can only be named as "the tables of this bucket".
  const tables = `${bucketArn}/table/*`;
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: tableActions, resources: [tables] }));
  acknowledgeWildcardResource(
    role,
    tables,
    'table ARNs carry ids S3 Tables assigns when floe creates a table (including dead-letter tables) at run time; the grant stays inside this table bucket',
  );
}

/**
 * Object-level access to a REST catalog's warehouse bucket: read always, write for steps that write
 * files, delete for the steps that remove them. Written out instead of `grantReadWrite`, whose
 * `s3:GetObject*`/`s3:List*`/`s3:Abort*` families are more than floe uses.
 */
function grantWarehouse(role: iam.IRole, bucket: s3.IBucket, access: CatalogAccess): void {
  const objectActions = ['s3:GetObject'];
  if (access.writeFiles || access.commit || access.create) objectActions.push('s3:PutObject');
  if (access.deleteFiles) objectActions.push('s3:DeleteObject');
  const objects = bucket.arnForObjects('*');
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: objectActions, resources: [objects] }));
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
  );
  acknowledgeWildcardResource(
    role,
    objects,
    'data and metadata files are named at write time inside the warehouse',
  );
  if (bucket.encryptionKey) {
    if (objectActions.includes('s3:PutObject')) bucket.encryptionKey.grantEncryptDecrypt(role);
    else bucket.encryptionKey.grantDecrypt(role);
  }
}

/** Conditional get/put/update/delete of lock items; nothing else, on the lock table only. */
export function grantLock(role: iam.IRole, lockTable: dynamodb.ITable): void {
  lockTable.grant(role, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem');
}

/**
 * `arn:…:cluster/<name>/<uuid>` → `arn:…:<kind>/<name>/<uuid>/<leaf>`, the form MSK's IAM access control
 * uses for topics and groups. Works for a literal ARN and for a token (split at deploy time).
 */
export function deriveMskArn(clusterArn: string, kind: 'topic' | 'group', leaf: string): string {
  if (!Token.isUnresolved(clusterArn)) {
    const at = clusterArn.indexOf(':cluster/');
    if (at < 0) throw new Error(`'${clusterArn}' is not an MSK cluster ARN (…:cluster/<name>/<uuid>)`);
    return `${clusterArn.slice(0, at)}:${kind}/${clusterArn.slice(at + ':cluster/'.length)}/${leaf}`;
  }
  const halves = Fn.split(':cluster/', clusterArn, 2);
  return Fn.join('', [Fn.select(0, halves), `:${kind}/`, Fn.select(1, halves), `/${leaf}`]);
}

/**
 * What the event source mapping needs, through the function's role, to read an MSK cluster with IAM auth:
 * the cluster's brokers and configuration, its topics, and its consumer groups.
 */
export function grantMskRead(role: iam.IRole, clusterArn: string, topics: string[], groups: string[]): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      // DescribeClusterV2 serves serverless clusters; DescribeCluster provisioned ones (Lambda checks either)
      actions: ['kafka:DescribeCluster', 'kafka:DescribeClusterV2', 'kafka:GetBootstrapBrokers'],
      resources: [clusterArn],
    }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['kafka-cluster:Connect', 'kafka-cluster:DescribeClusterDynamicConfiguration'],
      resources: [clusterArn],
    }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'],
      resources: topics.map((t) => deriveMskArn(clusterArn, 'topic', t)),
    }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'],
      resources: groups.map((g) => deriveMskArn(clusterArn, 'group', g)),
    }),
  );
}

/**
 * What an aggregate route's emit needs to produce to topics of an MSK cluster with IAM auth: connect,
 * and describe and write the topics (not create them).
 */
export function grantMskWrite(role: iam.IRole, clusterArn: string, topics: string[]): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['kafka-cluster:Connect'], resources: [clusterArn] }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['kafka-cluster:DescribeTopic', 'kafka-cluster:WriteData'],
      resources: topics.map((t) => deriveMskArn(clusterArn, 'topic', t)),
    }),
  );
}

/**
 * The network-interface actions the event source mapping uses to reach brokers inside a VPC. EC2's
 * Describe* actions have no resource-level permissions, and Lambda creates and deletes its interfaces in
 * subnets and security groups it reads from the cluster at run time, so AWS documents these on `*`
 * (they are the ec2 half of the AWSLambdaMSKExecutionRole managed policy).
 */
export function grantEsmNetworking(role: iam.IRole): iam.PolicyStatement {
  const statement = new iam.PolicyStatement({
    actions: [
      'ec2:CreateNetworkInterface',
      'ec2:DescribeNetworkInterfaces',
      'ec2:DescribeVpcs',
      'ec2:DeleteNetworkInterface',
      'ec2:DescribeSubnets',
      'ec2:DescribeSecurityGroups',
    ],
    resources: ['*'],
  });
  role.addToPrincipalPolicy(statement);
  acknowledgeWildcardResource(
    role,
    '*',
    'ec2 network-interface actions for the event source mapping: Describe* has no resource-level permissions and the interfaces are created in subnets Lambda reads from the cluster',
  );
  return statement;
}

/**
 * `glue:GetSchemaVersion` for routes floe decodes from the AWS Glue Schema Registry wire format itself
 * (Glue authenticates with the function's role: no secret). A record names only a schema version id, so
 * the grant covers the registry the route names (`format.glue.registryName`), or every registry of the
 * account and Region when it names none.
 */
export function grantGlueSchemaRead(role: iam.IRole, registryNames: readonly (string | undefined)[]): void {
  if (registryNames.length === 0) return;
  const stack = Stack.of(role);
  const names = registryNames.includes(undefined) ? ['*'] : [...new Set(registryNames as string[])];
  const resources = names.flatMap((name) => [
    `arn:${stack.partition}:glue:${stack.region}:${stack.account}:registry/${name}`,
    `arn:${stack.partition}:glue:${stack.region}:${stack.account}:schema/${name}/*`,
  ]);
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['glue:GetSchemaVersion'], resources }));
  for (const resource of resources.filter((r) => r.includes('*'))) {
    acknowledgeWildcardResource(
      role,
      resource,
      'records name only a schema version id, which may belong to any schema of the registry the route reads',
    );
  }
}
