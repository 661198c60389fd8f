/**
 * `floe` (the package's main entry): the core for code of one's own, beside the CLI and the construct.
 * Open a catalog, plan and read a scan with pruning, read a table with its live Kafka tail, commit
 * changes through the retry loop. The files it re-exports from are not public (their paths may change
 * between versions); what is here follows semantic versioning.
 *
 *     import { EmbeddedCatalog, LocalFileIO, parseExpression, parseIdentifier, planScan, readScanRows } from 'floe';
 */
export {
  type Catalog,
  type CreateTableRequest,
  formatIdentifier,
  type LoadedTable,
  parseIdentifier,
} from './catalog/catalog.js';
export { EmbeddedCatalog, type EmbeddedCatalogOptions } from './catalog/embedded-catalog.js';
export { RestCatalog, type RestCatalogOptions } from './catalog/rest/rest-catalog.js';
export { S3TablesCatalog, type S3TablesCatalogOptions } from './catalog/s3tables-catalog.js';
export * from './errors.js';
export type { FileIO } from './io/file-io.js';
export { LocalFileIO } from './io/local-file-io.js';
export { type ResolveFileIOOptions, resolveFileIO } from './io/resolve-file-io.js';
export { S3FileIO, type S3FileIOOptions } from './io/s3-file-io.js';
export { type CommitLock, type LockLease, noLock } from './lock/commit-lock.js';
export { DynamoDbLock, type DynamoDbLockOptions } from './lock/dynamodb-lock.js';
export {
  type LiveReport,
  type LiveTable,
  type ReadLiveTableOptions,
  readLiveTable,
} from './live/read-live-table.js';
export type { Expression, Literal } from './scan/expression.js';
export { type ParseExpressionOptions, parseExpression } from './scan/parse-expression.js';
export { type PlanScanOptions, planScan } from './scan/plan-scan.js';
export { type ReadScanOptions, readScan, readScanRows } from './scan/read-scan.js';
export type { FileScanTask, ScanFunnel, ScanPlan } from './scan/scan-plan.js';
export type { Row, Schema, Snapshot, TableIdentifier, TableMetadata } from './spec/types.js';
export {
  type CommitAction,
  type CommitEvent,
  type CommitOptions,
  type CommitResult,
  type CommitOutcome,
  commitAction,
  commitWithRetry,
  type RetryPolicy,
  retryPolicyFrom,
} from './table/commit-loop.js';
export type { Noop, Prepared, PreparedChange, Stale, TableAction } from './table/actions/table-action.js';
