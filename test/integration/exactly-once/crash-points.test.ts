/**
 * Crash points: a writer is killed at one step of ingesting a batch (see writer-process.ts: a kill runs
 * no cleanup, releases no lock), then the ESM redelivers the same batch to a fresh writer. At every step,
 * on S3 Tables and on the embedded catalog (both on moto, both through the DynamoDB lock), the table
 * ends up with exactly one copy of the batch: floe's reader and DuckDB over the live DataFiles agree,
 * the history is linear, the batch id appears once, and no file the table needs is gone.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Catalog } from '../../../functions/core/catalog/catalog.js';
import type { TableIdentifier } from '../../../functions/core/spec/types.js';
import { esmEvent, expectedKeys, type OffsetRange } from '../../support/esm-batches.js';
import { expectExactlyOnce, historyProblems, repeatedBatchIds } from '../../support/exactly-once-checks.js';
import { createMotoLake, type LakeKind, type MotoLake, uniqueSuffix } from '../../support/moto-lakes.js';
import {
  type CallSite,
  crashAfter,
  crashBefore,
  type FaultRule,
  type InterceptedCall,
  ioCall,
  s3TablesCommand,
  timeoutAfterLanding,
  WriterProcess,
} from '../../support/writer-process.js';
import { describeWithMoto, resetMoto } from '../moto.js';
import { deliver } from './deliver.js';

const LEASE_MS = 1_200;
const HEARTBEAT_MS = 300;
/** S3 Tables swaps that have not answered by then are abandoned as "unknown". */
const COMMIT_TIMEOUT_MS = 800;

/** Batch A is committed before the crash; batch B is the one the crashing writer and the replay deliver. */
const BATCH_A: OffsetRange[] = [
  { partition: 0, first: 0, count: 4 },
  { partition: 1, first: 0, count: 4 },
];
const BATCH_B: OffsetRange[] = [
  { partition: 0, first: 4, count: 3 },
  { partition: 1, first: 4, count: 3 },
];
/** Offsets of batch B whose value is not JSON (for the dead-letter crash point). */
const BAD_IN_B = [{ partition: 1, offset: 5 }];

interface CrashContext {
  /** Location of the table under test (undefined while it does not exist yet). */
  location?: string;
}

interface CrashCase {
  step: string;
  only?: LakeKind;
  /** The table does not exist before the crashing delivery (it is created by it). */
  newTable?: boolean;
  /** Batch B carries a record that goes to the dead-letter table. */
  deadLetter?: boolean;
  /** The crash happens while the writer holds the commit lock: the replay must wait for its lease. */
  holdsLock: boolean;
  /** What the replay finds: the batch still to commit, or already in the table. */
  replay: 'committed' | 'nothing-to-commit';
  rules(ctx: CrashContext): FaultRule[];
}

const within = (ctx: CrashContext) => (location: string) =>
  ctx.location !== undefined && location.startsWith(`${ctx.location}/`);
const dataFile = (ctx: CrashContext) => (l: string) => within(ctx)(l) && /\/data\/.*\.parquet$/.test(l);
const manifest = (ctx: CrashContext) => (l: string) =>
  within(ctx)(l) && /\/metadata\/[^/]+-m\d+\.avro$/.test(l);
const manifestList = (ctx: CrashContext) => (l: string) =>
  within(ctx)(l) && /\/metadata\/snap-[^/]+\.avro$/.test(l);
const metadataJson = (ctx: CrashContext) => (l: string) => within(ctx)(l) && l.endsWith('.metadata.json');
const mainTable = (site: CallSite, method: string) =>
  site.kind === 'catalog' && site.method === method && !site.table.endsWith('__dlq');

