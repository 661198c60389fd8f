/**
 * The catalog side of the construct: for S3 Tables, the table bucket, namespaces and tables (created here
 * or taken as they are); for a REST catalog, only configuration. Yields the handlers' catalog variables and
 * what the permissions need to know (which ARNs, which secrets).
 */
import { Names, RemovalPolicy } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3tables from 'aws-cdk-lib/aws-s3tables';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { findFieldByName } from '../functions/core/spec/schema-index.js';
import type { CatalogConfig, MaintenanceOptions, RestCatalog, S3TablesCatalog, TableRoute } from './props.js';
import {
  checkS3TablesName,
  DEFAULT_TARGET_FILE_SIZE_BYTES,
  splitTableName,
  tableLayout,
} from './table-routes.js';

/** What the rest of the construct needs from the catalog. */
export interface CatalogResources {
  /** `FLOE_CATALOG` and the catalog's own variables. */
  readonly environment: Record<string, string>;
  /** S3 Tables: the table bucket ARN. */
  readonly tableBucketArn?: string;
  /** Secrets every catalog-using function reads. */
  readonly secrets: secretsmanager.ISecret[];
  /** REST: the warehouse bucket the functions read and write directly. */
  readonly warehouseBucket?: s3.IBucket;
  /** REST: extra statements for every catalog-using function. */
  readonly policyStatements: readonly iam.PolicyStatement[];
}

export interface CatalogOptions {
  readonly catalog: CatalogConfig;
  readonly routes: readonly TableRoute[];
  readonly maintenance: Required<
    Pick<MaintenanceOptions, 'snapshotRetention' | 'minSnapshotsToKeep' | 'orphanFileAge'>
  >;
  readonly removalPolicy: RemovalPolicy;
}

/** The catalog resources of one `KafkaToIceberg`, in their own scope. */
export class FloeCatalog extends Construct {
  readonly resources: CatalogResources;
  /** S3 Tables: the table bucket, when created here. */
  readonly tableBucket?: s3tables.CfnTableBucket;
  /** S3 Tables: namespaces created here. */
  readonly namespaces: s3tables.CfnNamespace[] = [];
  /** S3 Tables: tables created here. */
  readonly tables: s3tables.CfnTable[] = [];

  constructor(scope: Construct, id: string, options: CatalogOptions) {
    super(scope, id);
    const { catalog } = options;
    if (catalog.kind === 'rest') {
      this.resources = {
        environment: {
          FLOE_CATALOG: 'rest',
          FLOE_REST_URI: catalog.uri,
          FLOE_REST_WAREHOUSE: catalog.warehouse,
          ...(catalog.credentialSecret
            ? { FLOE_REST_CREDENTIAL_SECRET_ARN: catalog.credentialSecret.secretArn }
            : {}),
          ...(catalog.sigV4SigningName ? { FLOE_REST_SIGV4_SIGNING_NAME: catalog.sigV4SigningName } : {}),
          ...restSignInEnvironment(catalog),
        },
        secrets: catalog.credentialSecret ? [catalog.credentialSecret] : [],
        ...(catalog.warehouseBucket ? { warehouseBucket: catalog.warehouseBucket } : {}),
        policyStatements: catalog.policyStatements ?? [],
      };
      return;
    }
    for (const route of options.routes) checkS3TablesName(route.table);
    const created = catalog.tableBucketArn === undefined;
    if (created) this.tableBucket = this.createTableBucket(catalog, options);
    const tableBucketArn = catalog.tableBucketArn ?? this.tableBucket!.attrTableBucketArn;
    if (catalog.createNamespaces ?? created) this.createNamespaces(tableBucketArn, options);
    if (catalog.createTables) this.createTables(tableBucketArn, options);
    this.resources = {
      environment: { FLOE_CATALOG: 's3tables', FLOE_TABLE_BUCKET_ARN: tableBucketArn },
      tableBucketArn,
      secrets: [],
      policyStatements: [],
    };
  }

  private createTableBucket(catalog: S3TablesCatalog, options: CatalogOptions): s3tables.CfnTableBucket {
    const bucket = new s3tables.CfnTableBucket(this, 'TableBucket', {
      tableBucketName:
        catalog.tableBucketName ??
        Names.uniqueResourceName(this, { maxLength: 63, separator: '-' }).toLowerCase(),
      // S3 Tables removes files no snapshot references (floe may not delete in a table bucket)
      unreferencedFileRemoval: {
        status: 'Enabled',
        unreferencedDays: Math.max(
          1,
          Math.ceil(options.maintenance.orphanFileAge.toDays({ integral: false })),
        ),
      },
    });
    bucket.applyRemovalPolicy(options.removalPolicy);
    return bucket;
  }

