/**
 * How the pipeline is watched: the alarms' thresholds and where they notify (infra/alarms.ts, and
 * infra/table-alarms.ts for the per-table ones).
 */
import type { Duration } from 'aws-cdk-lib';
import type * as sns from 'aws-cdk-lib/aws-sns';

/** Alarm thresholds and where alarms notify. */
export interface AlarmOptions {
  /**
   * Topic every alarm notifies (alarm and OK).
   * @default - alarms have no actions
   */
  readonly topic?: sns.ITopic;
  /**
   * Alarm (`offsetLag`) when Lambda's `OffsetLag` for the ingest function (records behind the topic head,
   * at the topic level; namespace `AWS/Lambda`, dimension `FunctionName`, `Maximum` over 5 minutes) is
   * above this in `offsetLagEvaluationPeriods` periods in a row.
   * @default 100000
   */
  readonly offsetLagThreshold?: number;
  /**
   * 5-minute periods in a row `OffsetLag` must stay above `offsetLagThreshold` before `offsetLag` alarms:
   * a burst the function catches up with inside this window does not page anyone. 1 to 288 (one day).
   * @default 3
   */
  readonly offsetLagEvaluationPeriods?: number;
  /**
   * Alarm when no batch has committed for this long (no `Commits` datapoint counts as breaching), so an
   * idle topic alarms too: raise it for topics that are quiet for long. Between 5 minutes and one day.
   * @default Duration.hours(1)
   */
  readonly maxCommitAge?: Duration;
  /**
   * Alarm (`partitionBlocked`) when records have waited (`OffsetLag` > 0) behind a failing ingest
   * function (`Errors` > 0) in every 5-minute period for this long. Between 5 minutes and one day.
   * @default Duration.minutes(30)
   */
  readonly blockedPartitionAfter?: Duration;
  /**
   * Commit conflicts (retried, but a sign of contention) per 15 minutes.
   * @default 10
   */
  readonly commitConflictThreshold?: number;
  /**
   * Per table: alarm (`tableAlarms.staleTables`) when the table has not committed for a while although
   * records wait on its mappings. Unlike `maxCommitAge`, a quiet topic does not alarm.
   * @default - enabled, with the defaults of `StaleTableAlarmOptions`
   */
  readonly staleTable?: StaleTableAlarmOptions;
  /**
   * Per table: alarm (`tableAlarms.committedRecordAge`) when the newest record a commit brought into the
   * table was older than a bound (`CommittedRecordAge`). Off unless `threshold` is given: the age is
   * measured from Kafka's record timestamp, which producers set (CreateTime) and which a backfill, a
   * replay or a producer stamping event time legitimately puts far in the past, so no bound fits every
   * topic. The dashboard graphs the metric either way.
   * @default - no alarm
   */
  readonly committedRecordAge?: RecordAgeAlarmOptions;
}

/** The per-table alarm on a table that stopped committing while records wait for it. */
export interface StaleTableAlarmOptions {
  /**
   * Create the per-table stale-table alarms.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * How long a table may go without a commit (no `TableCommits` datapoint for it) while the ingest
   * function's `OffsetLag` is above 0 in every 5-minute period, before its alarm fires. Between 5
   * minutes and one day; keep it above the mappings' batching window plus the function's timeout.
   * @default Duration.minutes(30)
   */
  readonly after?: Duration;
}

/** The per-table alarm on the age of the newest record a commit brought into the table. */
export interface RecordAgeAlarmOptions {
  /**
   * Alarm when `CommittedRecordAge` (the time from the newest Kafka record timestamp of a committed batch
   * to its commit, maximum over 5 minutes) is above this in `evaluationPeriods` periods in a row.
   * @default - no alarm
   */
  readonly threshold?: Duration;
  /**
   * 5-minute periods in a row above `threshold` before the alarm fires. 1 to 288 (one day).
   * @default 3
   */
  readonly evaluationPeriods?: number;
}
