/**
 * Section 2: every request one batch's commit makes, counted at the FileIO, the catalog and (on moto)
 * the HTTP level, against the minimum: one PUT per data or delete file, one manifest per content type,
 * one manifest list, one metadata.json, one pointer swap, one metadata read, two lock operations
 * (commit-minimum.ts, which also says why each request above it is made). The
 * measured batch lands on a table that already has a snapshot (the steady state), so the parent's
 * manifest list is part of it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableBucketCommand } from '@aws-sdk/client-s3tables';
import type { Catalog } from '../../functions/core/catalog/catalog.js';
import { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import { S3TablesCatalog } from '../../functions/core/catalog/s3tables-catalog.js';
import { ingestEvent } from '../../functions/core/ingest/ingest-event.js';
import { parseRoutes, type TableRoute } from '../../functions/core/routing/routes.js';
import { S3FileIO } from '../../functions/core/io/s3-file-io.js';
import type { CommitLock } from '../../functions/core/lock/commit-lock.js';
import { createLockTable, DynamoDbLock } from '../../functions/core/lock/dynamodb-lock.js';
import { currentSnapshot } from '../../functions/core/spec/metadata.js';
import { makeCdcMessages } from './cdc-batch.js';
import {
  classifyLockRequest,
  countingCatalog,
  countingFileIO,
  countSdkRequests,
  kindOf,
  Tally,
} from './counting.js';
import { type AboveMinimum, aboveMinimum, type CatalogKind, minimumBreakdown } from './commit-minimum.js';
import { type MotoServer, oneRequestAtATime } from './moto-process.js';
import {
  makeOrderMessages,
  makeOrdersEvent,
  type OrderMessage,
  ORDERS_TOPIC,
  readOrdersSchema,
} from './orders-batch.js';

export interface CommitRequests {
  scenario: string;
  mode: 'append' | 'cdc';
  /** 'measured', or why not (CDC not built yet, moto missing). */
  status: string;
  /** Requests the batch made: HTTP requests on moto (S3 + S3 Tables + DynamoDB), FileIO calls locally. */
  requests: number;
  minimum_requests: number;
  /** Each request beyond the minimum (commit-minimum.ts), with why floe makes it. */
  above_minimum: AboveMinimum[];
  data_files: number;
  delete_files: number;
  /** Request counts by operation and object kind. */
  breakdown: Record<string, number>;
  fileio_calls: Record<string, number>;
  catalog_calls: Record<string, number>;
}

interface Scenario {
  name: string;
  catalog: Catalog;
  lock?: CommitLock;
  /** Counts what `requests` reports (HTTP on moto; FileIO calls locally). */
  requests: Tally;
  fileio: Tally;
  catalogCalls: Tally;
  /** Which minimum applies (commit-minimum.ts). */
  kind: CatalogKind;
  cleanup(): Promise<void>;
}

const BATCH_RECORDS = 1_000;
const PARTITIONS = 3;

function route(mode: 'append' | 'debezium'): TableRoute[] {
  return parseRoutes([
    {
      table: mode === 'append' ? 'bench.orders' : 'bench.orders_cdc',
      topics: [ORDERS_TOPIC],
      schema: readOrdersSchema(),
      ...(mode === 'debezium' ? { mode, identifierColumns: ['order_id'] } : {}),
    },
  ]);
}

async function measure(
  scenario: Scenario,
  mode: 'append' | 'cdc',
  prime: OrderMessage[],
  batch: OrderMessage[],
): Promise<CommitRequests> {
  const routes = route(mode === 'append' ? 'append' : 'debezium');
  const options = { catalog: scenario.catalog, lock: scenario.lock, routes };
  await ingestEvent(options, makeOrdersEvent(prime, 0));
  const firstOffset = Math.max(...prime.map((m) => m.index)) + 1;
  const event = makeOrdersEvent(batch, firstOffset);
  for (const tally of [scenario.requests, scenario.fileio, scenario.catalogCalls]) tally.clear();
  const report = await ingestEvent(options, event);
  const counted = {
    requests: scenario.requests.toObject(),
    total: scenario.requests.total,
    fileio: scenario.fileio.toObject(),
    catalog: scenario.catalogCalls.toObject(),
  };
  const table = report.tables[0];
  const loaded = await scenario.catalog.loadTable(routes[0].table);
  const summary: Record<string, string> = currentSnapshot(loaded.metadata)?.summary ?? {};
  const dataFiles = Number(summary['added-data-files'] ?? 0);
  const deleteFiles = Number(summary['added-delete-files'] ?? 0);
  const minimum = minimumBreakdown(scenario.kind, dataFiles, deleteFiles);
  let status = 'measured';
  if (table?.status !== 'committed' || table.deadLettered > 0) {
    status = `not measured: the batch ${table?.status}, ${table?.deadLettered} dead letters`;
  }
  if (mode === 'cdc' && deleteFiles === 0) {
    status = 'pending: debezium mode does not write equality deletes yet (CDC is being built)';
  }
  return {
    scenario: scenario.name,
    mode,
    status,
    requests: counted.total,
    minimum_requests: Object.values(minimum).reduce((a, b) => a + b, 0),
    above_minimum: aboveMinimum(counted.requests, minimum),
    data_files: dataFiles,
    delete_files: deleteFiles,
    breakdown: counted.requests,
    fileio_calls: counted.fileio,
    catalog_calls: counted.catalog,
  };
}

