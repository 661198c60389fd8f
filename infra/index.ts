/**
 * `floe/cdk`: the construct and everything a CDK app needs to write its props. This is the package's
 * public surface for infrastructure; the files it re-exports from are not (their paths may change
 * between versions). The example app (./example-stack.ts) imports from here only, as a user's app
 * imports `floe/cdk`.
 *
 *     import { KafkaToIceberg } from 'floe/cdk';
 */
export type { FloeAlarms } from './alarms.js';
export type { FloeTableAlarms } from './table-alarms.js';
export { KafkaToIceberg } from './kafka-to-iceberg.js';
export type {
  AggregateRouteProps,
  AlarmOptions,
  CatalogConfig,
  IngestMode,
  KafkaSource,
  KafkaSourceBase,
  KafkaToIcebergProps,
  MaintenanceOptions,
  MskSource,
  ProvisionedPollers,
  RecordAgeAlarmOptions,
  RestCatalog,
  S3TablesCatalog,
  SchemaPolicy,
  SelfManagedKafkaAuthentication,
  SelfManagedKafkaSource,
  StaleTableAlarmOptions,
  StartingPosition,
  TableRoute,
} from './props.js';
export type { MaintenanceTaskKey } from './maintenance-definition.js';
/** Iceberg's schema as a route's `schema` takes it (the spec's JSON form). */
export type { Schema } from '../functions/core/spec/types.js';
