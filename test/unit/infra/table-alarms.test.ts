/**
 * The lag and staleness alarms as synthesized: the ingest function's `OffsetLag`, the per-table
 * stale-table composites (no `TableCommits` AND lag) and committed-record-age alarms, and the
 * dashboard widgets that show them.
 */
import { Duration, type Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import * as handlerMetrics from '../../../functions/handlers/ingest-metrics.js';
import type { KafkaToIceberg } from '../../../infra/kafka-to-iceberg.js';
import type { AlarmOptions, KafkaToIcebergProps } from '../../../infra/props.js';
import { COMMITTED_RECORD_AGE_METRIC, TABLE_COMMITS_METRIC } from '../../../infra/table-alarms.js';
import { fullProps, selfManagedRestProps, synthExample, synthPipeline } from './stacks.js';

type Properties = Record<string, unknown>;
type Resources = Record<string, { Properties: Properties }>;

const TABLES = ['sales.orders', 'sales.payments'];

/** `fullProps` (two tables, an alarm topic, service `sales-pipeline`) with `alarms` added to its own. */
function withAlarms(alarms: AlarmOptions): (stack: Stack) => KafkaToIcebergProps {
  return (stack) => {
    const props = fullProps(stack);
    return { ...props, alarms: { ...props.alarms, ...alarms } };
  };
}

function alarmsOf(template: Template): [string, Properties][] {
  return Object.entries(template.findResources('AWS::CloudWatch::Alarm') as Resources).map(([id, r]) => [
    id,
    r.Properties,
  ]);
}

function compositesOf(template: Template): [string, Properties][] {
  return Object.entries(template.findResources('AWS::CloudWatch::CompositeAlarm') as Resources).map(
    ([id, r]) => [id, r.Properties],
  );
}

/** Metric alarms on `metric`, with the value of their `table` dimension (if any). */
function byMetric(template: Template, metric: string) {
  return alarmsOf(template)
    .filter(([, a]) => a.MetricName === metric)
    .map(([id, a]) => ({
      id,
      table: (a.Dimensions as { Name: string; Value: unknown }[]).find((d) => d.Name === 'table')?.Value,
      alarm: a,
    }));
}

/**
 * The dashboard's widgets: its body is a `Fn::Join` of JSON text and tokens, each token standing inside a
 * JSON string, so each is replaced by readable text (`ref:<id>`, `arn:<id>`) and the whole parsed.
 */
function dashboardWidgets(template: Template): Properties[] {
  const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard') as Resources);
  const [, parts] = (dashboard.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
  const text = parts
    .map((p) => {
      if (typeof p === 'string') return p;
      const token = p as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
      return token.Ref !== undefined ? `ref:${token.Ref}` : `arn:${token['Fn::GetAtt']?.[0]}`;
    })
    .join('');
  return (JSON.parse(text) as { widgets: Properties[] }).widgets;
}

const widgetTitled = (widgets: Properties[], title: string) =>
  widgets.find((w) => (w.properties as { title?: string }).title === title)?.properties as
    | { metrics: unknown[][]; annotations?: { horizontal: { value: number }[] } }
    | undefined;

describe('lag and staleness alarms with every option set', () => {
  let template: Template;
  let pipeline: KafkaToIceberg;
  beforeAll(() => {
    ({ template, pipeline } = synthPipeline(
      withAlarms({
        offsetLagEvaluationPeriods: 6,
        staleTable: { after: Duration.hours(2) },
        committedRecordAge: { threshold: Duration.minutes(20), evaluationPeriods: 4 },
      }),
    ));
  }, 120_000);

  it("alarms on the ingest function's OffsetLag (AWS/Lambda, FunctionName, Maximum) for the periods given", () => {
    // Prepare
    const lag = byMetric(template, 'OffsetLag').find(({ alarm }) => alarm.Threshold === 5000);
    // Assess
    expect(lag?.alarm).toMatchObject({
      Namespace: 'AWS/Lambda',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: expect.stringMatching(/^PipelineIngest/) } }],
      Statistic: 'Maximum',
      Period: 300,
      EvaluationPeriods: 6,
      DatapointsToAlarm: 6,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: [{ Ref: expect.stringMatching(/AlarmTopic/) }],
    });
  });

  it('alarms per table when no TableCommits came for staleTable.after while OffsetLag stayed above 0', () => {
    // Prepare
    const [lagging] = byMetric(template, 'OffsetLag').filter(({ alarm }) => alarm.Threshold === 0);
    const noCommit = byMetric(template, 'TableCommits');
    const composites = compositesOf(template);
    // Assess: the lag half, every 5-minute period of the 2 hours, notifying no one
    expect(lagging?.alarm).toMatchObject({
      Namespace: 'AWS/Lambda',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: expect.stringMatching(/^PipelineIngest/) } }],
      Statistic: 'Maximum',
      Period: 300,
      EvaluationPeriods: 24,
      DatapointsToAlarm: 24,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(lagging?.alarm.AlarmActions).toBeUndefined();
    // the commit half of each table: no datapoint breaches, and it notifies no one either
    expect(noCommit.map((a) => a.table).sort()).toEqual(TABLES);
    for (const { alarm } of noCommit) {
      expect(alarm).toMatchObject({
        Namespace: 'floe-test',
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'LessThanThreshold',
        EvaluationPeriods: 24,
        DatapointsToAlarm: 24,
        TreatMissingData: 'breaching',
      });
      expect(alarm.Dimensions).toEqual([
        { Name: 'service', Value: 'sales-pipeline' },
        { Name: 'table', Value: expect.any(String) },
      ]);
      expect(alarm.AlarmActions).toBeUndefined();
    }
    // one composite per table: ALARM(its no-commit half) AND ALARM(the lag half), and it notifies
    expect(composites).toHaveLength(2);
    for (const table of TABLES) {
      const half = noCommit.find((a) => a.table === table);
      const composite = composites.find(([, c]) => JSON.stringify(c.AlarmRule).includes(`"${half?.id}"`));
      const rule = JSON.stringify(composite?.[1].AlarmRule);
      expect(rule).toMatch(/ALARM\(\\"".*\\"\) AND ALARM\(\\"".*\\"\)/);
      expect(rule).toContain(`"${lagging?.id}"`);
      expect(composite?.[1]).toMatchObject({
        AlarmActions: [{ Ref: expect.stringMatching(/AlarmTopic/) }],
        OKActions: [{ Ref: expect.stringMatching(/AlarmTopic/) }],
      });
    }
    expect(Object.keys(pipeline.tableAlarms.staleTables).sort()).toEqual(TABLES);
  });

  it('alarms per table when the newest committed record was older than committedRecordAge.threshold', () => {
    // Prepare
    const age = byMetric(template, 'CommittedRecordAge');
    // Assess
    expect(age.map((a) => a.table).sort()).toEqual(TABLES);
    for (const { alarm, table } of age) {
      expect(alarm).toMatchObject({
        Namespace: 'floe-test',
        Dimensions: [
          { Name: 'service', Value: 'sales-pipeline' },
          { Name: 'table', Value: table },
        ],
        Statistic: 'Maximum',
        Period: 300,
        Threshold: 1_200_000,
        EvaluationPeriods: 4,
        DatapointsToAlarm: 4,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: expect.stringMatching(/AlarmTopic/) }],
      });
    }
    expect(Object.keys(pipeline.tableAlarms.committedRecordAge).sort()).toEqual(TABLES);
  });

  it('graphs commits and record age per table, with the alarm threshold, and shows the new alarms', () => {
    // Prepare
    const widgets = dashboardWidgets(template);
    const commits = widgetTitled(widgets, 'Commits per table');
    const age = widgetTitled(widgets, 'Newest committed record age per table (ms)');
    const status = widgets.find((w) => (w.properties as { title?: string }).title === 'floe alarms');
    // Assess: one line per table, under service and table, labelled with the table
    const lines = (w: typeof commits) =>
      w?.metrics.map((m) => [m[0], m[1], m[2], m[3], m[4], m[5], (m[6] as { label?: string }).label]);
    expect(lines(commits)).toEqual(
      TABLES.map((t) => ['floe-test', 'TableCommits', 'service', 'sales-pipeline', 'table', t, t]),
    );
    expect(lines(age)).toEqual(
      TABLES.map((t) => ['floe-test', 'CommittedRecordAge', 'service', 'sales-pipeline', 'table', t, t]),
    );
    expect(age?.metrics.map((m) => (m[6] as { stat?: string }).stat)).toEqual(['Maximum', 'Maximum']);
    expect(age?.annotations?.horizontal.map((h) => h.value)).toEqual([1_200_000]);
    const shown = (status?.properties as { alarms: string[] } | undefined)?.alarms ?? [];
    for (const [id] of [
      ...compositesOf(template),
      ...byMetric(template, 'CommittedRecordAge').map((a) => [a.id]),
    ])
      expect(shown).toContain(`arn:${id}`);
    // the halves of the composites are not on the status widget (a quiet table's no-commit half is
    // in ALARM all the time)
    for (const { id } of byMetric(template, 'TableCommits')) expect(shown).not.toContain(`arn:${id}`);
  });
});

