/**
 * A writer stalls while holding the commit lock (a GC pause, a frozen sandbox: no heartbeat either),
 * its lease lapses, another writer takes the lock over and commits; then the stalled writer resumes and
 * tries its swap. The swap must fail — the catalog's swap is conditional, the lock alone guarantees
 * nothing — and the table must end up with every batch exactly once, in a linear history that still
 * holds the other writer's snapshot.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CommitFailedError } from '../../../functions/core/errors.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { TableIdentifier } from '../../../functions/core/spec/types.js';
import { esmEvent, expectedKeys, type OffsetRange } from '../../support/esm-batches.js';
import { expectExactlyOnce } from '../../support/exactly-once-checks.js';
import { createMotoLake, type LakeKind, type MotoLake, uniqueSuffix } from '../../support/moto-lakes.js';
import {
  type CallSite,
  createGate,
  createSignal,
  ioCall,
  s3TablesCommand,
  WriterProcess,
} from '../../support/writer-process.js';
import { describeWithMoto, resetMoto } from '../moto.js';
import { deliver, settle } from './deliver.js';

const LEASE_MS = 1_000;
const HEARTBEAT_MS = 250;

const BATCH_A: OffsetRange[] = [{ partition: 0, first: 0, count: 4 }];
/** What the stalled writer delivers. */
const STALLED_BATCH: OffsetRange[] = [{ partition: 0, first: 4, count: 3 }];
/** What the other writer delivers: the same batch again (the ESM redelivered it) or another partition's. */
const RIVAL_BATCHES: Record<string, OffsetRange[]> = {
  'the same batch': STALLED_BATCH,
  'another partition’s batch': [{ partition: 1, first: 0, count: 3 }],
};

interface StallPoint {
  name: string;
  matches(kind: LakeKind, location: string): (site: CallSite) => boolean;
  /** The error the resumed call must fail with. */
  refusal(kind: LakeKind): (error: unknown) => boolean;
}

const STALL_POINTS: StallPoint[] = [
  {
    name: 'just before its pointer swap',
    matches: (kind, location) =>
      kind === 's3tables'
        ? s3TablesCommand('UpdateTableMetadataLocation')
        : ioCall(
            'writeIfAbsent',
            (l) => l.startsWith(`${location}/metadata/`) && l.endsWith('.metadata.json'),
          ),
    // S3 Tables: the version token it read is stale; embedded: the next metadata version exists already
    refusal: (kind) => (error) =>
      (error as Error).name === (kind === 's3tables' ? 'ConflictException' : 'AlreadyExistsError'),
  },
  {
    name: 'after preparing its snapshot, before the catalog commit',
    matches: () => (site) => site.kind === 'catalog' && site.method === 'commitTable',
    // the requirement on main's head no longer holds
    refusal: () => (error) =>
      error instanceof CommitFailedError && /assert-ref-snapshot-id/.test(error.message),
  },
];

describeWithMoto('exactly once when a stalled writer outlives its lease', () => {
  beforeAll(async () => {
    await resetMoto();
  });

  for (const kind of ['s3tables', 'embedded'] as const) {
    describe(kind, () => {
      let lake: MotoLake;
      beforeAll(async () => {
        lake = await createMotoLake(kind, { leaseMs: LEASE_MS, heartbeatMs: HEARTBEAT_MS });
      });

      for (const stall of STALL_POINTS) {
        for (const [rivalName, rivalBatch] of Object.entries(RIVAL_BATCHES)) {
          it(`stalled ${stall.name}: its swap fails after ${rivalName} was committed by another writer`, async () => {
            // Prepare: a table holding batch A; a writer that freezes at the stall point
            const id: TableIdentifier = { namespace: ['lapsed'], name: `t_${uniqueSuffix()}` };
            await deliver(lake, id, esmEvent(BATCH_A));
            const location = (await lake.catalog().loadTable(id)).metadata.location;
            const gate = createGate();
            const frozen = createSignal();
            let resumed: { ok: true } | { ok: false; error: unknown } | undefined;
            const stalled = new WriterProcess([
              {
                step: 'stall',
                matches: stall.matches(kind, location),
                act: async (call) => {
                  call.process.freeze();
                  frozen.signal();
                  await gate.opened;
                  try {
                    const answer = await call.proceed();
                    resumed = { ok: true };
                    return answer;
                  } catch (error) {
                    resumed = { ok: false, error };
                    throw error;
                  }
                },
              },
            ]);
            const rival = new WriterProcess();

            // Act: stall; the rival waits out the lease and commits; the stalled writer resumes
            const stalledDelivery = settle(deliver(lake, id, esmEvent(STALLED_BATCH), stalled));
            await frozen.reached;
            const rivalStarted = Date.now();
            const rivalReport = await deliver(lake, id, esmEvent(rivalBatch), rival);
            const rivalMs = Date.now() - rivalStarted;
            const rivalSnapshot = currentSnapshot((await lake.catalog().loadTable(id)).metadata)!;
            gate.open();
            const stalledResult = await stalledDelivery;

            // Assess
            const table = await lake.catalog().loadTable(id);
            const expected = [
              ...expectedKeys(BATCH_A),
              ...expectedKeys(STALLED_BATCH),
              ...(rivalBatch === STALLED_BATCH ? [] : expectedKeys(rivalBatch)),
            ];
            await expectExactlyOnce(table, expected, { deleted: [...stalled.deleted, ...rival.deleted] });
            expect(rivalMs, 'the rival had to wait for the lapsed lease').toBeGreaterThanOrEqual(
              LEASE_MS / 2,
            );
            expect(rivalReport.tables[0].status).toBe('committed');
            expect(resumed?.ok, 'the resumed swap must not land').toBe(false);
            expect(resumed && !resumed.ok && stall.refusal(kind)(resumed.error), String(resumed)).toBe(true);
            expect(stalledResult.error).toBeUndefined();
            // the rival's snapshot was not overwritten: it is in the history, and every later one builds on it
            expect(table.metadata.snapshots.map((s) => s['snapshot-id'])).toContain(
              rivalSnapshot['snapshot-id'],
            );
            if (rivalBatch === STALLED_BATCH) {
              expect(stalledResult.report?.tables[0].status).toBe('already-committed');
              expect(currentSnapshot(table.metadata)?.['snapshot-id']).toBe(rivalSnapshot['snapshot-id']);
            } else {
              expect(stalledResult.report?.tables[0]).toMatchObject({ status: 'committed', conflicts: 1 });
              expect(currentSnapshot(table.metadata)?.['parent-snapshot-id']).toBe(
                rivalSnapshot['snapshot-id'],
              );
            }
          });
        }
      }
    });
  }
});
