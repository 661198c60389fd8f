/**
 * Per-table alarms and dashboard widgets, on the metrics the ingest handler emits per table after each
 * commit (functions/handlers/ingest-metrics.ts), under `{ service, table }` in the floe namespace:
 *
 * - `TableCommits` (1 per committed snapshot): a table with none for `staleTable.after` while records
 *   wait (`OffsetLag` > 0 in every period) is stale. A composite alarm (no commit AND lag) rather than
 *   metric math: an alarm's missing-data treatment reads "no datapoint" directly (as `commitAge` does),
 *   where math over a metric with no datapoints at all needs FILL to give anything to compare.
 * - `CommittedRecordAge` (ms from the batch's newest record timestamp to its commit): how far behind
 *   the table is in time, alarmed only above a bound the user gives (props/alarms.ts says why).
 *
 * The lag side is the ingest function's `OffsetLag` (`FunctionName`): Lambda publishes it without
 * opting in, at the topic level, so a table is judged by the most-lagging mapping of its function.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import type { AlarmOptions } from './props.js';

/** The metrics the ingest handler emits per table (functions/handlers/ingest-metrics.ts). */
export const TABLE_COMMITS_METRIC = 'TableCommits';
export const COMMITTED_RECORD_AGE_METRIC = 'CommittedRecordAge';

/** The per-table alarms of one `KafkaToIceberg`, each keyed by its table (`namespace.name`). */
export interface FloeTableAlarms {
  /**
   * The table has not committed (`TableCommits`) for `staleTable.after` while the ingest function's
   * `OffsetLag` was above 0 in every period: records wait, and none reach the table. Empty when
   * `staleTable.enabled` is false.
   */
  readonly staleTables: Readonly<Record<string, cloudwatch.CompositeAlarm>>;
  /** The newest committed record was older than `committedRecordAge.threshold`; empty unless it is set. */
  readonly committedRecordAge: Readonly<Record<string, cloudwatch.Alarm>>;
}

export interface TableAlarmProps {
  /** The routes' tables as the handler names them (`namespace.name`), each once. */
  readonly tables: readonly string[];
  readonly serviceName: string;
  readonly metricsNamespace: string;
  /** The ingest function's `OffsetLag` (Maximum, 5 minutes). */
  readonly offsetLag: cloudwatch.Metric;
  readonly options: AlarmOptions;
}

const FIVE_MINUTES = Duration.minutes(5);

/**
 * A number of 5-minute periods an alarm evaluates: a whole number from 1 to a day (CloudWatch's limit).
 * @throws Error for anything else
 */
export function checkEvaluationPeriods(periods: number, what: string): number {
  if (!Number.isInteger(periods) || periods < 1 || periods > 288) {
    throw new Error(
      `alarms.${what} must be a whole number of 5-minute periods from 1 to 288 (CloudWatch evaluates at most a day), got ${periods}`,
    );
  }
  return periods;
}

/**
 * How long a window is in 5-minute periods, CloudWatch's evaluation limit (a day) checked.
 * @throws Error for a window under 5 minutes or over a day
 */
export function periodsOf(window: Duration, what: string): number {
  if (window.toSeconds() > Duration.days(1).toSeconds() || window.toSeconds() < 300) {
    throw new Error(
      `alarms.${what} must be between 5 minutes and one day (CloudWatch evaluates at most a day)`,
    );
  }
  return Math.ceil(window.toSeconds() / FIVE_MINUTES.toSeconds());
}

/** One per-table floe metric (for a graph, labelled with its table: an alarm's metric takes no label). */
export function tableMetric(
  props: Pick<TableAlarmProps, 'serviceName' | 'metricsNamespace'>,
  table: string,
  metricName: string,
  statistic: string,
  labelled = false,
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: props.metricsNamespace,
    metricName,
    dimensionsMap: { service: props.serviceName, table },
    statistic,
    period: FIVE_MINUTES,
    ...(labelled ? { label: table } : {}),
  });
}

/**
 * Per table: `noCommit` (no `TableCommits` in every period of the window; missing data breaches) AND
 * the shared `lagging` (OffsetLag > 0 in every period of it). The two halves notify no one; the
 * composite does.
 * @throws Error for a `staleTable.after` outside 5 minutes – one day
 */
