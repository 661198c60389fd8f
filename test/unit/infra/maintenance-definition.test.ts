import { Duration, type Stack } from 'aws-cdk-lib';
import aslValidator from 'asl-validator';
import { ExecutionError, StateMachine } from 'aws-local-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import { CommitFailedError, TransientIOError, ValidationError } from '../../../functions/core/errors.js';
import { MAINTENANCE_STATES, MAINTENANCE_TASKS } from '../../../infra/maintenance-definition.js';
import {
  type AslDefinition,
  renderMaintenanceDefinition,
  renderStateMachineDefinition,
} from '../../../infra/render-definition.js';
import { fullProps, synthPipeline } from './stacks.js';

type Json = Parameters<StateMachine['run']>[0];
type Handler = (input: Json) => Promise<Json>;

/** Task `Resource`s replaced by the state name, to compare definitions whatever the function ARNs. */
function withoutArns(definition: AslDefinition): unknown {
  return JSON.parse(JSON.stringify(definition), function (this: Record<string, unknown>, key, value) {
    return key === 'Resource' && this.Type === 'Task' ? 'TASK' : value;
  });
}

/** Runs the definition with local task handlers (no retry waits) and records the states entered. */
async function run(
  handlers: Partial<Record<string, Handler>>,
  input: Json = { table: 'sales.orders' },
): Promise<{ output?: Json; error?: unknown; entered: string[] }> {
  const machine = new StateMachine(
    renderMaintenanceDefinition() as unknown as ConstructorParameters<typeof StateMachine>[0],
  );
  const states = MAINTENANCE_TASKS.map((t) => t.state);
  const execution = machine.run(input, {
    overrides: {
      taskResourceLocalHandlers: Object.fromEntries(
        states.map((s) => [s, handlers[s] ?? (async () => ({ ok: s }))]),
      ),
      retryIntervalOverrides: Object.fromEntries(
        [...states, MAINTENANCE_STATES.compactGroups].map((s) => [s, 0]),
      ),
    },
  });
  const entered: string[] = [];
  const collect = (async () => {
    for await (const event of execution.eventLogs)
      if (event.type === 'StateEntered') entered.push(event.state.name);
  })();
  try {
    const output = await execution.result;
    await collect;
    return { output, entered };
  } catch (error) {
    await collect.catch(() => undefined);
    return { error, entered };
  }
}

describe('the maintenance definition', () => {
  let synthesized: AslDefinition;
  let stack: Stack;

  beforeAll(() => {
    const built = synthPipeline(fullProps);
    stack = built.stack;
    synthesized = renderStateMachineDefinition(built.template.toJSON());
  }, 120_000);

  it('reads the same definition from the stack as from its template', () => {
    expect(renderStateMachineDefinition(stack)).toEqual(synthesized);
  });

  it('passes asl-validator, as rendered and as synthesized', () => {
    for (const definition of [renderMaintenanceDefinition(), synthesized]) {
      // asl-validator fills in defaults (QueryLanguage) in what it is given: hand it a copy
      const { isValid, errorsText } = aslValidator(structuredClone(definition));
      expect(isValid, errorsText('\n')).toBe(true);
    }
  });

  it('is, in the synthesized stack, the very definition renderMaintenanceDefinition builds', () => {
    // Act: the same options the stack was given
    const rendered = renderMaintenanceDefinition({ maxConcurrency: 8, executionTimeout: Duration.hours(1) });
    // Assess
    expect(withoutArns(synthesized)).toEqual(withoutArns(rendered));
    expect(withoutArns(synthesized)).not.toEqual(withoutArns(renderMaintenanceDefinition()));
  });

  it('invokes each task function directly, retrying Lambda faults and floe’s retryable errors', () => {
    // Prepare
    const definition = renderMaintenanceDefinition();
    for (const task of MAINTENANCE_TASKS) {
      const state =
        task.key === 'compact'
          ? (definition.States[MAINTENANCE_STATES.compactGroups].ItemProcessor as AslDefinition).States[
              task.state
            ]
          : definition.States[task.state];
      // Assess
      expect(state.Resource).toBe(`arn:aws:lambda:us-east-1:123456789012:function:floe-${task.handler}`);
      const retried = (state.Retry as { ErrorEquals: string[] }[]).flatMap((r) => r.ErrorEquals);
      expect(retried).toEqual(
        expect.arrayContaining([
          'Lambda.ServiceException',
          'Lambda.TooManyRequestsException',
          'CommitFailedError',
          'TransientIOError',
          'CommitStateUnknownError',
        ]),
      );
      expect(retried).not.toContain('States.ALL');
    }
  });
});

