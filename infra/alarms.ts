/**
 * What an operator watches: alarms for the failure modes that need a person (lag, errors, throttles,
 * dead-lettered records, commit conflicts and unknown outcomes, stale tables, failed maintenance) and a
 * dashboard with the same metrics side by side.
 *
 * floe's own metrics come from Powertools (EMF) with its default dimension `service`, so the alarms read
 * them under `{ service: <serviceName> }` in the floe namespace; the per-table ones add `table`
 * (./table-alarms.ts).
 *
 * Lag is Lambda's own `OffsetLag`, in `AWS/Lambda` under `FunctionName`: "the difference in offset
 * between the last record written to a topic and the last record that your function's consumer group
 * processed ... at the topic level", for MSK and self-managed Kafka mappings
 * (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html#performance-metrics).
 * Read on `Maximum`: the page groups it with the performance metrics it says to view with `Average`
 * or `Max`, and one topic far behind is what matters, not the mean over the function's topics. Lambda
 * also has per-mapping lag (`MaxOffsetLag`, `SumOffsetLag`, under `EventSourceMappingUUID`), but only
 * for mappings whose `MetricsConfig` turns on `KafkaMetrics` (same page, "Event source mapping
 * metrics"); the construct does not turn it on.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { AlarmOptions } from './props.js';
import {
  checkEvaluationPeriods,
  createTableAlarms,
  type FloeTableAlarms,
  notifyingTableAlarms,
  periodsOf,
  tableWidgets,
} from './table-alarms.js';

/** The alarms of one `KafkaToIceberg`. */
export interface FloeAlarms {
  /** `OffsetLag` of the ingest function above `offsetLagThreshold` for `offsetLagEvaluationPeriods` periods. */
  readonly offsetLag: cloudwatch.Alarm;
  /**
   * A partition is blocked: records wait (`OffsetLag` > 0) while the ingest function keeps failing,
   * in every 5-minute period for `blockedPartitionAfter`. An on-demand mapping retries a failing batch
   * until its records expire, holding back its partition all that time.
   */
  readonly partitionBlocked: cloudwatch.Alarm;
  /** The ingest function failed an invocation (the batch is retried). */
  readonly ingestErrors: cloudwatch.Alarm;
  /** The ingest function was throttled. */
  readonly ingestThrottles: cloudwatch.Alarm;
  /** Records went to the dead-letter path (`DeadLetteredRecords`). */
  readonly deadLetteredRecords: cloudwatch.Alarm;
  /** Commits lost the race too often (`CommitConflicts`). */
  readonly commitConflicts: cloudwatch.Alarm;
  /** A commit's outcome was unknown and had to be reconciled (`CommitStateUnknown`). */
  readonly commitStateUnknown: cloudwatch.Alarm;
  /** No commit for longer than `maxCommitAge` (no `Commits` datapoint: missing data breaches). */
  readonly commitAge: cloudwatch.Alarm;
  /** A maintenance execution failed, timed out or was aborted. */
  readonly maintenanceFailures?: cloudwatch.Alarm;
}

export interface MonitoringProps {
  readonly ingestFunction: lambda.IFunction;
  readonly stateMachine?: sfn.IStateMachine;
  readonly serviceName: string;
  readonly metricsNamespace: string;
  /** The routes' tables as the ingest handler names them (`namespace.name`), each once. */
  readonly tables: readonly string[];
  readonly options: AlarmOptions;
}

/** The metrics the alarms and the dashboard read, each with the period it is judged over. */
interface PipelineMetrics {
  /** A floe metric (EMF, under the pipeline's `service` dimension). */
  readonly floe: (metricName: string, statistic: string, period: Duration) => cloudwatch.Metric;
  readonly offsetLag: cloudwatch.Metric;
  readonly errors: cloudwatch.Metric;
  readonly throttles: cloudwatch.Metric;
  readonly deadLettered: cloudwatch.Metric;
  readonly conflicts: cloudwatch.Metric;
  readonly unknown: cloudwatch.Metric;
  readonly commits: cloudwatch.Metric;
}

/** Creates one alarm on `metric` (≥ threshold in one period, missing data fine, unless `extra` says otherwise). */
type CreateAlarm = (
  name: string,
  metric: cloudwatch.Metric | cloudwatch.MathExpression,
  threshold: number,
  description: string,
  extra?: Partial<cloudwatch.CreateAlarmOptions>,
) => cloudwatch.Alarm;

const FIVE_MINUTES = Duration.minutes(5);

