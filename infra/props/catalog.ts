/** The catalog that owns the tables' metadata pointers: Amazon S3 Tables, or a self-hosted Iceberg REST catalog. */
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';

/** Amazon S3 Tables as the catalog: a table bucket that the construct creates or that exists already. */
export interface S3TablesCatalog {
  readonly kind: 's3tables';
  /**
   * ARN of an existing table bucket.
   * @default - the construct creates a table bucket
   */
  readonly tableBucketArn?: string;
  /**
   * Name of the table bucket to create (ignored with `tableBucketArn`).
   * @default - a name derived from the construct path
   */
  readonly tableBucketName?: string;
  /**
   * Create the routes' namespaces with CloudFormation. Namespaces that already exist make the deployment fail.
   * @default - true when the construct creates the table bucket, false otherwise (floe creates them)
   */
  readonly createNamespaces?: boolean;
  /**
   * Create the routes' tables (those with a `schema`) with CloudFormation instead of at the first write,
   * exactly as floe would (the `_kafka` lineage column included, the same partition spec), with S3 Tables'
   * own compaction and snapshot retention configured from `maintenance`. These tables are always retained
   * on delete. Changing a created table's `schema` or `partitionBy` later makes CloudFormation try to
   * replace the table, which fails (the name is taken): evolve schemas through floe, not through the stack.
   * @default false (floe creates each table, and its dead-letter table, at its first write)
   */
  readonly createTables?: boolean;
}

/** A self-hosted Iceberg REST catalog. */
export interface RestCatalog {
  readonly kind: 'rest';
  /** Catalog base URI, e.g. `https://catalog.example.com/api/catalog`. */
  readonly uri: string;
  /** Warehouse identifier sent to the catalog. */
  readonly warehouse: string;
  /**
   * Secret holding `{"credential":"id:secret"}` (OAuth2 client credentials) or `{"token":"..."}`. The
   * sign-in settings below go with a credential.
   * @default - no OAuth2
   */
  readonly credentialSecret?: secretsmanager.ISecret;
  /**
   * The OAuth2 token endpoint (Iceberg's `oauth2-server-uri`), for a catalog behind an external identity
   * provider (Keycloak, Okta, Entra ID, Databricks) or one whose endpoint is not `<uri>/v1/oauth/tokens`.
   * @default - `<uri>/v1/oauth/tokens`, or what the catalog's `GET /v1/config` names on the same origin
   */
  readonly oauth2ServerUri?: string;
  /**
   * The token request's `scope`, e.g. `PRINCIPAL_ROLE:ALL` for Apache Polaris / Snowflake Open Catalog.
   * @default 'catalog'
   */
  readonly scope?: string;
  /**
   * The token request's `audience` (RFC 8693; Auth0, Okta, Keycloak).
   * @default - none sent
   */
  readonly audience?: string;
  /**
   * The token request's `resource` (RFC 8707; Entra ID, Keycloak).
   * @default - none sent
   */
  readonly resource?: string;
  /**
   * Further token request form fields. Not secrets: they are plain environment variables.
   * @default - none
   */
  readonly oauth2Params?: Readonly<Record<string, string>>;
  /**
   * How the client id and secret reach the token endpoint: form fields (`post`, Iceberg's way) or an HTTP
   * Basic header (`basic`, for identity providers that take only that).
   * @default 'post'
   */
  readonly oauth2ClientAuth?: 'post' | 'basic';
  /**
   * Sign catalog requests with SigV4 under this service name (e.g. `s3tables`, `glue`).
   * @default - requests are not signed
   */
  readonly sigV4SigningName?: string;
  /**
   * Bucket holding the warehouse's files, when the catalog does not vend credentials.
   * @default - the catalog vends credentials, or `policyStatements` grant storage access
   */
  readonly warehouseBucket?: s3.IBucket;
  /**
   * Extra statements every catalog-using function gets, e.g. the target service's actions with SigV4.
   * @default - none
   */
  readonly policyStatements?: readonly iam.PolicyStatement[];
}

/** The catalog that owns the tables' metadata pointers. */
export type CatalogConfig = S3TablesCatalog | RestCatalog;