const CASES: CrashCase[] = [
  {
    step: 'creating the table, after its first metadata exists',
    newTable: true,
    holdsLock: false,
    replay: 'committed',
    rules: () => [
      {
        step: 'creating the table, after its first metadata exists',
        matches: (s) => mainTable(s, 'createTable'),
        act: crashAfter,
      },
    ],
  },
  {
    step: 'creating the S3 Tables table, after CreateTable and before its metadata pointer',
    only: 's3tables',
    newTable: true,
    holdsLock: false,
    replay: 'committed',
    rules: () => [
      {
        step: 'creating the S3 Tables table, after CreateTable and before its metadata pointer',
        matches: s3TablesCommand('CreateTable'),
        act: crashAfter,
      },
    ],
  },
  {
    step: 'after the first DataFile',
    holdsLock: false,
    replay: 'committed',
    rules: (ctx) => [
      { step: 'after the first DataFile', matches: ioCall('write', dataFile(ctx)), act: crashAfter },
    ],
  },
  {
    step: 'after the DataFiles (the second and last)',
    holdsLock: false,
    replay: 'committed',
    rules: (ctx) => [
      {
        step: 'after the DataFiles (the second and last)',
        matches: ioCall('write', dataFile(ctx)),
        nth: 2,
        act: crashAfter,
      },
    ],
  },
  {
    step: 'after the dead letters were committed, before the table’s own DataFiles',
    deadLetter: true,
    holdsLock: false,
    replay: 'committed',
    rules: (ctx) => [
      {
        step: 'after the dead letters were committed, before the table’s own DataFiles',
        matches: ioCall('write', dataFile(ctx)),
        act: crashBefore,
      },
    ],
  },
  {
    step: 'holding the lock, before loading the base',
    holdsLock: true,
    replay: 'committed',
    rules: () => [
      {
        step: 'holding the lock, before loading the base',
        matches: (s) => s.kind === 'lock' && s.method === 'acquire',
        act: crashAfter,
      },
    ],
  },
  {
    step: 'after the manifest',
    holdsLock: true,
    replay: 'committed',
    rules: (ctx) => [
      { step: 'after the manifest', matches: ioCall('write', manifest(ctx)), act: crashAfter },
    ],
  },
  {
    step: 'after the manifest list',
    holdsLock: true,
    replay: 'committed',
    rules: (ctx) => [
      { step: 'after the manifest list', matches: ioCall('write', manifestList(ctx)), act: crashAfter },
    ],
  },
  {
    step: 'after the new metadata.json, before the pointer swap',
    only: 's3tables',
    holdsLock: true,
    replay: 'committed',
    rules: (ctx) => [
      {
        step: 'after the new metadata.json, before the pointer swap',
        matches: ioCall('writeIfAbsent', metadataJson(ctx)),
        act: crashAfter,
      },
    ],
  },
  {
    step: 'before the next metadata.json (the embedded commit point)',
    only: 'embedded',
    holdsLock: true,
    replay: 'committed',
    rules: (ctx) => [
      {
        step: 'before the next metadata.json (the embedded commit point)',
        matches: ioCall('writeIfAbsent', metadataJson(ctx)),
        act: crashBefore,
      },
    ],
  },
  {
    step: 'after the next metadata.json (the embedded commit point), before the version hint',
    only: 'embedded',
    holdsLock: true,
    replay: 'nothing-to-commit',
    rules: (ctx) => [
      {
        step: 'after the next metadata.json (the embedded commit point), before the version hint',
        matches: ioCall('writeIfAbsent', metadataJson(ctx)),
        act: crashAfter,
      },
    ],
  },
  {
    step: 'after the pointer swap (UpdateTableMetadataLocation), before its answer',
    only: 's3tables',
    holdsLock: true,
    replay: 'nothing-to-commit',
    rules: () => [
      {
        step: 'after the pointer swap (UpdateTableMetadataLocation), before its answer',
        matches: s3TablesCommand('UpdateTableMetadataLocation'),
        act: crashAfter,
      },
    ],
  },
  {
    step: 'swap timed out after landing, killed while checking the pointer',
    only: 's3tables',
    holdsLock: true,
    replay: 'nothing-to-commit',
    rules: () => {
      let swapped = false;
      return [
        {
          step: 'swap timed out after landing',
          matches: s3TablesCommand('UpdateTableMetadataLocation'),
          act: (call: InterceptedCall) => {
            swapped = true;
            return timeoutAfterLanding(call);
          },
        },
        {
          step: 'swap timed out after landing, killed while checking the pointer',
          matches: (s) => swapped && s3TablesCommand('GetTableMetadataLocation')(s),
          act: crashBefore,
        },
      ];
    },
  },
  {
    step: 'after the catalog commit returned, before the handler returns',
    holdsLock: true,
    replay: 'nothing-to-commit',
    rules: () => [
      {
        step: 'after the catalog commit returned, before the handler returns',
        matches: (s) => mainTable(s, 'commitTable'),
        act: crashAfter,
      },
    ],
  },
  {
    step: 'after the lock was released, before the handler returns',
    holdsLock: false,
    replay: 'nothing-to-commit',
    rules: () => [
      {
        step: 'after the lock was released, before the handler returns',
        matches: (s) => s.kind === 'lock' && s.method === 'release',
        act: crashAfter,
      },
    ],
  },
];

