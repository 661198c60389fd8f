/**
 * Unknown outcomes: the pointer swap's answer is lost (a timeout after it landed), or the request is lost
 * (a timeout before it landed), or it arrives late (the caller gave up while it was still on the wire).
 * On S3 Tables the catalog's own timeout fires (its abort signal); on the embedded catalog the conditional
 * PutObject of the next metadata.json fails with a transient error. Every way, the batch ends up in the
 * table exactly once and no file the table needs is deleted — also when the writer gives up, when reading
 * the table back fails, and when the catalog answers a landed commit with an error it does not classify.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CommitStateUnknownError, LakeError, TransientIOError } from '../../../functions/core/errors.js';
import type { TableIdentifier } from '../../../functions/core/spec/types.js';
import type { CommitEvent } from '../../../functions/core/table/commit-loop.js';
import { esmEvent, expectedKeys, type OffsetRange } from '../../support/esm-batches.js';
import { expectExactlyOnce } from '../../support/exactly-once-checks.js';
import { createMotoLake, type LakeKind, type MotoLake, uniqueSuffix } from '../../support/moto-lakes.js';
import {
  type CallSite,
  createGate,
  deliverLate,
  type FaultRule,
  failAfter,
  failBefore,
  type InterceptedCall,
  ioCall,
  runBefore,
  s3TablesCommand,
  timeoutAfterLanding,
  timeoutBeforeLanding,
  WriterProcess,
} from '../../support/writer-process.js';
import { describeWithMoto, resetMoto } from '../moto.js';
import { deliver, settle } from './deliver.js';

const COMMIT_TIMEOUT_MS = 500;
const BATCH_A: OffsetRange[] = [{ partition: 0, first: 0, count: 4 }];
const BATCH_B: OffsetRange[] = [
  { partition: 0, first: 4, count: 3 },
  { partition: 1, first: 0, count: 3 },
];
const EXPECTED = [...expectedKeys(BATCH_A), ...expectedKeys(BATCH_B)];

/** The faults of one catalog's commit point. */
interface SwapFaults {
  /** The pointer swap: S3 Tables' UpdateTableMetadataLocation, the embedded catalog's next metadata.json. */
  swap(location: string): (site: CallSite) => boolean;
  /** A read that learns where the pointer is (to check a swap, or to load the table). */
  pointerRead(location: string): (site: CallSite) => boolean;
  timeoutAfterLanding(call: InterceptedCall): Promise<unknown>;
  timeoutBeforeLanding(call: InterceptedCall): Promise<unknown>;
  /** The caller's timeout for calls with no abort signal of their own (undefined: the signal fires). */
  lateTimeout?: () => Error;
  /** The name of the error a late swap must be refused with. */
  staleSwapError: string;
}

const ioTimeout = () => new TransientIOError('PutObject timed out (injected)');
const networkTimeout = () => Object.assign(new Error('socket hang up (injected)'), { name: 'TimeoutError' });
const isMetadataJson = (location: string) => (l: string) =>
  l.startsWith(`${location}/metadata/`) && l.endsWith('.metadata.json');

const FAULTS: Record<LakeKind, SwapFaults> = {
  s3tables: {
    swap: () => s3TablesCommand('UpdateTableMetadataLocation'),
    pointerRead: () => s3TablesCommand('GetTableMetadataLocation'),
    timeoutAfterLanding,
    timeoutBeforeLanding,
    staleSwapError: 'ConflictException',
  },
  embedded: {
    swap: (location) => ioCall('writeIfAbsent', isMetadataJson(location)),
    pointerRead: (location) => ioCall('read', (l) => l === `${location}/metadata/version-hint.text`),
    timeoutAfterLanding: failAfter(ioTimeout),
    timeoutBeforeLanding: failBefore(ioTimeout),
    lateTimeout: ioTimeout,
    staleSwapError: 'AlreadyExistsError',
  },
};