describe('lag and staleness alarms by default', () => {
  it('evaluates OffsetLag over 3 periods, stale tables over 30 minutes, and creates no record-age alarm', () => {
    // Prepare
    const { template } = synthExample();
    // Assess
    const [lag] = byMetric(template, 'OffsetLag').filter(({ alarm }) => alarm.Threshold === 100_000);
    expect(lag?.alarm).toMatchObject({ EvaluationPeriods: 3, DatapointsToAlarm: 3 });
    const [noCommit] = byMetric(template, 'TableCommits');
    expect(noCommit).toMatchObject({ table: 'sales.orders', alarm: { EvaluationPeriods: 6 } });
    expect(compositesOf(template)).toHaveLength(1);
    expect(byMetric(template, 'CommittedRecordAge')).toEqual([]);
    // the age is graphed all the same, with no threshold line
    const age = widgetTitled(dashboardWidgets(template), 'Newest committed record age per table (ms)');
    expect(age?.metrics).toHaveLength(1);
    expect(age?.annotations).toBeUndefined();
  }, 120_000);

  it('creates no stale-table alarm, nor its halves, when staleTable.enabled is false', () => {
    // Prepare
    const { template, pipeline } = synthPipeline((stack) => ({
      ...selfManagedRestProps(stack),
      alarms: { staleTable: { enabled: false } },
    }));
    // Assess
    expect(compositesOf(template)).toEqual([]);
    expect(byMetric(template, 'TableCommits')).toEqual([]);
    expect(byMetric(template, 'OffsetLag').map(({ alarm }) => alarm.Threshold)).toEqual([100_000]);
    expect(pipeline.tableAlarms).toEqual({ staleTables: {}, committedRecordAge: {} });
  }, 120_000);
});

