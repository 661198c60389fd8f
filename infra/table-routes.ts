/**
 * Checks the construct's table routes at synth time and renders them as the handlers read them (the
 * routes file, `FLOE_TABLES_FILE`, see functions/handlers/README.md). A route that cannot work fails
 * `cdk synth`, not the first batch in production. Routes carry no secret: a registry's credentials are
 * a Secrets Manager secret whose ARN reaches the function in an environment variable the route names.
 */
import { Token } from 'aws-cdk-lib';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { FormatSettings } from '../functions/core/formats/format-schema.js';
import type { MappingSettings } from '../functions/core/mapping/mapping-schema.js';
import { withKafkaLineage } from '../functions/core/records/kafka-lineage.js';
import { parseRoutes } from '../functions/core/routing/routes.js';
import { parseAggregateConfig } from '../functions/core/sql/aggregate-config.js';
import { parsePartitionExpression } from '../functions/core/spec/partition-spec.js';
import { findFieldByName } from '../functions/core/spec/schema-index.js';
import type { PartitionSpec, Schema } from '../functions/core/spec/types.js';
import type { AggregateRouteProps, IngestMode, SchemaPolicy, TableRoute } from './props.js';

/**
 * floe's `write.target-file-size-bytes` for tables the construct creates: 128 MiB, smaller than
 * Iceberg's own default (512 MiB, functions/core/table/table-properties.ts).
 */
export const DEFAULT_TARGET_FILE_SIZE_BYTES = 134_217_728;

/** One route exactly as the routes file carries it, defaults filled in. */
export interface RenderedRoute {
  topics: string[];
  table: string;
  schema?: Schema;
  partitionBy?: string;
  /** Absent for aggregate routes (their key is the query's). */
  mode?: IngestMode;
  identifierColumns?: string[];
  aggregate?: AggregateRouteProps;
  targetFileSizeBytes: number;
  schemaEvolution?: SchemaPolicy;
  sortBy?: string;
  format?: FormatSettings;
  mapping?: MappingSettings;
  when?: { readonly [key: string]: unknown };
  properties?: { readonly [key: string]: string };
  kafkaLineage?: boolean;
  kafkaValue?: boolean;
  dlqTable?: string;
}

/** A table name split at its last dot: the namespace (possibly multi-level for REST) and the name. */
export interface TableName {
  namespace: string;
  name: string;
}

/**
 * Splits `ns.name` (or `a.b.name` for multi-level REST namespaces).
 * @throws Error when there is no namespace or an empty part
 */
export function splitTableName(table: string): TableName {
  const dot = table.lastIndexOf('.');
  const parts = table.split('.');
  if (dot <= 0 || parts.some((p) => p.length === 0)) {
    throw new Error(`table '${table}' must be written 'namespace.name'`);
  }
  return { namespace: table.slice(0, dot), name: table.slice(dot + 1) };
}

/** S3 Tables allows lowercase letters, digits and underscores (3–255 chars for tables, 1–255 for namespaces). */
const S3_TABLES_NAME = /^[a-z0-9][a-z0-9_]*$/;

/**
 * Refuses table names S3 Tables would reject (one namespace level, lowercase letters, digits, `_`).
 * @throws Error naming the table
 */
export function checkS3TablesName(table: string): void {
  const { namespace, name } = splitTableName(table);
  if (namespace.includes('.') || !S3_TABLES_NAME.test(namespace) || !S3_TABLES_NAME.test(name)) {
    throw new Error(
      `table '${table}': S3 Tables needs one namespace level and names of lowercase letters, digits and '_'`,
    );
  }
}

/**
 * The schema and partition spec floe gives a route's table when it creates it (the `_kafka` lineage
 * column appended unless turned off), from the same core functions the handlers use.
 * @throws ValidationError for a partition expression the schema cannot take
 */
