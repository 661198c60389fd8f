/**
 * Scheduled table maintenance: one function per task (same entry file, different handler exports), the
 * state machine over them (./maintenance-definition.ts) and one EventBridge Scheduler schedule per table,
 * which starts an execution with `{ "table": "ns.name", ...retention }`.
 */
import path from 'node:path';
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { CatalogResources } from './catalog.js';
import { createFloeFunction, HANDLERS_DIR } from './functions.js';
import {
  buildMaintenanceDefinition,
  MAINTENANCE_TASKS,
  type MaintenanceTask,
  type MaintenanceTaskKey,
} from './maintenance-definition.js';
import { acknowledgeWildcardResource } from './nag.js';
import { type CatalogAccess, grantCatalog, grantLock } from './permissions.js';
import type { MaintenanceOptions, TableRoute } from './props.js';

/** What each task does to a table, hence what its role may do. */
const TASK_ACCESS: Record<MaintenanceTaskKey, CatalogAccess & { lock?: boolean }> = {
  // writes position delete files and commits; deletes only the files of an attempt that did not land
  convertEqualityDeletes: { writeFiles: true, commit: true, lock: true },
  plan: {},
  compact: { writeFiles: true },
  commit: { writeFiles: true, commit: true, lock: true },
  expire: { writeFiles: true, commit: true, maintenanceConfig: true, deleteFiles: true, lock: true },
  removeOrphans: { deleteFiles: true },
  rewriteManifests: { writeFiles: true, commit: true, lock: true },
};

/** Maintenance options with every default applied. */
export type ResolvedMaintenance = Required<Omit<MaintenanceOptions, 'enabled'>>;

/** Applies the documented defaults of `MaintenanceOptions`. */
export function resolveMaintenance(options: MaintenanceOptions = {}): ResolvedMaintenance {
  return {
    schedule: options.schedule ?? scheduler.ScheduleExpression.rate(Duration.hours(6)),
    snapshotRetention: options.snapshotRetention ?? Duration.days(5),
    minSnapshotsToKeep: options.minSnapshotsToKeep ?? 1,
    orphanFileAge: options.orphanFileAge ?? Duration.days(3),
    maxConcurrency: options.maxConcurrency ?? 4,
    memorySize: options.memorySize ?? 3008,
    timeout: options.timeout ?? Duration.minutes(15),
    executionTimeout: options.executionTimeout ?? Duration.hours(2),
  };
}

/** The execution input a schedule sends for one table. */
export interface MaintenanceInput {
  table: string;
  maxSnapshotAgeMs: number;
  minSnapshotsToKeep: number;
  orphanFileAgeMs: number;
}

/** The input of one table's scheduled execution. */
export function maintenanceInput(table: string, options: ResolvedMaintenance): MaintenanceInput {
  return {
    table,
    maxSnapshotAgeMs: options.snapshotRetention.toMilliseconds(),
    minSnapshotsToKeep: options.minSnapshotsToKeep,
    orphanFileAgeMs: options.orphanFileAge.toMilliseconds(),
  };
}

export interface MaintenanceProps {
  readonly options: ResolvedMaintenance;
  readonly routes: readonly TableRoute[];
  readonly environment: Record<string, string>;
  readonly catalog: CatalogResources;
  readonly lockTable: dynamodb.ITable;
  readonly removalPolicy: RemovalPolicy;
  readonly logRetention: logs.RetentionDays;
}

/** Maintenance functions, state machine and schedules of one `KafkaToIceberg`. */
export class FloeMaintenance extends Construct {
  readonly functions: Readonly<Record<MaintenanceTaskKey, nodejs.NodejsFunction>>;
  readonly stateMachine: sfn.StateMachine;
  readonly schedules: readonly scheduler.Schedule[];

  constructor(scope: Construct, id: string, props: MaintenanceProps) {
    super(scope, id);
    const { options } = props;
    this.functions = Object.fromEntries(
      MAINTENANCE_TASKS.map((task) => [task.key, this.createTaskFunction(task, props)]),
    ) as Record<MaintenanceTaskKey, nodejs.NodejsFunction>;
    const logGroup = new logs.LogGroup(this, 'StateMachineLogs', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(
        buildMaintenanceDefinition(new Construct(this, 'Flow'), this.functions, {
          maxConcurrency: options.maxConcurrency,
        }),
      ),
      timeout: options.executionTimeout,
      tracingEnabled: true,
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: true },
    });
    const role = this.stateMachine.role;
    acknowledgeWildcardResource(
      role,
      '*',
      'X-Ray trace segments and CloudWatch Logs log delivery (vended logs) have no resource-level permissions',
    );
    for (const fn of Object.values(this.functions)) {
      acknowledgeWildcardResource(
        role,
        `${fn.functionArn}:*`,
        'CDK grants invoke on the function and its versions (`:*`), all of this one function',
      );
    }
    this.schedules = props.routes.map(
      (route) =>
        new scheduler.Schedule(this, `Schedule-${route.table}`, {
          description: `floe maintenance of ${route.table}`,
          schedule: options.schedule,
          target: new targets.StepFunctionsStartExecution(this.stateMachine, {
            input: scheduler.ScheduleTargetInput.fromObject(maintenanceInput(route.table, options)),
          }),
        }),
    );
  }

  private createTaskFunction(task: MaintenanceTask, props: MaintenanceProps): nodejs.NodejsFunction {
    const id = `${task.state}Function`;
    const fn = createFloeFunction(this, id, {
      entry: path.join(HANDLERS_DIR, 'maintenance.ts'),
      handler: task.handler,
      description: `table maintenance: ${task.state}`,
      memorySize: props.options.memorySize,
      timeout: props.options.timeout,
      environment: props.environment,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    const { lock, ...access } = TASK_ACCESS[task.key];
    grantCatalog(fn.role!, props.catalog, access);
    if (lock) grantLock(fn.role!, props.lockTable);
    return fn;
  }
}
