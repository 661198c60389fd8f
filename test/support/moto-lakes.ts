/**
 * The two catalogs the exactly-once proofs run on, both on the moto endpoint: S3 Tables (a table bucket;
 * data and metadata under each table's warehouseLocation through S3FileIO) and the embedded catalog on
 * moto S3 (`s3://bucket/wh`). Each writer process gets its own catalog and lock objects, wrapped by its
 * {@link WriterProcess} when it has one, sharing only the SDK clients (and the DynamoDB request queue
 * that removes moto's race, see one-request-at-a-time.ts).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateTableBucketCommand, S3TablesClient } from '@aws-sdk/client-s3tables';
import type { Catalog } from '../../functions/core/catalog/catalog.js';
import { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import { S3TablesCatalog } from '../../functions/core/catalog/s3tables-catalog.js';
import type { FileIO } from '../../functions/core/io/file-io.js';
import { S3FileIO } from '../../functions/core/io/s3-file-io.js';
import type { CommitLock } from '../../functions/core/lock/commit-lock.js';
import { createLockTable, DynamoDbLock } from '../../functions/core/lock/dynamodb-lock.js';
import {
  createBucket,
  motoEndpoint,
  s3ClientForTests,
  TEST_CREDENTIALS,
  TEST_REGION,
  uniqueBucketName,
} from '../integration/moto.js';
import { oneRequestAtATime } from './one-request-at-a-time.js';
import type { WriterProcess } from './writer-process.js';

export type LakeKind = 's3tables' | 'embedded';

export interface LakeOptions {
  /** Lease of the DynamoDB commit lock. @default 30000 */
  leaseMs?: number;
  /** @default leaseMs / 3 */
  heartbeatMs?: number;
  /** S3 Tables: how long a pointer swap may take before its outcome is unknown. @default 30000 */
  commitTimeoutMs?: number;
}

/** A catalog plus a DynamoDB lock table on moto, handing out per-process objects. */
export interface MotoLake {
  readonly kind: LakeKind;
  /** Storage of every table in the lake (un-wrapped), for checks that read files directly. */
  readonly io: FileIO;
  /** A catalog as one writer process sees it (calls pass through `process` when given). */
  catalog(process?: WriterProcess): Catalog;
  /** A commit lock as one writer process sees it. */
  lock(process?: WriterProcess): CommitLock;
}

export function s3TablesClientForTests(): S3TablesClient {
  return new S3TablesClient({ endpoint: motoEndpoint(), region: TEST_REGION, credentials: TEST_CREDENTIALS });
}

export function dynamoClientForTests(): DynamoDBClient {
  return new DynamoDBClient({ endpoint: motoEndpoint(), region: TEST_REGION, credentials: TEST_CREDENTIALS });
}

/** A random lowercase suffix for names S3 Tables, S3 and DynamoDB all accept. */
export function uniqueSuffix(): string {
  return Math.random().toString(36).slice(2, 10);
}

/** Creates a table bucket `prefix-<random>` on moto and returns its ARN. */
export async function createTableBucketForTests(
  prefix: string,
  client = s3TablesClientForTests(),
): Promise<string> {
  const bucket = await client.send(new CreateTableBucketCommand({ name: `${prefix}-${uniqueSuffix()}` }));
  if (!bucket.arn) throw new Error('CreateTableBucket returned no ARN');
  return bucket.arn;
}

/** Creates a lake of the given kind on moto: a table bucket or an S3 bucket, and a lock table. */
export async function createMotoLake(kind: LakeKind, options: LakeOptions = {}): Promise<MotoLake> {
  const s3 = s3ClientForTests();
  const io = new S3FileIO({ client: s3 });
  const dynamo = oneRequestAtATime(dynamoClientForTests());
  const lockTable = `floe-locks-${uniqueSuffix()}`;
  await createLockTable(dynamo, lockTable);
  const leaseMs = options.leaseMs ?? 30_000;
  const lock = (process?: WriterProcess): CommitLock => {
    const real = new DynamoDbLock({
      client: dynamo,
      tableName: lockTable,
      leaseMs,
      heartbeatMs: options.heartbeatMs,
    });
    return process ? process.wrapLock(real) : real;
  };
  const scoped = (process?: WriterProcess) => (process ? process.wrapIO(io) : io);

  if (kind === 'embedded') {
    const warehouse = `s3://${await createBucket(uniqueBucketName('floe-eo'), s3)}/wh`;
    return {
      kind,
      io,
      lock,
      catalog: (process) => {
        const catalog = new EmbeddedCatalog({ warehouse, io: scoped(process) });
        return process ? process.wrapCatalog(catalog) : catalog;
      },
    };
  }

  const s3tables = s3TablesClientForTests();
  const tableBucketArn = await createTableBucketForTests('floe-eo', s3tables);
  return {
    kind,
    io,
    lock,
    catalog: (process) => {
      const catalog = new S3TablesCatalog({
        tableBucketArn,
        client: process ? process.wrapS3Tables(s3tables) : s3tables,
        io: scoped(process),
        commitTimeoutMs: options.commitTimeoutMs,
      });
      return process ? process.wrapCatalog(catalog) : catalog;
    },
  };
}
