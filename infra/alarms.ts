/**
 * What an operator watches: alarms for the failure modes that need a person (lag, errors, throttles,
 * dead-lettered records, commit conflicts and unknown outcomes, stale tables, failed maintenance) and a
 * dashboard with the same metrics side by side.
 *
 * floe's own metrics come from Powertools (EMF) with its default dimension `service`, so the alarms read
 * them under `{ service: <serviceName> }` in the floe namespace.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { AlarmOptions } from './props.js';

/** The alarms of one `KafkaToIceberg`. */
export interface FloeAlarms {
  /** ESM `OffsetLag` of the ingest function above the threshold for 15 minutes. */
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
  readonly options: AlarmOptions;
}

/** Alarms and dashboard for one pipeline. */
export class FloeMonitoring extends Construct {
  readonly alarms: FloeAlarms;
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const { ingestFunction: fn, options } = props;
    const floeMetric = (metricName: string, statistic: string, period: Duration) =>
      new cloudwatch.Metric({
        namespace: props.metricsNamespace,
        metricName,
        dimensionsMap: { service: props.serviceName },
        statistic,
        period,
      });
    const fiveMinutes = Duration.minutes(5);
    const offsetLag = new cloudwatch.Metric({
      namespace: 'AWS/Lambda',
      metricName: 'OffsetLag',
      dimensionsMap: { FunctionName: fn.functionName },
      statistic: 'Maximum',
      period: fiveMinutes,
    });
    const errors = fn.metricErrors({ period: fiveMinutes, statistic: 'Sum' });
    const throttles = fn.metricThrottles({ period: fiveMinutes, statistic: 'Sum' });
    const deadLettered = floeMetric('DeadLetteredRecords', 'Sum', fiveMinutes);
    const conflicts = floeMetric('CommitConflicts', 'Sum', Duration.minutes(15));
    const unknown = floeMetric('CommitStateUnknown', 'Sum', fiveMinutes);
    // the ingest handler counts `Commits` only when a batch committed: a stale table shows as missing data
    const commits = floeMetric('Commits', 'Sum', fiveMinutes);
    const maxCommitAge = options.maxCommitAge ?? Duration.hours(1);
    if (maxCommitAge.toSeconds() > Duration.days(1).toSeconds() || maxCommitAge.toSeconds() < 300) {
      throw new Error(
        'alarms.maxCommitAge must be between 5 minutes and one day (CloudWatch evaluates at most a day)',
      );
    }
    const agePeriods = Math.ceil(maxCommitAge.toSeconds() / fiveMinutes.toSeconds());
    const blockedAfter = options.blockedPartitionAfter ?? Duration.minutes(30);
    if (blockedAfter.toSeconds() > Duration.days(1).toSeconds() || blockedAfter.toSeconds() < 300) {
      throw new Error('alarms.blockedPartitionAfter must be between 5 minutes and one day');
    }
    const blockedPeriods = Math.ceil(blockedAfter.toSeconds() / fiveMinutes.toSeconds());
    // Lag alone is a busy topic and errors alone are retried; both in every period are a batch that
    // cannot succeed, retried while its partition waits.
    const blocked = new cloudwatch.MathExpression({
      expression: 'IF(lag > 0 AND errors > 0, 1, 0)',
      usingMetrics: { lag: offsetLag, errors },
      period: fiveMinutes,
      label: 'records waiting behind a failing batch',
    });

