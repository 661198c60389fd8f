/**
 * The alarm for a topic whose history changed under a table (a topic recreated, a cluster replaced, a
 * failover to a mirror): the ingest handler counts `OffsetIdentityMismatches` when a batch holds records
 * at committed offsets that are not the records committed there. Such a batch fails on every retry until
 * an operator starts a new offset epoch (`floe rebase-offsets`), so one datapoint needs a person.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

/** The metric the ingest handler emits on an OffsetIdentityError (functions/handlers/ingest.ts). */
export const OFFSET_IDENTITY_METRIC = 'OffsetIdentityMismatches';

/**
 * An alarm on any `OffsetIdentityMismatches` in five minutes, under the pipeline's service dimension,
 * notifying `topic` (the pipeline's alarm topic) like the other alarms.
 */
export function offsetIdentityAlarm(
  scope: Construct,
  props: { serviceName: string; metricsNamespace: string; topic?: sns.ITopic },
): cloudwatch.Alarm {
  const metric = new cloudwatch.Metric({
    namespace: props.metricsNamespace,
    metricName: OFFSET_IDENTITY_METRIC,
    dimensionsMap: { service: props.serviceName },
    statistic: 'Sum',
    period: Duration.minutes(5),
  });
  const alarm = metric.createAlarm(scope, 'OffsetIdentityMismatch', {
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    alarmDescription:
      "A batch holds records at offsets a table committed that are not the records it committed: the topic's " +
      'history changed (recreated, new cluster, failover). Nothing is skipped or written; the batch fails ' +
      'until `floe rebase-offsets` starts a new offset epoch (see the README, "Record identity")',
  });
  if (props.topic) {
    const action = new actions.SnsAction(props.topic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
  }
  return alarm;
}