function pipelineMetrics(props: MonitoringProps): PipelineMetrics {
  const fn = props.ingestFunction;
  const floe = (metricName: string, statistic: string, period: Duration) =>
    new cloudwatch.Metric({
      namespace: props.metricsNamespace,
      metricName,
      dimensionsMap: { service: props.serviceName },
      statistic,
      period,
    });
  return {
    floe,
    offsetLag: new cloudwatch.Metric({
      namespace: 'AWS/Lambda',
      metricName: 'OffsetLag',
      dimensionsMap: { FunctionName: fn.functionName },
      statistic: 'Maximum',
      period: FIVE_MINUTES,
    }),
    errors: fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
    throttles: fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
    deadLettered: floe('DeadLetteredRecords', 'Sum', FIVE_MINUTES),
    conflicts: floe('CommitConflicts', 'Sum', Duration.minutes(15)),
    unknown: floe('CommitStateUnknown', 'Sum', FIVE_MINUTES),
    // the ingest handler counts `Commits` only when a batch committed: a stale table shows as missing data
    commits: floe('Commits', 'Sum', FIVE_MINUTES),
  };
}

/**
 * Lag: the topic head running away (`offsetLag`), and a partition held back behind a batch that cannot
 * succeed (`partitionBlocked`). Lag alone is a busy topic and errors alone are retried; both in every
 * period for `blockedPartitionAfter` are a batch retried while its partition waits.
 * @throws Error for a `blockedPartitionAfter` outside 5 minutes – one day, or an
 * `offsetLagEvaluationPeriods` outside 1 – 288
 */
function lagAlarms(alarm: CreateAlarm, metrics: PipelineMetrics, options: AlarmOptions) {
  const blockedAfter = options.blockedPartitionAfter ?? Duration.minutes(30);
  const blockedPeriods = periodsOf(blockedAfter, 'blockedPartitionAfter');
  const lagPeriods = checkEvaluationPeriods(
    options.offsetLagEvaluationPeriods ?? 3,
    'offsetLagEvaluationPeriods',
  );
  const blocked = new cloudwatch.MathExpression({
    expression: 'IF(lag > 0 AND errors > 0, 1, 0)',
    usingMetrics: { lag: metrics.offsetLag, errors: metrics.errors },
    period: FIVE_MINUTES,
    label: 'records waiting behind a failing batch',
  });
  return {
    offsetLag: alarm(
      'OffsetLag',
      metrics.offsetLag,
      options.offsetLagThreshold ?? 100_000,
      `Ingestion has been falling behind the topic head for ${lagPeriods * 5} minutes`,
      {
        evaluationPeriods: lagPeriods,
        datapointsToAlarm: lagPeriods,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      },
    ),
    partitionBlocked: alarm(
      'PartitionBlocked',
      blocked,
      1,
      `Records have waited behind a failing batch for ${blockedAfter.toHumanString()}: the mapping retries it ` +
        'until it succeeds or its records expire (on-demand mode) or its retries run out (provisioned mode)',
      { evaluationPeriods: blockedPeriods, datapointsToAlarm: blockedPeriods },
    ),
  };
}

/** The ingest function's health: any failed invocation (its batch is retried) and any throttle. */
function ingestFunctionAlarms(alarm: CreateAlarm, metrics: PipelineMetrics) {
  return {
    ingestErrors: alarm(
      'IngestErrors',
      metrics.errors,
      1,
      'The ingest function failed a batch (it will be retried)',
    ),
    ingestThrottles: alarm('IngestThrottles', metrics.throttles, 1, 'The ingest function was throttled'),
  };
}

/** Dead letters: any record floe set aside rather than write (a person decides what becomes of it). */
function deadLetterAlarms(alarm: CreateAlarm, metrics: PipelineMetrics) {
  return {
    deadLetteredRecords: alarm(
      'DeadLetteredRecords',
      metrics.deadLettered,
      1,
      'Records went to the dead-letter path',
    ),
  };
}

/**
 * Commits: writers contending for a table (`commitConflicts`), an outcome that had to be reconciled
 * (`commitStateUnknown`), and a table that stopped receiving commits (`commitAge`: no `Commits`
 * datapoint for `maxCommitAge`, so missing data breaches and an idle topic alarms too).
 * @throws Error for a `maxCommitAge` outside 5 minutes – one day
 */
function commitAlarms(alarm: CreateAlarm, metrics: PipelineMetrics, options: AlarmOptions) {
  const maxCommitAge = options.maxCommitAge ?? Duration.hours(1);
  const agePeriods = periodsOf(maxCommitAge, 'maxCommitAge');
  return {
    commitConflicts: alarm(
      'CommitConflicts',
      metrics.conflicts,
      options.commitConflictThreshold ?? 10,
      'Commits keep losing the race for the table (retried, but writers contend)',
    ),
    commitStateUnknown: alarm(
      'CommitStateUnknown',
      metrics.unknown,
      1,
      'A commit outcome was unknown and had to be reconciled from the snapshot history',
    ),
    commitAge: alarm('CommitAge', metrics.commits, 1, `No commit for ${maxCommitAge.toHumanString()}`, {
      evaluationPeriods: agePeriods,
      datapointsToAlarm: agePeriods,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    }),
  };
}

