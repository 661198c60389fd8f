/** How the tables are kept healthy: scheduled compaction, snapshot expiry and orphan removal. */
import type { Duration } from 'aws-cdk-lib';
import type * as scheduler from 'aws-cdk-lib/aws-scheduler';

/** Scheduled table maintenance (Step Functions). */
export interface MaintenanceOptions {
  /**
   * Whether to create the state machine, its task functions and the schedules.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * When each table's maintenance runs (EventBridge Scheduler).
   * @default ScheduleExpression.rate(Duration.hours(6))
   */
  readonly schedule?: scheduler.ScheduleExpression;
  /**
   * Snapshots older than this are expired (the newest `minSnapshotsToKeep` always stay).
   * @default Duration.days(5) (Iceberg's `history.expire.max-snapshot-age-ms`)
   */
  readonly snapshotRetention?: Duration;
  /**
   * Snapshots always kept.
   * @default 1
   */
  readonly minSnapshotsToKeep?: number;
  /**
   * Unreferenced files younger than this are never removed (they may belong to a commit in flight).
   * @default Duration.days(3)
   */
  readonly orphanFileAge?: Duration;
  /**
   * Compaction groups rewritten in parallel.
   * @default 4
   */
  readonly maxConcurrency?: number;
  /**
   * Memory of the maintenance functions (compaction holds a group's rows).
   * @default 3008
   */
  readonly memorySize?: number;
  /**
   * Timeout of the maintenance functions.
   * @default Duration.minutes(15)
   */
  readonly timeout?: Duration;
  /**
   * Longest one maintenance execution may run.
   * @default Duration.hours(2)
   */
  readonly executionTimeout?: Duration;
}