export function tableLayout(
  route: TableRoute,
): { schema: Schema; partitionSpec?: PartitionSpec } | undefined {
  if (route.schema === undefined) return undefined;
  if (route.aggregate) {
    // The table an aggregate route writes has the query's columns, not the records' (and no lineage).
    const { plan } = parseAggregateConfig(route.aggregate, `table route '${route.table}' aggregate`, {
      topics: route.topics,
      schema: route.schema,
    });
    const result = plan.resultSchema;
    return route.partitionBy === undefined
      ? { schema: result }
      : { schema: result, partitionSpec: parsePartitionExpression(route.partitionBy, result) };
  }
  const schema =
    route.kafkaLineage === false
      ? route.schema
      : withKafkaLineage(route.schema, { value: route.kafkaValue === true });
  return route.partitionBy === undefined
    ? { schema }
    : { schema, partitionSpec: parsePartitionExpression(route.partitionBy, schema) };
}

function checkRoute(route: TableRoute, parsedSchema: Schema | undefined): void {
  const where = `table route '${route.table}'`;
  splitTableName(route.table);
  const mode = route.mode ?? 'append';
  if (mode !== 'append' && (route.identifierColumns ?? []).length === 0) {
    throw new Error(`${where}: mode '${mode}' needs identifierColumns`);
  }
  if (parsedSchema === undefined) return;
  for (const column of route.identifierColumns ?? []) {
    if (!findFieldByName(parsedSchema, column))
      throw new Error(`${where}: identifier column '${column}' is not in the schema`);
  }
  try {
    tableLayout({ ...route, schema: parsedSchema });
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`, { cause: error });
  }
}

/** Registry keys that would put a credential in plain text into the code and the template. */
const PLAINTEXT_CREDENTIALS = ['basicAuth', 'bearerToken'] as const;

/** Refuses credentials the construct cannot keep out of the template, naming the way that works. */
function checkCredentials(route: TableRoute): void {
  const where = `table route '${route.table}'`;
  const registry = route.format?.registry as { readonly [key: string]: unknown } | undefined;
  for (const key of PLAINTEXT_CREDENTIALS) {
    if (registry?.[key] !== undefined) {
      throw new Error(
        `${where}: format.registry.${key} would be written in plain text into the function's code and the ` +
          'CloudFormation template; store it in Secrets Manager and pass the secret as registryCredentials',
      );
    }
  }
  for (const key of ['credentialsSecretArn', 'credentialsSecretArnEnv']) {
    if (registry?.[key] !== undefined) {
      throw new Error(
        `${where}: pass the registry's secret as registryCredentials (an ISecret, e.g. ` +
          `Secret.fromSecretCompleteArn), not format.registry.${key}: the construct grants read on it`,
      );
    }
  }
  if (route.registryCredentials && registry === undefined) {
    throw new Error(`${where}: registryCredentials needs format.registry (the registry they sign in to)`);
  }
}

/**
 * Checks every route as the handlers will read it (the core's `parseRoutes` over the rendered routes),
 * plus what only shows once data flows: key columns for CDC modes that exist in the schema, a partition
 * expression the schema can take, no table routed twice, no credential in plain text, and nothing known
 * only at deploy time (the routes file is written at synth).
 * @throws Error naming the first bad route
 */
export function checkRoutes(routes: readonly TableRoute[]): void {
  if (routes.length === 0) throw new Error('KafkaToIceberg needs at least one table route');
  for (const route of routes) checkCredentials(route);
  const rendered = renderRoutes(routes, planRegistrySecrets(routes).variableOf);
  rendered.forEach((route, i) => {
    if (Token.isUnresolved(JSON.stringify(route))) {
      throw new Error(
        `table route '${routes[i].table}' holds a value known only at deploy time (a token); routes are ` +
          "written into the function's code at synth, so they must be plain values",
      );
    }
  });
  const parsed = parseRoutes(JSON.parse(JSON.stringify(rendered)));
  const seen = new Set<string>();
  routes.forEach((route, i) => {
    if (seen.has(route.table)) throw new Error(`table '${route.table}' is routed twice`);
    seen.add(route.table);
    checkRoute(route, parsed[i].schema);
  });
}

