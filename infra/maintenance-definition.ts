/**
 * The maintenance state machine's definition, on its own so that the construct and the tests build the
 * very same one (test/unit/... executes it with aws-local-stepfunctions through
 * `renderMaintenanceDefinition` in ./render-definition.ts).
 *
 * Flow: ConvertEqualityDeletes → Plan → (groups to rewrite? Map(Compact) → Commit) → ExpireSnapshots →
 * RemoveOrphans → RewriteManifests → Done. Any failure → ReportFailure → Failed.
 *
 * Data contract (JSONPath): the execution input is `{ "table": "ns.name", ...options }`. Every task gets
 * the whole state as its event and its result is stored under its own key, so later steps see earlier
 * results: `$.convertEqualityDeletes`, `$.plan`, `$.rewrites` (one Compact result per group, in group order), `$.commit`, `$.expire`,
 * `$.removeOrphans`, `$.rewriteManifests`. The Map iterates `$.plan.groups`; each Compact gets
 * `{ "table": ..., "group": <one element of plan.groups> }`. Tasks invoke the function ARN directly
 * (no `lambda:invoke` wrapper), so a handler's return value is the task result as it is.
 */
import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';

/** Each maintenance task: its key, its state name and the handler export of functions/handlers/maintenance.ts. */
export const MAINTENANCE_TASKS = [
  {
    key: 'convertEqualityDeletes',
    state: 'ConvertEqualityDeletes',
    handler: 'convertEqualityDeletesHandler',
    resultPath: '$.convertEqualityDeletes',
  },
  { key: 'plan', state: 'Plan', handler: 'planHandler', resultPath: '$.plan' },
  // a Map iteration's output is the Compact result itself (no ResultPath)
  { key: 'compact', state: 'Compact', handler: 'compactHandler', resultPath: undefined },
  { key: 'commit', state: 'Commit', handler: 'commitHandler', resultPath: '$.commit' },
  { key: 'expire', state: 'ExpireSnapshots', handler: 'expireHandler', resultPath: '$.expire' },
  {
    key: 'removeOrphans',
    state: 'RemoveOrphans',
    handler: 'removeOrphansHandler',
    resultPath: '$.removeOrphans',
  },
  {
    key: 'rewriteManifests',
    state: 'RewriteManifests',
    handler: 'rewriteManifestsHandler',
    resultPath: '$.rewriteManifests',
  },
] as const;

export type MaintenanceTask = (typeof MAINTENANCE_TASKS)[number];
export type MaintenanceTaskKey = MaintenanceTask['key'];

/** Names of the states that are not tasks. */
export const MAINTENANCE_STATES = {
  hasGroups: 'HasRewriteGroups',
  compactGroups: 'CompactGroups',
  reportFailure: 'ReportFailure',
  failed: 'Failed',
  done: 'Done',
} as const;

/** Lambda's own transient failures (the service, throttling, the SDK), retried with backoff. */
export const LAMBDA_TRANSIENT_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
];

/** floe errors whose `retryable` flag is true (functions/core/errors.ts): trying again can help. */
export const FLOE_RETRYABLE_ERRORS = [
  'CommitFailedError',
  'CommitStateUnknownError',
  'TransientIOError',
  'LockTimeoutError',
];

export interface MaintenanceDefinitionOptions {
  /**
   * Compaction groups rewritten at once.
   * @default 4
   */
  readonly maxConcurrency?: number;
}

function taskState(scope: Construct, task: MaintenanceTask, fn: lambda.IFunction): tasks.LambdaInvoke {
  const state = new tasks.LambdaInvoke(scope, task.state, {
    stateName: task.state,
    lambdaFunction: fn,
    // the function ARN as Resource: the event is the state, the result is the handler's return value
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
    ...(task.resultPath === undefined ? {} : { resultPath: task.resultPath }),
  });
  state.addRetry({
    errors: LAMBDA_TRANSIENT_ERRORS,
    interval: Duration.seconds(2),
    maxAttempts: 6,
    backoffRate: 2,
    jitterStrategy: sfn.JitterType.FULL,
  });
  state.addRetry({
    errors: FLOE_RETRYABLE_ERRORS,
    interval: Duration.seconds(5),
    maxAttempts: 4,
    backoffRate: 2,
    jitterStrategy: sfn.JitterType.FULL,
  });
  return state;
}

/**
 * Builds the maintenance flow over the given task functions.
 * @returns the chain to use as the state machine's definition
 */
export function buildMaintenanceDefinition(
  scope: Construct,
  functions: Readonly<Record<MaintenanceTaskKey, lambda.IFunction>>,
  options: MaintenanceDefinitionOptions = {},
): sfn.IChainable {
  const byKey = Object.fromEntries(
    MAINTENANCE_TASKS.map((t) => [t.key, taskState(scope, t, functions[t.key])]),
  ) as Record<MaintenanceTaskKey, tasks.LambdaInvoke>;
  const failed = new sfn.Fail(scope, MAINTENANCE_STATES.failed, {
    stateName: MAINTENANCE_STATES.failed,
    errorPath: '$.error',
    causePath: '$.cause',
  });
  // keeps the table and the error together in the execution history and output before failing
  const report = new sfn.Pass(scope, MAINTENANCE_STATES.reportFailure, {
    stateName: MAINTENANCE_STATES.reportFailure,
    parameters: {
      'table.$': '$.table',
      'error.$': '$.failure.Error',
      'cause.$': '$.failure.Cause',
    },
  }).next(failed);
  const compactGroups = new sfn.Map(scope, MAINTENANCE_STATES.compactGroups, {
    stateName: MAINTENANCE_STATES.compactGroups,
    itemsPath: '$.plan.groups',
    itemSelector: { 'table.$': '$.table', 'group.$': '$$.Map.Item.Value' },
    maxConcurrency: options.maxConcurrency ?? 4,
    resultPath: '$.rewrites',
  }).itemProcessor(byKey.compact);
  const catchToReport = { resultPath: '$.failure' };
  for (const key of [
    'convertEqualityDeletes',
    'plan',
    'commit',
    'expire',
    'removeOrphans',
    'rewriteManifests',
  ] as const) {
    byKey[key].addCatch(report, catchToReport);
  }
  compactGroups.addCatch(report, catchToReport);
  // reached from both branches of the choice below
  byKey.expire
    .next(byKey.removeOrphans)
    .next(byKey.rewriteManifests)
    .next(new sfn.Succeed(scope, MAINTENANCE_STATES.done, { stateName: MAINTENANCE_STATES.done }));
  const hasGroups = new sfn.Choice(scope, MAINTENANCE_STATES.hasGroups, {
    stateName: MAINTENANCE_STATES.hasGroups,
  })
    .when(sfn.Condition.isPresent('$.plan.groups[0]'), compactGroups.next(byKey.commit).next(byKey.expire))
    .otherwise(byKey.expire);
  return sfn.Chain.start(byKey.convertEqualityDeletes).next(byKey.plan).next(hasGroups);
}