const ingest = (lake: MotoLake, id: TableIdentifier, event: unknown, process?: WriterProcess) =>
  deliver(lake, id, event, process);

const load = (catalog: Catalog, id: TableIdentifier) => catalog.loadTable(id);

describeWithMoto('exactly once across crash points', () => {
  beforeAll(async () => {
    await resetMoto();
  });

  for (const kind of ['s3tables', 'embedded'] as const) {
    describe(kind, () => {
      let lake: MotoLake;
      beforeAll(async () => {
        lake = await createMotoLake(kind, {
          leaseMs: LEASE_MS,
          heartbeatMs: HEARTBEAT_MS,
          commitTimeoutMs: COMMIT_TIMEOUT_MS,
        });
      });

      for (const c of CASES.filter((x) => x.only === undefined || x.only === kind)) {
        it(`killed ${c.step}: the replay leaves exactly one copy`, async () => {
          // Prepare: a table holding batch A (unless the crash is in its creation), a writer doomed at the step
          const id = { namespace: ['crash'], name: `t_${uniqueSuffix()}` };
          const options = c.deadLetter ? { badOffsets: BAD_IN_B } : {};
          const eventB = esmEvent(BATCH_B, options);
          const ctx: CrashContext = {};
          if (!c.newTable) {
            await ingest(lake, id, esmEvent(BATCH_A));
            ctx.location = (await load(lake.catalog(), id)).metadata.location;
          }
          const doomed = new WriterProcess(c.rules(ctx));

          // Act: the doomed delivery (whatever it answers, a killed invocation's answer never reaches the
          // ESM), then the ESM's redelivery of the same batch to a fresh writer
          const answer = await ingest(lake, id, eventB, doomed).then(
            (report) => `success ${JSON.stringify(report.tables.map((t) => t.status))}`,
            (error: unknown) => String(error),
          );
          const replayer = new WriterProcess();
          const started = Date.now();
          const replay = await ingest(lake, id, eventB, replayer);
          const replayMs = Date.now() - started;

          // Assess: the crash happened where intended, and one copy of everything is in the table
          expect(doomed.crashed?.step, `the writer was not killed; it answered ${answer}`).toBe(c.step);
          expect(replay.tables[0].status).toBe(c.replay);
          if (c.replay === 'committed') {
            expect(replay.tables[0].dataFiles).toBe(2);
            // the dead writer's lease was never released: the replay had to wait for it to lapse
            if (c.holdsLock) expect(replayMs).toBeGreaterThanOrEqual(LEASE_MS / 2);
          }
          const table = await load(lake.catalog(), id);
          const expected = [...(c.newTable ? [] : expectedKeys(BATCH_A)), ...expectedKeys(BATCH_B, options)];
          await expectExactlyOnce(table, expected, { deleted: [...doomed.deleted, ...replayer.deleted] });
          if (c.deadLetter) {
            const dlq = await load(lake.catalog(), { namespace: id.namespace, name: `${id.name}__dlq` });
            expect(dlq.metadata.snapshots).toHaveLength(1);
            expect(dlq.metadata.snapshots[0].summary['total-records']).toBe(String(BAD_IN_B.length));
            expect(historyProblems(dlq.metadata)).toEqual([]);
            expect(repeatedBatchIds(dlq.metadata)).toEqual([]);
          }
        });
      }
    });
  }
});