describe('running the maintenance definition (aws-local-stepfunctions)', () => {
  it('converts equality deletes, plans, compacts each group, commits, expires, removes orphans and rewrites manifests, in order', async () => {
    // Prepare
    const seen: Record<string, Json> = {};
    const record =
      (state: string, result: Json): Handler =>
      async (input) => {
        seen[state] = input;
        return result;
      };
    // Act
    const { output, entered, error } = await run({
      ConvertEqualityDeletes: record('ConvertEqualityDeletes', { converted: 3 }),
      Plan: record('Plan', { groups: [{ partition: 'a' }, { partition: 'b' }] }),
      Compact: async (input) => ({ rewritten: (input as { group: { partition: string } }).group.partition }),
      Commit: record('Commit', { snapshotId: 7 }),
      ExpireSnapshots: record('ExpireSnapshots', { expired: 2 }),
    });
    // Assess
    expect(error).toBeUndefined();
    expect(entered.filter((s) => s !== 'Compact')).toEqual([
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
    expect(entered.filter((s) => s === 'Compact')).toHaveLength(2);
    expect(seen.ConvertEqualityDeletes).toEqual({ table: 'sales.orders' });
    expect(seen.Plan).toEqual({ table: 'sales.orders', convertEqualityDeletes: { converted: 3 } });
    expect(seen.Commit).toEqual({
      table: 'sales.orders',
      convertEqualityDeletes: { converted: 3 },
      plan: { groups: [{ partition: 'a' }, { partition: 'b' }] },
      rewrites: [{ rewritten: 'a' }, { rewritten: 'b' }],
    });
    expect(seen.ExpireSnapshots).toMatchObject({ commit: { snapshotId: 7 } });
    expect(output).toMatchObject({
      expire: { expired: 2 },
      removeOrphans: { ok: 'RemoveOrphans' },
      rewriteManifests: { ok: 'RewriteManifests' },
    });
  });

  it('skips compaction and its commit when the plan has no groups', async () => {
    const { entered } = await run({ Plan: async () => ({ groups: [] }) });
    expect(entered).toEqual([
      'ConvertEqualityDeletes',
      'Plan',
      'HasRewriteGroups',
      'ExpireSnapshots',
      'RemoveOrphans',
      'RewriteManifests',
      'Done',
    ]);
  });

  it('retries a commit that lost the race and a transient read', async () => {
    // Prepare
    let commits = 0;
    let compacts = 0;
    // Act
    const { error, output } = await run({
      Plan: async () => ({ groups: [{ partition: 'a' }] }),
      Compact: async () => {
        compacts++;
        if (compacts === 1) throw new TransientIOError('slow down');
        return { rewritten: 'a' };
      },
      Commit: async () => {
        commits++;
        if (commits < 3) throw new CommitFailedError('stale base');
        return { snapshotId: 9 };
      },
    });
    // Assess
    expect(error).toBeUndefined();
    expect(commits).toBe(3);
    expect(compacts).toBe(2);
    expect(output).toMatchObject({ commit: { snapshotId: 9 } });
  });

  it('reports a failure that must not be retried and fails the execution with its error', async () => {
    // Prepare
    let expires = 0;
    // Act
    const { error, entered } = await run({
      ExpireSnapshots: async () => {
        expires++;
        throw new ValidationError('retention below the minimum');
      },
    });
    // Assess
    expect(expires).toBe(1);
    expect(entered.slice(-3)).toEqual(['ExpireSnapshots', 'ReportFailure', 'Failed']);
    expect(error).toBeInstanceOf(ExecutionError);
    const failure = (error as Error).cause as Error;
    expect(failure.name).toBe('ValidationError');
    expect(failure.message).toBe('retention below the minimum');
  });
});
