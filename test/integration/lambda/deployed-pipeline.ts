/**
 * A floe pipeline "deployed" on this machine: the KafkaToIceberg construct synthesized with real bundling
 * (its REST catalog pointed at an in-process REST server over a local warehouse, behind a proxy a test
 * can take down), its DynamoDB lock table created in moto under the name the template's reference
 * resolves to, and each function run from its `cdk.out` asset under aws-lambda-ric.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Duration, Stack } from 'aws-cdk-lib';
import { createLockTable } from '../../../functions/core/lock/dynamodb-lock.js';
import type { Schema } from '../../../functions/core/spec/types.js';
import { KafkaToIceberg } from '../../../infra/kafka-to-iceberg.js';
import { RestCatalogServer } from '../../support/rest-catalog-server.js';
import { type RicProcess, startRic } from '../../support/ric-process.js';
import { type SynthesizedStack, synthesizeStack } from '../../support/synthesized-functions.js';
import { tempWarehouse } from '../../support/tables.js';
import { motoEndpoint, TEST_CREDENTIALS, TEST_REGION } from '../moto.js';

const schema = (file: string): Schema => JSON.parse(readFileSync(file, 'utf8')) as Schema;

export const ORDERS_TABLE = 'sales.orders';
export const DOCS_TABLE = 'docs.mytopic';
const CLUSTER_ARN =
  'arn:aws:kafka:us-east-1:111122223333:cluster/floe-harness/00000000-0000-0000-0000-000000000000-1';

/** A TCP proxy in front of the catalog: `down()` refuses and cuts every connection until `up()`. */
export class CatalogProxy {
  private isDown = false;
  private readonly sockets = new Set<Socket>();
  private constructor(
    private readonly server: Server,
    readonly uri: string,
  ) {}

  static async start(targetPort: number): Promise<CatalogProxy> {
    let proxy: CatalogProxy | undefined;
    const server = createServer((client) => {
      if (!proxy || proxy.isDown) return void client.destroy();
      const upstream = connect(targetPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        proxy.sockets.add(s);
        s.once('close', () => proxy?.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new CatalogProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return proxy;
  }

  down(): void {
    this.isDown = true;
    for (const s of this.sockets) s.destroy();
  }

  up(): void {
    this.isDown = false;
  }

  async close(): Promise<void> {
    this.down();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export interface DeployedPipeline {
  stack: SynthesizedStack;
  catalog: RestCatalogServer;
  proxy: CatalogProxy;
  warehouse: string;
  lockTable: string;
  /**
   * Starts the function with logical id `logicalId` (its own process and Runtime API); `handler`
   * replaces the template's (to see what the runtime client does with a wrong one).
   */
  start(logicalId: string, handler?: string): Promise<RicProcess>;
  /** The logical id of the one function whose handler is `index.<name>`. */
  functionId(handlerExport: string): string;
  cleanup(): Promise<void>;
}

/** Synthesizes and wires the pipeline; moto must be up (global setup). */
export async function deployPipeline(): Promise<DeployedPipeline> {
  const { dir: warehouse, cleanup: dropWarehouse } = await tempWarehouse();
  const catalog = await RestCatalogServer.start({ warehouse });
  const proxy = await CatalogProxy.start(Number(new URL(catalog.uri).port));
  const stack = await synthesizeStack((app) => {
    const s = new Stack(app, 'FloeLambdaHarness', { env: { account: '111122223333', region: TEST_REGION } });
    new KafkaToIceberg(s, 'Pipeline', {
      source: { kind: 'msk', clusterArn: CLUSTER_ARN },
      tables: [
        {
          topics: ['orders'],
          table: ORDERS_TABLE,
          schema: schema('events/orders.schema.json'),
          partitionBy: 'day(order_ts)',
        },
        { topics: ['mytopic'], table: DOCS_TABLE, schema: schema('events/mytopic.schema.json') },
      ],
      catalog: { kind: 'rest', uri: proxy.uri, warehouse: 'lake' },
      maintenance: { snapshotRetention: Duration.days(5) },
      logLevel: 'WARN',
    });
    return s;
  });
  // The lock table the template names, created in moto under a name of this run.
  const lockId = stack.idsOfType('AWS::DynamoDB::Table')[0]!;
  const lockTable = `floe-lock-${Math.random().toString(36).slice(2, 10)}`;
  await createLockTable(
    new DynamoDBClient({ endpoint: motoEndpoint(), region: TEST_REGION, credentials: TEST_CREDENTIALS }),
    lockTable,
  );
  const resolve = (id: string, attribute?: string): string => {
    if (id === lockId && attribute === undefined) return lockTable;
    throw new Error(`the harness cannot resolve ${id}${attribute ? `.${attribute}` : ''}`);
  };
  const running = new Set<RicProcess>();
  return {
    stack,
    catalog,
    proxy,
    warehouse,
    lockTable,
    async start(logicalId, handler) {
      const spec = stack.functionSpec(logicalId, resolve);
      const fn = await startRic(handler ? { ...spec, handler } : spec, {
        // the only additions to the template's environment: where moto is, and its dummy credentials
        AWS_ENDPOINT_URL: motoEndpoint(),
        AWS_REGION: TEST_REGION,
        AWS_DEFAULT_REGION: TEST_REGION,
        AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
      });
      running.add(fn);
      return fn;
    },
    functionId(handlerExport) {
      const ids = stack.functionIds[`index.${handlerExport}`] ?? [];
      if (ids.length !== 1) throw new Error(`expected one function index.${handlerExport}, found ${ids}`);
      return ids[0]!;
    },
    async cleanup() {
      for (const fn of running) await fn.stop();
      await proxy.close();
      await catalog.close();
      await stack.cleanup();
      await dropWarehouse();
    },
  };
}