    const alarm = (
      name: string,
      metric: cloudwatch.Metric | cloudwatch.MathExpression,
      threshold: number,
      description: string,
      extra: Partial<cloudwatch.CreateAlarmOptions> = {},
    ) =>
      metric.createAlarm(this, name, {
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
        ...extra,
      });
    const maintenanceFailures = props.stateMachine
      ? alarm(
          'MaintenanceFailures',
          new cloudwatch.MathExpression({
            expression: 'failed + timedOut + aborted',
            usingMetrics: {
              failed: props.stateMachine.metricFailed({ period: fiveMinutes, statistic: 'Sum' }),
              timedOut: props.stateMachine.metricTimedOut({ period: fiveMinutes, statistic: 'Sum' }),
              aborted: props.stateMachine.metricAborted({ period: fiveMinutes, statistic: 'Sum' }),
            },
            period: fiveMinutes,
            label: 'failed maintenance executions',
          }),
          1,
          'A table maintenance execution failed, timed out or was aborted',
        )
      : undefined;
    this.alarms = {
      offsetLag: alarm(
        'OffsetLag',
        offsetLag,
        options.offsetLagThreshold ?? 100_000,
        'Ingestion is falling behind the topic head',
        { evaluationPeriods: 3, comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD },
      ),
      partitionBlocked: alarm(
        'PartitionBlocked',
        blocked,
        1,
        `Records have waited behind a failing batch for ${blockedAfter.toHumanString()}: the mapping retries it ` +
          'until it succeeds or its records expire (on-demand mode) or its retries run out (provisioned mode)',
        { evaluationPeriods: blockedPeriods, datapointsToAlarm: blockedPeriods },
      ),
      ingestErrors: alarm(
        'IngestErrors',
        errors,
        1,
        'The ingest function failed a batch (it will be retried)',
      ),
      ingestThrottles: alarm('IngestThrottles', throttles, 1, 'The ingest function was throttled'),
      deadLetteredRecords: alarm(
        'DeadLetteredRecords',
        deadLettered,
        1,
        'Records went to the dead-letter path',
      ),
      commitConflicts: alarm(
        'CommitConflicts',
        conflicts,
        options.commitConflictThreshold ?? 10,
        'Commits keep losing the race for the table (retried, but writers contend)',
      ),
      commitStateUnknown: alarm(
        'CommitStateUnknown',
        unknown,
        1,
        'A commit outcome was unknown and had to be reconciled from the snapshot history',
      ),
      commitAge: alarm('CommitAge', commits, 1, `No commit for ${maxCommitAge.toHumanString()}`, {
        evaluationPeriods: agePeriods,
        datapointsToAlarm: agePeriods,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      }),
      ...(maintenanceFailures ? { maintenanceFailures } : {}),
    };
    if (options.topic) {
      const action = new actions.SnsAction(options.topic);
      for (const a of Object.values(this.alarms) as cloudwatch.Alarm[]) {
        a.addAlarmAction(action);
        a.addOkAction(action);
      }
    }

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    const graph = (title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = []) =>
      new cloudwatch.GraphWidget({ title, left, right, width: 8 });
    this.dashboard.addWidgets(
      graph('Ingest invocations', [fn.metricInvocations({ period: fiveMinutes })], [errors, throttles]),
      graph('Ingest duration', [
        fn.metricDuration({ period: fiveMinutes, statistic: 'p50' }),
        fn.metricDuration({ period: fiveMinutes, statistic: 'p99' }),
      ]),
      graph('Offset lag (records)', [offsetLag]),
    );
    this.dashboard.addWidgets(
      graph(
        'Records',
        [floeMetric('RecordsIn', 'Sum', fiveMinutes), floeMetric('RowsWritten', 'Sum', fiveMinutes)],
        [deadLettered],
      ),
      graph('Commits', [commits], [conflicts, unknown]),
      graph(
        'Files written',
        [floeMetric('DataFilesWritten', 'Sum', fiveMinutes)],
        [floeMetric('BytesWritten', 'Sum', fiveMinutes)],
      ),
    );
    if (props.stateMachine) {
      this.dashboard.addWidgets(
        graph('Maintenance executions', [
          props.stateMachine.metricStarted({ period: fiveMinutes }),
          props.stateMachine.metricSucceeded({ period: fiveMinutes }),
          props.stateMachine.metricFailed({ period: fiveMinutes }),
        ]),
      );
    }
    this.dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({
        title: 'floe alarms',
        alarms: Object.values(this.alarms),
        width: 24,
      }),
    );
  }
}