function staleTableAlarms(scope: Construct, props: TableAlarmProps) {
  const options = props.options.staleTable ?? {};
  if (options.enabled === false || props.tables.length === 0) return {};
  const after = options.after ?? Duration.minutes(30);
  const periods = periodsOf(after, 'staleTable.after');
  const window = { evaluationPeriods: periods, datapointsToAlarm: periods };
  const lagging = props.offsetLag.createAlarm(scope, 'Lagging', {
    ...window,
    threshold: 0,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    alarmDescription: `Records have waited (OffsetLag > 0) in every 5-minute period for ${after.toHumanString()} (half of the stale-table alarms; notifies no one)`,
  });
  const alarms: Record<string, cloudwatch.CompositeAlarm> = {};
  for (const table of props.tables) {
    const noCommit = tableMetric(props, table, TABLE_COMMITS_METRIC, 'Sum').createAlarm(
      scope,
      `NoCommit-${table}`,
      {
        ...window,
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
        alarmDescription: `${table} has not committed for ${after.toHumanString()} (half of its stale-table alarm; notifies no one)`,
      },
    );
    alarms[table] = new cloudwatch.CompositeAlarm(scope, `Stale-${table}`, {
      alarmRule: cloudwatch.AlarmRule.allOf(
        cloudwatch.AlarmRule.fromAlarm(noCommit, cloudwatch.AlarmState.ALARM),
        cloudwatch.AlarmRule.fromAlarm(lagging, cloudwatch.AlarmState.ALARM),
      ),
      alarmDescription:
        `${table} has not committed for ${after.toHumanString()} while records waited for the ingest function ` +
        '(OffsetLag > 0 throughout): see infra/README.md, "Watch it"',
    });
  }
  return alarms;
}

/**
 * Per table, only with `committedRecordAge.threshold`: `CommittedRecordAge` (Maximum over 5 minutes)
 * above it in `evaluationPeriods` periods in a row. No commit means no datapoint, and not breaching:
 * a table that stopped committing is the stale-table alarm's to report.
 * @throws Error for `evaluationPeriods` outside 1 – 288
 */
function recordAgeAlarms(scope: Construct, props: TableAlarmProps) {
  const options = props.options.committedRecordAge ?? {};
  if (options.threshold === undefined) return {};
  const periods = checkEvaluationPeriods(
    options.evaluationPeriods ?? 3,
    'committedRecordAge.evaluationPeriods',
  );
  const alarms: Record<string, cloudwatch.Alarm> = {};
  for (const table of props.tables) {
    alarms[table] = tableMetric(props, table, COMMITTED_RECORD_AGE_METRIC, 'Maximum').createAlarm(
      scope,
      `RecordAge-${table}`,
      {
        threshold: options.threshold.toMilliseconds(),
        evaluationPeriods: periods,
        datapointsToAlarm: periods,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `The newest record ${table} committed was more than ${options.threshold.toHumanString()} old`,
      },
    );
  }
  return alarms;
}

/**
 * The per-table alarms, in a construct of their own (`Tables`) under `scope`.
 * @throws Error for a `staleTable.after` outside 5 minutes – one day, or a
 * `committedRecordAge.evaluationPeriods` outside 1 – 288
 */
export function createTableAlarms(scope: Construct, props: TableAlarmProps): FloeTableAlarms {
  const tables = new Construct(scope, 'Tables');
  return {
    staleTables: staleTableAlarms(tables, props),
    committedRecordAge: recordAgeAlarms(tables, props),
  };
}

/** The alarms that notify (the composites' halves do not), for the SNS actions and the status widget. */
export function notifyingTableAlarms(alarms: FloeTableAlarms): cloudwatch.AlarmBase[] {
  return [...Object.values(alarms.staleTables), ...Object.values(alarms.committedRecordAge)];
}

/** Dashboard row: commits per table, and the age of the newest committed record per table. */
export function tableWidgets(
  props: Pick<TableAlarmProps, 'tables' | 'serviceName' | 'metricsNamespace' | 'options'>,
): cloudwatch.IWidget[] {
  const threshold = props.options.committedRecordAge?.threshold;
  return [
    new cloudwatch.GraphWidget({
      title: 'Commits per table',
      left: props.tables.map((t) => tableMetric(props, t, TABLE_COMMITS_METRIC, 'Sum', true)),
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: 'Newest committed record age per table (ms)',
      left: props.tables.map((t) => tableMetric(props, t, COMMITTED_RECORD_AGE_METRIC, 'Maximum', true)),
      leftAnnotations: threshold
        ? [{ value: threshold.toMilliseconds(), label: `alarm above ${threshold.toHumanString()}` }]
        : [],
      width: 12,
    }),
  ];
}