/** The registry secrets of a set of routes: one environment variable per distinct secret. */
export interface RegistrySecrets {
  /** The secrets, in order of first use. */
  readonly secrets: readonly secretsmanager.ISecret[];
  /** `FLOE_REGISTRY_SECRET_ARN_<n>` → the secret's ARN (a token until deploy time, often). */
  readonly environment: Readonly<Record<string, string>>;
  /** The variable that carries a route's secret ARN, if it has one. */
  readonly variableOf: (route: TableRoute) => string | undefined;
}

/** One variable per distinct secret (routes sharing a registry share its variable). */
export function planRegistrySecrets(routes: readonly TableRoute[]): RegistrySecrets {
  const secrets: secretsmanager.ISecret[] = [];
  for (const route of routes) {
    if (route.registryCredentials && !secrets.includes(route.registryCredentials))
      secrets.push(route.registryCredentials);
  }
  const variable = (i: number) => `FLOE_REGISTRY_SECRET_ARN_${i}`;
  return {
    secrets,
    environment: Object.fromEntries(secrets.map((secret, i) => [variable(i), secret.secretArn])),
    variableOf: (route) =>
      route.registryCredentials ? variable(secrets.indexOf(route.registryCredentials)) : undefined,
  };
}

/**
 * The routes as the routes file carries them, with the defaults filled in (so handlers never guess), in
 * the handlers' own keys (`parseRoutes` refuses any other: checkRoutes runs it at synth). A route with
 * `registryCredentials` names the variable holding the secret's ARN (`secretVariable`).
 */
export function renderRoutes(
  routes: readonly TableRoute[],
  secretVariable: (route: TableRoute) => string | undefined = () => undefined,
): RenderedRoute[] {
  return routes.map((route) => ({
    topics: copyList(route.topics),
    table: route.table,
    ...(route.schema === undefined ? {} : { schema: route.schema }),
    ...(route.partitionBy === undefined ? {} : { partitionBy: route.partitionBy }),
    // An aggregate route takes no mode (parseRoutes refuses one): its key is GROUP BY + window_start.
    ...(route.aggregate ? { aggregate: route.aggregate } : { mode: route.mode ?? 'append' }),
    ...(route.identifierColumns === undefined
      ? {}
      : { identifierColumns: copyList(route.identifierColumns) }),
    targetFileSizeBytes: route.targetFileSizeBytes ?? DEFAULT_TARGET_FILE_SIZE_BYTES,
    // The handlers' key; unset, the table's own `floe.schema-evolution` property (else evolve) decides.
    ...(route.schemaPolicy === undefined ? {} : { schemaEvolution: route.schemaPolicy }),
    ...(route.sortBy === undefined ? {} : { sortBy: route.sortBy }),
    ...(route.format === undefined ? {} : { format: renderFormat(route.format, secretVariable(route)) }),
    ...(route.mapping === undefined ? {} : { mapping: route.mapping }),
    ...(route.when === undefined ? {} : { when: route.when }),
    ...(route.properties === undefined ? {} : { properties: copyRecord(route.properties) }),
    ...(route.kafkaLineage === undefined ? {} : { kafkaLineage: route.kafkaLineage }),
    ...(route.kafkaValue === undefined ? {} : { kafkaValue: route.kafkaValue }),
    ...(route.dlqTable === undefined ? {} : { dlqTable: route.dlqTable }),
  }));
}

/**
 * Copies of the props' lists and maps, leaving a value of another type as it is: spreading a string
 * would turn `topics: 'orders'` into letters the route schema then takes; untouched, checkRoutes
 * refuses it with its path (untyped JavaScript and `as` casts get past the prop types).
 */
function copyList<T>(list: readonly T[]): T[] {
  return Array.isArray(list) ? [...list] : (list as T[]);
}

function copyRecord<T extends object>(record: T): T {
  return record !== null && typeof record === 'object' && !Array.isArray(record) ? { ...record } : record;
}

function renderFormat(format: FormatSettings, secretVariable: string | undefined): FormatSettings {
  if (secretVariable === undefined || format.registry === undefined) return format;
  return { ...format, registry: { ...format.registry, credentialsSecretArnEnv: secretVariable } };
}

/** Every topic any route reads, in first-seen order. */
export function routeTopics(routes: readonly TableRoute[]): string[] {
  return [...new Set(routes.flatMap((r) => r.topics))];
}
