/**
 * Table maintenance as the deployed state machine runs it: the definition read from the synthesized
 * template, executed by aws-local-stepfunctions, every Task state invoking its bundled function through
 * the loopback Runtime API (one aws-lambda-ric process per function), so each result the next task reads
 * has been through JSON exactly as in Step Functions. The table is filled by the bundled ingest function.
 */
import { StateMachine } from 'aws-local-stepfunctions';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseIdentifier } from '../../../functions/core/catalog/catalog.js';
import { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { MAINTENANCE_STATES } from '../../../infra/maintenance-definition.js';
import { makeOrderMessages, makeOrdersEvent } from '../../bench/orders-batch.js';
import type { InvokeResult } from '../../support/lambda-runtime-api.js';
import { duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';
import type { RicProcess } from '../../support/ric-process.js';
import { describeWithMoto, resetMoto } from '../moto.js';
import { type DeployedPipeline, deployPipeline, ORDERS_TABLE } from './deployed-pipeline.js';

type Json = Parameters<StateMachine['run']>[0];

/** One invocation as a Task state made it: the state, and what the function posted. */
interface Posted {
  state: string;
  result: InvokeResult;
}

/** A Lambda error as Step Functions sees it: the posted errorType is the name Retry and Catch match. */
class PostedLambdaError extends Error {
  constructor(errorType: string, message: string) {
    super(message);
    this.name = errorType;
  }
}

describeWithMoto('the synthesized maintenance state machine over the bundled functions', () => {
  let pipeline: DeployedPipeline;
  let reader: RestCatalog;
  /** Task state → the process of the function its Resource names. */
  const byState = new Map<string, RicProcess>();
  let definition: ReturnType<DeployedPipeline['stack']['stateMachine']>;
  let ingest: RicProcess;
  let batches = 0;

  /** One small batch (30 records over 3 partitions) through the bundled ingest function. */
  async function ingestBatch(): Promise<void> {
    const b = batches++;
    const messages = makeOrderMessages({ records: 30, partitions: 3, seed: b, firstOrderId: b * 100 });
    const result = await ingest.invoke(makeOrdersEvent(messages, b * 10));
    if (!result.ok) throw new Error(`ingest failed: ${JSON.stringify(result.error)}`);
  }

  const liveFiles = async () => liveEntries(await reader.loadTable(parseIdentifier(ORDERS_TABLE)));
  const duckdbIds = async (): Promise<number[]> => {
    const files = (await liveFiles()).map((e) => sqlString(e.data_file.file_path));
    const rows = await duckdbQuery(
      `SELECT order_id::BIGINT AS id FROM read_parquet([${files.join(', ')}]) ORDER BY 1`,
    );
    return rows.map((r) => Number(r.id));
  };

  async function runMachine(input: Record<string, unknown>) {
    const posted: Posted[] = [];
    const local = Object.fromEntries(
      [...byState].map(([state, fn]) => [
        state,
        async (event: Json) => {
          const result = await fn.invoke(event);
          posted.push({ state, result });
          if (!result.ok) throw new PostedLambdaError(result.error.errorType, result.error.errorMessage);
          return result.payload as Json;
        },
      ]),
    );
    const machine = new StateMachine(definition as unknown as ConstructorParameters<typeof StateMachine>[0]);
    const execution = machine.run(input as Json, {
      overrides: {
        taskResourceLocalHandlers: local,
        retryIntervalOverrides: Object.fromEntries(
          [...byState.keys(), MAINTENANCE_STATES.compactGroups].map((s) => [s, 0]),
        ),
      },
    });
    const entered: string[] = [];
    const collect = (async () => {
      for await (const e of execution.eventLogs) if (e.type === 'StateEntered') entered.push(e.state.name);
    })();
    try {
      const output = (await execution.result) as Record<string, unknown>;
      await collect;
      return { output, posted, entered };
    } catch (error) {
      await collect.catch(() => undefined);
      return { error, posted, entered };
    }
  }

  beforeAll(async () => {
    await resetMoto();
    pipeline = await deployPipeline();
    reader = new RestCatalog({ uri: pipeline.catalog.uri });
    definition = pipeline.stack.stateMachine();
    // Prepare: one process per function a Task state names (its Resource ends with the logical id)
    const tasks = Object.entries(definition.States).flatMap(([name, state]) =>
      taskStates(name, state as Record<string, unknown>),
    );
    const ids = [...new Set(tasks.map((t) => t.functionId))];
    const started = new Map(
      await Promise.all(ids.map(async (id) => [id, await pipeline.start(id)] as const)),
    );
    for (const t of tasks) byState.set(t.state, started.get(t.functionId)!);
    // Prepare: 12 small batches through the bundled ingest function, each a snapshot of small files
    ingest = await pipeline.start(pipeline.functionId('handler'));
    for (let b = 0; b < 12; b++) await ingestBatch();
  }, 300_000);

  afterAll(async () => {
    await pipeline?.cleanup();
  });

  it('compacts, expires, removes orphans and rewrites manifests, each task reading the last one’s JSON', async () => {
    // Prepare
    const filesBefore = (await liveFiles()).length;
    const idsBefore = await duckdbIds();
    // Act
    const run = await runMachine({
      table: ORDERS_TABLE,
      maxSnapshotAgeMs: 0,
      minSnapshotsToKeep: 1,
      orphanFileAgeMs: 0,
    });
    // Assess: the path through the definition, every task answered on /response
    expect(run.error).toBeUndefined();
    expect(run.entered.filter((s) => s !== 'Compact')).toEqual([
      'ConvertEqualityDeletes',
      'Plan',
      'HasRewriteGroups',
      'CompactGroups',
      'Commit',
      'ExpireSnapshots',
      'RemoveOrphans',
      'RewriteManifests',
      'Done',
    ]);
    expect(run.posted.every((p) => p.result.ok)).toBe(true);
    expect(new Set(run.posted.map((p) => p.state))).toEqual(
      new Set([
        'ConvertEqualityDeletes',
        'Plan',
        'Compact',
        'Commit',
        'ExpireSnapshots',
        'RemoveOrphans',
        'RewriteManifests',
      ]),
    );
    const output = run.output!;
    // an append table holds no equality deletes
    expect(output.convertEqualityDeletes).toMatchObject({ status: 'nothing-to-convert' });
    expect(output.plan).toMatchObject({ table: ORDERS_TABLE, snapshotId: expect.stringMatching(/^-?\d+$/) });
    expect(output.commit).toMatchObject({
      status: 'committed',
      snapshotId: expect.stringMatching(/^-?\d+$/),
    });
    expect(output.expire).toMatchObject({ status: 'expired' });
    // Assess: fewer files, the same rows read by DuckDB
    const filesAfter = (await liveFiles()).length;
    expect(filesBefore).toBeGreaterThan(12);
    expect(filesAfter).toBeLessThan(filesBefore);
    expect(await duckdbIds()).toEqual(idsBefore);
    expect(idsBefore).toHaveLength(360);
    const summary = (output.rewriteManifests as { summary: Record<string, unknown> }).summary;
    expect(summary).toMatchObject({ dataFilesBefore: filesBefore, dataFilesAfter: filesAfter });
  });

  it('retries Commit on the CommitFailedError its function posted (the name survives bundling and the runtime client)', async () => {
    // Prepare: small files again, and the catalog refusing every attempt of one Commit invocation
    for (let b = 0; b < 3; b++) await ingestBatch();
    const idsBefore = await duckdbIds();
    for (let attempt = 0; attempt < 5; attempt++) pipeline.catalog.failNextCommit({ status: 409 });
    // Act
    const run = await runMachine({ table: ORDERS_TABLE });
    // Assess
    expect(run.error).toBeUndefined();
    const commits = run.posted.filter((p) => p.state === 'Commit').map((p) => p.result);
    expect(commits).toHaveLength(2);
    expect(commits[0]).toMatchObject({ ok: false, error: { errorType: 'CommitFailedError' } });
    expect(commits[1]).toMatchObject({ ok: true, payload: { status: 'committed' } });
    expect(await duckdbIds()).toEqual(idsBefore);
  });

  it('ends in the failure state when the table does not exist, the error type posted by the first task', async () => {
    // Act
    const run = await runMachine({ table: 'sales.nothing' });
    // Assess
    expect(run.entered).toEqual(['ConvertEqualityDeletes', 'ReportFailure', 'Failed']);
    expect(run.posted).toHaveLength(1);
    const [first] = run.posted;
    expect(first!.result.ok).toBe(false);
    if (first!.result.ok) return;
    expect(first!.result.error.errorType).toBe('NoSuchTableError');
  });
});

/** The Task states of a state (a Map's iterator included) and the function each invokes. */
function taskStates(name: string, state: Record<string, unknown>): { state: string; functionId: string }[] {
  if (state.Type === 'Task') {
    const resource = String(state.Resource);
    const functionId = /:function:([^:]+)$/.exec(resource)?.[1];
    if (!functionId) throw new Error(`${name}: not a direct function invocation (${resource})`);
    return [{ state: name, functionId }];
  }
  const inner = (state.ItemProcessor ?? state.Iterator) as
    | { States: Record<string, Record<string, unknown>> }
    | undefined;
  if (!inner) return [];
  return Object.entries(inner.States).flatMap(([n, s]) => taskStates(n, s));
}
