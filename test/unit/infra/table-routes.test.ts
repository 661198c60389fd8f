import { Duration, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { checkEnvironmentSize, KafkaToIceberg } from '../../../infra/kafka-to-iceberg.js';
import type { KafkaToIcebergProps, TableRoute } from '../../../infra/props.js';
import {
  checkRoutes,
  checkS3TablesName,
  renderRoutes,
  splitTableName,
  tableLayout,
} from '../../../infra/table-routes.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';
import { CLUSTER_ARN, newApp, ORDERS_TABLE } from './stacks.js';

const SCHEMA = ORDERS_TABLE.schema;

describe('table routes', () => {
  it('splits table names at the last dot', () => {
    expect(splitTableName('sales.orders')).toEqual({ namespace: 'sales', name: 'orders' });
    expect(splitTableName('a.b.orders')).toEqual({ namespace: 'a.b', name: 'orders' });
    for (const bad of ['orders', '.orders', 'sales.', 'a..b'])
      expect(() => splitTableName(bad)).toThrow(/namespace\.name/);
  });

  it('refuses names S3 Tables would reject', () => {
    expect(() => checkS3TablesName('sales.orders_v2')).not.toThrow();
    for (const bad of ['Sales.orders', 'a.b.orders', 'sales.or-ders'])
      expect(() => checkS3TablesName(bad)).toThrow(/S3 Tables/);
  });

  it('fills in the defaults when rendering', () => {
    expect(renderRoutes([{ topics: ['t'], table: 'a.b' }])).toEqual([
      {
        topics: ['t'],
        table: 'a.b',
        mode: 'append',
        targetFileSizeBytes: 134_217_728,
      },
    ]);
  });

  it('renders every setting in the keys the handlers read, so none is dropped', () => {
    // Arrange
    const route: TableRoute = {
      topics: ['t'],
      table: 'a.b',
      schemaPolicy: 'block',
      sortBy: 'id desc',
      format: { value: 'confluent', registry: { url: 'https://registry.example' } },
      mapping: { columns: { ts: { type: 'timestamptz', epoch: 'seconds' } } },
      when: { header: 'entity', equals: 'order' },
      properties: { 'write.parquet.compression-codec': 'snappy' },
    };

    // Act: what a handler reads from FLOE_TABLES
    const [parsed] = parseRoutes(JSON.parse(JSON.stringify(renderRoutes([route]))));

    // Assess
    expect(parsed.schemaEvolution).toBe('block');
    expect(parsed.sortBy).toBe('id desc');
    expect(parsed.format?.value).toBe('confluent');
    expect(parsed.mapping?.columns).toEqual([{ column: 'ts', type: 'timestamptz', epoch: 'seconds' }]);
    expect(parsed.when).toEqual({ header: 'entity', equals: 'order' });
    expect(parsed.properties).toEqual(
      expect.objectContaining({ 'write.parquet.compression-codec': 'snappy' }),
    );
  });

  it('fails synth for a mapping or condition the handlers would refuse', () => {
    expect(() =>
      // What the prop type refuses at compile time, as untyped JavaScript could still pass it.
      checkRoutes([
        { topics: ['t'], table: 'a.b', mapping: { columns: { ts: { epoch: 'hours' as never } } } },
      ]),
    ).toThrow(/routes\[0\]\.mapping\.columns\.ts\.epoch/);
    expect(() =>
      checkRoutes([
        {
          topics: ['t'],
          table: 'a.b',
          mode: 'upsert',
          identifierColumns: ['id'],
          mapping: { flatten: true },
        },
      ]),
    ).toThrow(/mapping\.flatten: not applied to debezium\/upsert tables/);
    expect(() => checkRoutes([{ topics: ['t'], table: 'a.b', when: { field: 'x' } }])).toThrow(/when/);
  });

  it.each<[string, TableRoute[], RegExp]>([
    ['no routes', [], /at least one table route/],
    [
      'a route without topics',
      [{ topics: [], table: 'a.b' }],
      /routes\[0\]\.topics: expected a non-empty array, each a topic name, got \[\]/,
    ],
    ['CDC without keys', [{ topics: ['t'], table: 'a.b', mode: 'debezium' }], /needs identifierColumns/],
    [
      'upsert without keys',
      [{ topics: ['t'], table: 'a.b', mode: 'upsert', identifierColumns: [] }],
      /needs identifierColumns/,
    ],
    ['a bad file size', [{ topics: ['t'], table: 'a.b', targetFileSizeBytes: 0 }], /positive integer/],
    [
      'a bad mode',
      [{ topics: ['t'], table: 'a.b', mode: 'merge' as 'append' }],
      /routes\[0\]\.mode: expected one of append, debezium, upsert, got "merge"/,
    ],
    [
      'a table routed twice',
      [
        { topics: ['t'], table: 'a.b' },
        { topics: ['u'], table: 'a.b' },
      ],
      /routed twice/,
    ],
    [
      'a key column not in the schema',
      [{ topics: ['t'], table: 'a.b', schema: SCHEMA, mode: 'upsert', identifierColumns: ['nope'] }],
      /identifier column 'nope'/,
    ],
    [
      'an invalid schema',
      [
        {
          topics: ['t'],
          table: 'a.b',
          schema: { ...SCHEMA, fields: [{ id: 1, name: 'x', required: true, type: 'strin' as 'string' }] },
        },
      ],
      /schema/,
    ],
    [
      'a partition column not in the schema',
      [{ topics: ['t'], table: 'a.b', schema: SCHEMA, partitionBy: 'day(nope)' }],
      /'nope'/,
    ],
  ])('refuses %s', (_name, routes, message) => {
    expect(() => checkRoutes(routes)).toThrow(message);
  });
});

describe('table layout (what floe creates a route’s table with)', () => {
  it('appends the _kafka lineage column after the schema’s highest id unless lineage is off', () => {
    // Act
    const withLineage = tableLayout({ topics: ['t'], table: 'a.b', schema: SCHEMA })!.schema;
    const without = tableLayout({ topics: ['t'], table: 'a.b', schema: SCHEMA, kafkaLineage: false })!.schema;
    // Assess
    expect(withLineage.fields.slice(0, 3)).toEqual(SCHEMA.fields);
    expect(withLineage.fields[3]).toMatchObject({
      id: 4,
      name: '_kafka',
      required: false,
      type: { type: 'struct' },
    });
    expect(without.fields).toEqual(SCHEMA.fields);
  });

  it('binds partitionBy with Iceberg’s default names and ids', () => {
    const { partitionSpec } = tableLayout({
      ...ORDERS_TABLE,
      partitionBy: 'day(order_ts), bucket(16, order_id), region',
    })!;
    expect(partitionSpec?.fields).toEqual([
      { 'source-id': 2, 'field-id': 1000, name: 'order_ts_day', transform: 'day' },
      { 'source-id': 1, 'field-id': 1001, name: 'order_id_bucket', transform: 'bucket[16]' },
      { 'source-id': 3, 'field-id': 1002, name: 'region', transform: 'identity' },
    ]);
  });

  it('has none without a schema', () => {
    expect(tableLayout({ topics: ['t'], table: 'a.b', partitionBy: 'day(x)' })).toBeUndefined();
  });
});

describe('construct-level checks', () => {
  const base = (overrides: Partial<KafkaToIcebergProps>): KafkaToIcebergProps => ({
    source: { kind: 'msk', clusterArn: CLUSTER_ARN },
    tables: [{ topics: ['orders'], table: 'sales.orders' }],
    catalog: { kind: 's3tables' },
    ...overrides,
  });
  const build = (props: KafkaToIcebergProps) => new KafkaToIceberg(new Stack(newApp(), 'S'), 'P', props);

  it('refuses provisioned-only settings without provisioned pollers', () => {
    expect(() => build(base({ source: { kind: 'msk', clusterArn: CLUSTER_ARN, retryAttempts: 2 } }))).toThrow(
      /retryAttempts needs provisionedPollers/,
    );
    expect(() =>
      build(base({ source: { kind: 'msk', clusterArn: CLUSTER_ARN, bisectBatchOnError: true } })),
    ).toThrow(/bisectBatchOnError needs provisionedPollers/);
  });

  it('refuses a routed topic the source does not consume', () => {
    expect(() =>
      build(base({ source: { kind: 'msk', clusterArn: CLUSTER_ARN, topics: ['other'] } })),
    ).toThrow(/'orders' is routed to a table but not consumed/);
  });

  it('refuses plaintext registry credentials and registry secrets given as strings', () => {
    const withRegistry = (registry: { url: string; [key: string]: unknown }) =>
      base({
        tables: [{ topics: ['orders'], table: 'sales.orders', format: { value: 'confluent', registry } }],
      });
    expect(() => build(withRegistry({ url: 'https://sr', basicAuth: 'u:p' }))).toThrow(
      /format.registry.basicAuth would be written in plain text .* registryCredentials/,
    );
    expect(() => build(withRegistry({ url: 'https://sr', bearerToken: 't' }))).toThrow(
      /format.registry.bearerToken would be written in plain text/,
    );
    expect(() => build(withRegistry({ url: 'https://sr', credentialsSecretArn: 'arn:x' }))).toThrow(
      /pass the registry's secret as registryCredentials/,
    );
  });

  it('still refuses an environment over Lambda’s 4 KB (counting a deploy-time value as an ARN)', () => {
    const stack = new Stack(newApp(), 'E');
    expect(() => checkEnvironmentSize({ A: 'x'.repeat(4000) })).not.toThrow();
    expect(() => checkEnvironmentSize({ A: 'x'.repeat(4000), B: stack.account })).toThrow(
      /over Lambda's 4 KB: A, B/,
    );
  });

  it('refuses a route holding a deploy-time value (the routes file is written at synth)', () => {
    const stack = new Stack(newApp(), 'T');
    const tables = [{ topics: ['orders'], table: 'sales.orders', properties: { owner: stack.account } }];
    expect(() => new KafkaToIceberg(stack, 'P', base({ tables }))).toThrow(/known only at deploy time/);
  });

  it('refuses a commit-age alarm longer than CloudWatch can evaluate', () => {
    expect(() => build(base({ alarms: { maxCommitAge: Duration.days(2) } }))).toThrow(/one day/);
  });
});