/** Maintenance: an execution of the state machine that failed, timed out or was aborted. */
function maintenanceAlarms(alarm: CreateAlarm, stateMachine: sfn.IStateMachine) {
  return {
    maintenanceFailures: alarm(
      'MaintenanceFailures',
      new cloudwatch.MathExpression({
        expression: 'failed + timedOut + aborted',
        usingMetrics: {
          failed: stateMachine.metricFailed({ period: FIVE_MINUTES, statistic: 'Sum' }),
          timedOut: stateMachine.metricTimedOut({ period: FIVE_MINUTES, statistic: 'Sum' }),
          aborted: stateMachine.metricAborted({ period: FIVE_MINUTES, statistic: 'Sum' }),
        },
        period: FIVE_MINUTES,
        label: 'failed maintenance executions',
      }),
      1,
      'A table maintenance execution failed, timed out or was aborted',
    ),
  };
}

/**
 * The dashboard: the ingest function, lag, records, commits and files side by side, the per-table
 * commits and record age, then the alarms.
 */
function addDashboardWidgets(
  dashboard: cloudwatch.Dashboard,
  metrics: PipelineMetrics,
  props: MonitoringProps,
  alarms: cloudwatch.IAlarm[],
): void {
  const { ingestFunction: fn, stateMachine } = props;
  const { floe } = metrics;
  const graph = (title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = []) =>
    new cloudwatch.GraphWidget({ title, left, right, width: 8 });
  dashboard.addWidgets(
    graph(
      'Ingest invocations',
      [fn.metricInvocations({ period: FIVE_MINUTES })],
      [metrics.errors, metrics.throttles],
    ),
    graph('Ingest duration', [
      fn.metricDuration({ period: FIVE_MINUTES, statistic: 'p50' }),
      fn.metricDuration({ period: FIVE_MINUTES, statistic: 'p99' }),
    ]),
    graph('Offset lag (records)', [metrics.offsetLag]),
  );
  dashboard.addWidgets(
    graph(
      'Records',
      [floe('RecordsIn', 'Sum', FIVE_MINUTES), floe('RowsWritten', 'Sum', FIVE_MINUTES)],
      [metrics.deadLettered],
    ),
    graph('Commits', [metrics.commits], [metrics.conflicts, metrics.unknown]),
    graph(
      'Files written',
      [floe('DataFilesWritten', 'Sum', FIVE_MINUTES)],
      [floe('BytesWritten', 'Sum', FIVE_MINUTES)],
    ),
  );
  if (props.tables.length > 0) dashboard.addWidgets(...tableWidgets(props));
  if (stateMachine) {
    dashboard.addWidgets(
      graph('Maintenance executions', [
        stateMachine.metricStarted({ period: FIVE_MINUTES }),
        stateMachine.metricSucceeded({ period: FIVE_MINUTES }),
        stateMachine.metricFailed({ period: FIVE_MINUTES }),
      ]),
    );
  }
  dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'floe alarms', alarms, width: 24 }));
}

/** Alarms and dashboard for one pipeline. */
export class FloeMonitoring extends Construct {
  readonly alarms: FloeAlarms;
  readonly tableAlarms: FloeTableAlarms;
  readonly dashboard: cloudwatch.Dashboard;

  /**
   * @throws Error for an alarm window (`maxCommitAge`, `blockedPartitionAfter`, `staleTable.after`)
   * outside 5 minutes – one day, or a number of evaluation periods outside 1 – 288
   */
  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const { options } = props;
    const metrics = pipelineMetrics(props);
    const alarm: CreateAlarm = (name, metric, threshold, description, extra = {}) =>
      metric.createAlarm(this, name, {
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
        ...extra,
      });
    this.alarms = {
      ...lagAlarms(alarm, metrics, options),
      ...ingestFunctionAlarms(alarm, metrics),
      ...deadLetterAlarms(alarm, metrics),
      ...commitAlarms(alarm, metrics, options),
      ...(props.stateMachine ? maintenanceAlarms(alarm, props.stateMachine) : {}),
    };
    this.tableAlarms = createTableAlarms(this, { ...props, offsetLag: metrics.offsetLag });
    const notifying = [
      ...(Object.values(this.alarms) as cloudwatch.Alarm[]),
      ...notifyingTableAlarms(this.tableAlarms),
    ];
    if (options.topic) {
      const action = new actions.SnsAction(options.topic);
      for (const a of notifying) {
        a.addAlarmAction(action);
        a.addOkAction(action);
      }
    }
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    addDashboardWidgets(this.dashboard, metrics, props, notifying);
  }
}
