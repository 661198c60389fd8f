/** The construct's `aggregate` prop: rendered as the handlers read it, checked at synth. */
import { describe, expect, it } from 'vitest';
import type { TableRoute } from '../../../infra/props.js';
import { CLUSTER_ARN, fullProps, selfManagedRestProps, synthPipeline } from '../infra/stacks.js';
import { checkRoutes, renderRoutes, tableLayout } from '../../../infra/table-routes.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';

const SQL =
  "SELECT user_id, SUM(amount) AS paid, COUNT(*) AS orders FROM orders WHERE status = 'PAID' GROUP BY user_id, TUMBLE(order_ts, INTERVAL '1' MINUTE)";

const route = (sql = SQL): TableRoute => ({
  topics: ['orders'],
  table: 'rt.paid_per_user_minute',
  schema: {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'user_id', required: true, type: 'long' },
      { id: 2, name: 'amount', required: true, type: 'decimal(10, 2)' },
      { id: 3, name: 'status', required: false, type: 'string' },
      { id: 4, name: 'order_ts', required: true, type: 'timestamptz' },
    ],
  },
  partitionBy: 'day(window_start)',
  aggregate: {
    sql,
    allowedLatenessSeconds: 60,
    partitions: 3,
    emit: { topic: 'paid', bootstrapServers: 'b-1:9092' },
  },
});

describe('aggregate routes in the construct', () => {
  it('renders the aggregate as is, with no mode, and the handlers parse it', () => {
    const [rendered] = renderRoutes([route()]);
    expect(rendered.mode).toBeUndefined();
    expect(rendered.aggregate).toEqual(route().aggregate);
    const [parsed] = parseRoutes(JSON.parse(JSON.stringify([rendered])));
    expect(parsed.aggregate?.plan.query.groupBy).toEqual(['user_id']);
    expect(() => checkRoutes([route()])).not.toThrow();
  });

  it('lays the table out with the query’s columns, partitioned on window_start', () => {
    const layout = tableLayout(route());
    expect(layout?.schema.fields.map((f) => f.name)).toEqual([
      'user_id',
      'window_start',
      'window_end',
      'paid',
      'orders',
      'window_closed',
    ]);
    expect(layout?.schema['identifier-field-ids']).toEqual([1, 2]);
    expect(layout?.partitionSpec?.fields).toEqual([
      { 'source-id': 2, 'field-id': 1000, name: 'window_start_day', transform: 'day' },
    ]);
  });

  it('fails synth naming the clause at fault', () => {
    expect(() => checkRoutes([route(SQL.replace('TUMBLE', 'HOP'))])).toThrow(
      'routes[0].aggregate.sql GROUP BY: HOP windows are not supported',
    );
    expect(() => checkRoutes([route(SQL.replace('SUM(amount)', 'SUM(status)'))])).toThrow(
      'routes[0].aggregate.sql SELECT: SUM(status) needs a numeric column; status is string',
    );
  });
});

describe('an aggregate route emitting with MSK IAM auth', () => {
  const iamRoute = (): TableRoute => {
    const r = route();
    return {
      ...r,
      aggregate: {
        ...r.aggregate!,
        emit: { topic: 'paid', bootstrapServers: 'b-1:9098', auth: 'aws-msk-iam' },
      },
    };
  };

  it('lets the ingest role connect and write the emit topic of the source cluster, not create it', () => {
    // Act
    const { template } = synthPipeline((stack) => ({ ...fullProps(stack), tables: [iamRoute()] }));

    // Assess
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (p) =>
        (
          p.Properties as {
            PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] };
          }
        ).PolicyDocument.Statement,
    );
    const actions = (s: { Action: string | string[] }) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
    const write = statements.filter((s) => actions(s).includes('kafka-cluster:WriteData'));
    expect(write.map((s) => [actions(s), s.Resource])).toEqual([
      [
        ['kafka-cluster:DescribeTopic', 'kafka-cluster:WriteData'],
        'arn:aws:kafka:eu-west-1:111122223333:topic/sales/5a6b7c8d-1111-2222-3333-444455556666-2/paid',
      ],
    ]);
    expect(
      statements.filter((s) => actions(s).includes('kafka-cluster:Connect')).map((s) => s.Resource),
    ).toContain(CLUSTER_ARN);
    expect(statements.some((s) => actions(s).includes('kafka-cluster:CreateTopic'))).toBe(false);
  }, 120_000);

  it('fails synth when the source is not an MSK cluster', () => {
    expect(() =>
      synthPipeline((stack) => ({
        ...selfManagedRestProps(stack),
        tables: [iamRoute()],
      })),
    ).toThrow("an aggregate route emits with auth 'aws-msk-iam', but the source is not an MSK cluster");
  }, 120_000);
});