describe('lag and staleness alarm options out of range', () => {
  const cases: [string, AlarmOptions, RegExp][] = [
    ['no period', { offsetLagEvaluationPeriods: 0 }, /offsetLagEvaluationPeriods .* got 0/],
    ['over a day', { offsetLagEvaluationPeriods: 289 }, /offsetLagEvaluationPeriods .* got 289/],
    ['a fraction', { offsetLagEvaluationPeriods: 1.5 }, /offsetLagEvaluationPeriods/],
    ['a window under 5 minutes', { staleTable: { after: Duration.minutes(1) } }, /staleTable\.after/],
    ['a window over a day', { staleTable: { after: Duration.hours(25) } }, /staleTable\.after/],
    [
      'no record-age period',
      { committedRecordAge: { threshold: Duration.minutes(5), evaluationPeriods: 0 } },
      /committedRecordAge\.evaluationPeriods/,
    ],
  ];
  it.each(cases)('refuses %s', (_, alarms, message) => {
    expect(() => synthPipeline((stack) => ({ ...selfManagedRestProps(stack), alarms }))).toThrow(message);
  });
});

describe('the per-table metric names', () => {
  it('are the ones the ingest handler emits', () => {
    expect(TABLE_COMMITS_METRIC).toBe(handlerMetrics.TABLE_COMMITS_METRIC);
    expect(COMMITTED_RECORD_AGE_METRIC).toBe(handlerMetrics.COMMITTED_RECORD_AGE_METRIC);
  });
});