async function localScenario(): Promise<Scenario> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-requests-'));
  const requests = new Tally();
  const fileio = new Tally();
  const catalogCalls = new Tally();
  // Locally the FileIO calls are the requests: count them into both tallies.
  const io = countingFileIO(countingFileIO(new EmbeddedCatalog({ warehouse: dir }).io, fileio), requests);
  return {
    name: 'embedded catalog, local disk, no lock',
    kind: 'local',
    catalog: countingCatalog(new EmbeddedCatalog({ warehouse: dir, io }), catalogCalls),
    requests,
    fileio,
    catalogCalls,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

const classifyS3 = (name: string, input: unknown): string => {
  const key = (input as { Key?: string }).Key;
  return key === undefined ? name : `${name} ${kindOf(key)}`;
};

async function motoLock(moto: MotoServer, requests: Tally): Promise<CommitLock> {
  const dynamodb = moto.dynamodb();
  const tableName = `floe-locks-${Math.random().toString(36).slice(2, 8)}`;
  await createLockTable(dynamodb, tableName);
  countSdkRequests(dynamodb, 'dynamodb.', requests, classifyLockRequest);
  return new DynamoDbLock({ client: oneRequestAtATime(dynamodb), tableName });
}

async function motoEmbeddedScenario(moto: MotoServer): Promise<Scenario> {
  const requests = new Tally();
  const fileio = new Tally();
  const catalogCalls = new Tally();
  const s3 = moto.s3();
  countSdkRequests(s3, 's3.', requests, classifyS3);
  const bucket = await moto.createBucket('floe-bench');
  const io = countingFileIO(new S3FileIO({ client: s3 }), fileio);
  return {
    name: 'embedded catalog on S3 + DynamoDB lock (moto)',
    kind: 'embedded-s3',
    catalog: countingCatalog(new EmbeddedCatalog({ warehouse: `s3://${bucket}/wh`, io }), catalogCalls),
    lock: await motoLock(moto, requests),
    requests,
    fileio,
    catalogCalls,
    cleanup: async () => {},
  };
}

async function motoS3TablesScenario(moto: MotoServer): Promise<Scenario> {
  const requests = new Tally();
  const fileio = new Tally();
  const catalogCalls = new Tally();
  const s3 = moto.s3();
  countSdkRequests(s3, 's3.', requests, classifyS3);
  const s3tables = moto.s3tables();
  const bucket = await s3tables.send(
    new CreateTableBucketCommand({ name: `floe-bench-${Math.random().toString(36).slice(2, 8)}` }),
  );
  if (!bucket.arn) throw new Error('CreateTableBucket returned no ARN');
  countSdkRequests(s3tables, 's3tables.', requests);
  const io = countingFileIO(new S3FileIO({ client: s3 }), fileio);
  const catalog = new S3TablesCatalog({ tableBucketArn: bucket.arn, client: s3tables, io });
  return {
    name: 'S3 Tables catalog + DynamoDB lock (moto)',
    kind: 's3tables',
    catalog: countingCatalog(catalog, catalogCalls),
    lock: await motoLock(moto, requests),
    requests,
    fileio,
    catalogCalls,
    cleanup: async () => {},
  };
}

function failed(name: string, mode: 'append' | 'cdc', error: unknown): CommitRequests {
  return {
    scenario: name,
    mode,
    status: `failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300),
    requests: Number.NaN,
    minimum_requests: Number.NaN,
    above_minimum: [],
    data_files: 0,
    delete_files: 0,
    breakdown: {},
    fileio_calls: {},
    catalog_calls: {},
  };
}

/** Counts the requests of one append commit and one CDC commit in every scenario available. */
export async function runRequestsPerCommit(
  moto: MotoServer | undefined,
  progress: (line: string) => void,
): Promise<CommitRequests[]> {
  const appendPrime = makeOrderMessages({ records: BATCH_RECORDS, partitions: PARTITIONS, seed: 3 });
  const appendBatch = makeOrderMessages({
    records: BATCH_RECORDS,
    partitions: PARTITIONS,
    seed: 4,
    firstOrderId: 2_000_000,
  });
  const cdc = makeCdcMessages(BATCH_RECORDS, PARTITIONS);
  const makers: [string, () => Promise<Scenario>][] = [['embedded, local', localScenario]];
  if (moto) {
    makers.push(['embedded on S3 (moto)', () => motoEmbeddedScenario(moto)]);
    makers.push(['S3 Tables (moto)', () => motoS3TablesScenario(moto)]);
  }
  const out: CommitRequests[] = [];
  for (const [label, make] of makers) {
    for (const mode of ['append', 'cdc'] as const) {
      progress(`requests per commit: ${label}, ${mode}`);
      let scenario: Scenario | undefined;
      try {
        scenario = await make();
        out.push(
          mode === 'append'
            ? await measure(scenario, mode, appendPrime, appendBatch)
            : await measure(scenario, mode, cdc.creates, cdc.changes),
        );
      } catch (error) {
        out.push(failed(scenario?.name ?? label, mode, error));
      } finally {
        await scenario?.cleanup();
      }
    }
  }
  return out;
}
