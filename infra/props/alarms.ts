/** How the pipeline is watched: the alarms' thresholds and where they notify (infra/alarms.ts). */
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
   * Records behind the topic head (ESM `OffsetLag`, maximum over 5 minutes, 3 periods in a row).
   * @default 100000
   */
  readonly offsetLagThreshold?: number;
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
}