  private createNamespaces(tableBucketArn: string, options: CatalogOptions): void {
    const names = [...new Set(options.routes.map((r) => splitTableName(r.table).namespace))];
    for (const namespace of names) {
      const ns = new s3tables.CfnNamespace(this, `Namespace-${namespace}`, { tableBucketArn, namespace });
      ns.applyRemovalPolicy(options.removalPolicy);
      this.namespaces.push(ns);
    }
  }

  private createTables(tableBucketArn: string, options: CatalogOptions): void {
    const { maintenance } = options;
    for (const route of options.routes) {
      const layout = tableLayout(route);
      if (layout === undefined) continue;
      const { schema, partitionSpec } = layout;
      const { namespace, name } = splitTableName(route.table);
      const keyIds =
        schema['identifier-field-ids'] ??
        (route.identifierColumns ?? []).map((c) => findFieldByName(schema, c)!.id);
      const targetSize = route.targetFileSizeBytes ?? DEFAULT_TARGET_FILE_SIZE_BYTES;
      const table = new s3tables.CfnTable(this, `Table-${route.table}`, {
        tableBucketArn,
        namespace,
        tableName: name,
        openTableFormat: 'ICEBERG',
        icebergMetadata: {
          icebergSchemaV2: {
            schemaV2FieldType: 'struct',
            schemaId: schema['schema-id'],
            schemaV2FieldList: schema.fields.map((f) => ({
              id: f.id,
              name: f.name,
              required: f.required,
              type: f.type,
              ...(f.doc === undefined ? {} : { doc: f.doc }),
            })),
            ...(keyIds.length > 0 ? { identifierFieldIds: keyIds } : {}),
          },
          ...(partitionSpec && partitionSpec.fields.length > 0
            ? {
                icebergPartitionSpec: {
                  specId: partitionSpec['spec-id'],
                  fields: partitionSpec.fields.map((p) => ({
                    sourceId: p['source-id'],
                    fieldId: p['field-id'],
                    name: p.name,
                    transform: p.transform,
                  })),
                },
              }
            : {}),
          tableProperties: { 'write.target-file-size-bytes': String(targetSize) },
        },
        // S3 Tables' compaction accepts 64–512 MB targets
        compaction: {
          status: 'enabled',
          targetFileSizeMb: Math.min(512, Math.max(64, Math.round(targetSize / 1_048_576))),
        },
        snapshotManagement: {
          status: 'enabled',
          maxSnapshotAgeHours: Math.max(
            1,
            Math.ceil(maintenance.snapshotRetention.toHours({ integral: false })),
          ),
          minSnapshotsToKeep: maintenance.minSnapshotsToKeep,
        },
      });
      // a dropped table is lost data: created tables are never deleted with the stack
      table.applyRemovalPolicy(RemovalPolicy.RETAIN);
      for (const ns of this.namespaces) if (ns.namespace === namespace) table.node.addDependency(ns);
      this.tables.push(table);
    }
  }
}

/**
 * The OAuth2 sign-in props as the handlers' variables (functions/handlers/rest-config.ts). Plain values:
 * the client secret stays in `credentialSecret`.
 * @throws Error for sign-in props with SigV4, or without a credential secret to sign in with
 */
function restSignInEnvironment(catalog: RestCatalog): Record<string, string> {
  const settings: [keyof RestCatalog, string, string | undefined][] = [
    ['oauth2ServerUri', 'FLOE_REST_OAUTH2_SERVER_URI', catalog.oauth2ServerUri],
    ['scope', 'FLOE_REST_SCOPE', catalog.scope],
    ['audience', 'FLOE_REST_AUDIENCE', catalog.audience],
    ['resource', 'FLOE_REST_RESOURCE', catalog.resource],
    ['oauth2ClientAuth', 'FLOE_REST_OAUTH2_CLIENT_AUTH', catalog.oauth2ClientAuth],
    [
      'oauth2Params',
      'FLOE_REST_OAUTH2_PARAMS',
      catalog.oauth2Params && Object.keys(catalog.oauth2Params).length > 0
        ? JSON.stringify(catalog.oauth2Params)
        : undefined,
    ],
  ];
  const given = settings.filter(([, , value]) => value !== undefined);
  if (given.length > 0 && (catalog.sigV4SigningName !== undefined || !catalog.credentialSecret)) {
    throw new Error(
      `catalog.${given[0][0]} is an OAuth2 client-credentials setting: it needs catalog.credentialSecret${catalog.sigV4SigningName !== undefined ? ' and no sigV4SigningName' : ''}`,
    );
  }
  return Object.fromEntries(given.map(([, variable, value]) => [variable, value as string]));
}