describeWithMoto('exactly once through unknown commit outcomes', () => {
  beforeAll(async () => {
    await resetMoto();
  });

  for (const kind of ['s3tables', 'embedded'] as const) {
    describe(kind, () => {
      const faults = FAULTS[kind];
      let lake: MotoLake;

      beforeAll(async () => {
        lake = await createMotoLake(kind, { leaseMs: 5_000, commitTimeoutMs: COMMIT_TIMEOUT_MS });
      });

      /** A table holding batch A; returns its id and location. */
      async function seededTable(properties?: Record<string, string>) {
        const id: TableIdentifier = { namespace: ['unknown'], name: `t_${uniqueSuffix()}` };
        await deliver(lake, id, esmEvent(BATCH_A), undefined, { properties });
        return { id, location: (await lake.catalog().loadTable(id)).metadata.location };
      }

      async function expectOneCopy(id: TableIdentifier, ...writers: WriterProcess[]) {
        const table = await lake.catalog().loadTable(id);
        await expectExactlyOnce(table, EXPECTED, { deleted: writers.flatMap((w) => w.deleted) });
        return table;
      }

      it('a swap that timed out after landing counts as committed, once', async () => {
        // Prepare
        const { id, location } = await seededTable();
        const writer = new WriterProcess([
          { step: 'swap answer lost', matches: faults.swap(location), act: faults.timeoutAfterLanding },
        ]);
        const events: CommitEvent[] = [];

        // Act
        const report = await deliver(lake, id, esmEvent(BATCH_B), writer, { events });

        // Assess
        const table = await expectOneCopy(id, writer);
        expect(writer.hitsOf('swap answer lost')).toBe(1);
        expect(report.tables[0]).toMatchObject({ status: 'committed', attempts: 1 });
        expect(table.metadata.snapshots).toHaveLength(2);
      });

      it('a swap that timed out before landing is retried and lands once', async () => {
        // Prepare
        const { id, location } = await seededTable();
        const writer = new WriterProcess([
          { step: 'swap request lost', matches: faults.swap(location), act: faults.timeoutBeforeLanding },
        ]);
        const events: CommitEvent[] = [];

        // Act
        const report = await deliver(lake, id, esmEvent(BATCH_B), writer, { events });

        // Assess
        const table = await expectOneCopy(id, writer);
        expect(report.tables[0]).toMatchObject({ status: 'committed', attempts: 2, unknownOutcomes: 1 });
        expect(events).toContainEqual(
          expect.objectContaining({ type: 'unknown', attempt: 1, landed: false }),
        );
        expect(table.metadata.snapshots).toHaveLength(2);
      });

      it('a swap that timed out after landing, when the table cannot be read back, keeps its files', async () => {
        // Prepare: the swap lands, its answer is lost, and the next reads of the pointer fail too
        const { id, location } = await seededTable();
        let swapped = false;
        const rules: FaultRule[] = [
          {
            step: 'swap answer lost',
            matches: faults.swap(location),
            act: (call) => {
              swapped = true;
              return faults.timeoutAfterLanding(call);
            },
          },
          ...[1, 2].map(
            (nth): FaultRule => ({
              step: 'pointer read fails',
              matches: (site) => swapped && faults.pointerRead(location)(site),
              nth,
              act: failBefore(kind === 's3tables' ? networkTimeout : ioTimeout),
            }),
          ),
        ];
        const writer = new WriterProcess(rules);
        const events: CommitEvent[] = [];

        // Act: the writer fails the batch; the ESM redelivers it
        const first = await settle(deliver(lake, id, esmEvent(BATCH_B), writer, { events }));
        const replayer = new WriterProcess();
        const replay = await deliver(lake, id, esmEvent(BATCH_B), replayer);

        // Assess
        await expectOneCopy(id, writer, replayer);
        expect(first.error, 'the outcome was never settled, the batch must fail').toBeInstanceOf(LakeError);
        expect((first.error as LakeError).retryable).toBe(true);
        expect(replay.tables[0].status).toBe('nothing-to-commit');
      });

      it('a timed-out swap that arrives after the retry landed is refused', async () => {
        // Prepare
        const { id, location } = await seededTable();
        const gate = createGate();
        const late = deliverLate(gate.opened, faults.lateTimeout);
        const writer = new WriterProcess([
          { step: 'swap delayed', matches: faults.swap(location), act: (call) => late.act(call) },
        ]);

        // Act: the retry lands first; then the first request arrives
        const report = await deliver(lake, id, esmEvent(BATCH_B), writer);
        gate.open();
        const outcome = await late.delivered;

        // Assess
        const table = await expectOneCopy(id, writer);
        expect(report.tables[0]).toMatchObject({ status: 'committed', attempts: 2 });
        expect(outcome.ok).toBe(false);
        expect(outcome.ok ? undefined : (outcome.error as Error).name).toBe(faults.staleSwapError);
        expect(table.metadata.snapshots).toHaveLength(2);
      });

      it('a timed-out swap that lands just before the retry swaps is recognised as this writer’s commit', async () => {
        // Prepare: attempt 1's request is held back; it lands right before attempt 2's swap is sent
        const { id, location } = await seededTable();
        const gate = createGate();
        const late = deliverLate(gate.opened, faults.lateTimeout);
        const writer = new WriterProcess([
          { step: 'swap delayed', matches: faults.swap(location), act: (call) => late.act(call) },
          {
            step: 'late swap lands first',
            matches: faults.swap(location),
            nth: 2,
            act: runBefore(async () => {
              gate.open();
              expect(await late.delivered).toEqual({ ok: true });
            }),
          },
        ]);

        // Act
        const report = await deliver(lake, id, esmEvent(BATCH_B), writer);

        // Assess: the snapshot that landed holds this writer's DataFiles, which must stay
        const table = await expectOneCopy(id, writer);
        expect(writer.hitsOf('late swap lands first')).toBe(2);
        expect(report.tables[0].status).toBe('committed');
        expect(table.metadata.snapshots).toHaveLength(2);
      });

      it('a writer that gives up after an unconfirmed swap keeps its files for the late landing', async () => {
        // Prepare: no retries (as when the Lambda's deadline leaves no time for another attempt)
        const { id, location } = await seededTable({ 'commit.retry.num-retries': '0' });
        const gate = createGate();
        const late = deliverLate(gate.opened, faults.lateTimeout);
        const writer = new WriterProcess([
          { step: 'swap delayed', matches: faults.swap(location), act: (call) => late.act(call) },
        ]);

        // Act: the writer gives up; then its request lands; then the ESM redelivers the batch
        const first = await settle(deliver(lake, id, esmEvent(BATCH_B), writer));
        gate.open();
        const outcome = await late.delivered;
        const replayer = new WriterProcess();
        const replay = await deliver(lake, id, esmEvent(BATCH_B), replayer);

        // Assess
        await expectOneCopy(id, writer, replayer);
        expect(first.error).toBeInstanceOf(CommitStateUnknownError);
        expect(outcome).toEqual({ ok: true });
        expect(replay.tables[0].status).toBe('nothing-to-commit');
      });

      it('an error the catalog does not classify, after the commit landed, does not undo it', async () => {
        // Prepare: as the REST client when a 2xx body cannot be read (rest-catalog.ts toLoadedTable)
        const { id } = await seededTable();
        const writer = new WriterProcess([
          {
            step: 'garbled answer',
            matches: (site) => site.kind === 'catalog' && site.method === 'commitTable',
            act: failAfter(() => new LakeError('the server returned no metadata-location (injected)')),
          },
        ]);

        // Act
        const first = await settle(deliver(lake, id, esmEvent(BATCH_B), writer));
        const replayer = new WriterProcess();
        const replay = await deliver(lake, id, esmEvent(BATCH_B), replayer);

        // Assess
        await expectOneCopy(id, writer, replayer);
        expect(writer.hitsOf('garbled answer')).toBe(1);
        expect(first.report?.tables[0].status ?? String(first.error)).toBe('committed');
        expect(replay.tables[0].status).toBe('nothing-to-commit');
      });
    });
  }
});
