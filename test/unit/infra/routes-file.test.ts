/**
 * Routes travel in the ingest function's code (floe-routes.json), not in its 4 KB environment: a stack
 * with 50 routes and schemas synthesizes with real bundling, every function's environment stays small,
 * and the handler's own loader reads the 50 routes back from the synthesized asset folder.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadHandlerConfig } from '../../../functions/handlers/config.js';
import { KafkaToIceberg } from '../../../infra/kafka-to-iceberg.js';
import type { TableRoute } from '../../../infra/props.js';
import { CLUSTER_ARN, ENV } from './stacks.js';

const ROUTES = 50;

/** A route with a 12-column schema: about 1 KB of JSON each, 50 KB in all (12× Lambda's 4 KB). */
function route(i: number): TableRoute {
  const fields = Array.from({ length: 12 }, (_, c) => ({
    id: c + 1,
    name: c === 0 ? 'id' : `column_${c}_of_table_${i}`,
    required: c === 0,
    type: c === 0 ? ('long' as const) : ('string' as const),
  }));
  return {
    topics: [`topic_${i}`],
    table: `lake.table_${i}`,
    schema: { type: 'struct', 'schema-id': 0, fields },
    mode: i % 2 === 0 ? 'append' : 'upsert',
    identifierColumns: ['id'],
  };
}

interface FunctionResource {
  Type: string;
  Properties: {
    Handler: string;
    Code: { S3Key: string };
    Environment: { Variables: Record<string, unknown> };
  };
}

/** Lambda counts keys and values; a value resolved at deploy time is counted as a 128-byte ARN. */
function environmentBytes(variables: Record<string, unknown>): number {
  return Object.entries(variables).reduce(
    (sum, [k, v]) => sum + k.length + (typeof v === 'string' ? Buffer.byteLength(v) : 128),
    0,
  );
}

describe('50 routes with schemas, bundled for real', () => {
  let outdir: string;
  let functions: FunctionResource[];
  let routesBytes: number;

  beforeAll(async () => {
    // Prepare + Act: synthesize with bundling (the esbuild bundles and their asset folders)
    outdir = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-routes-'));
    const app = new App({ outdir });
    const stack = new Stack(app, 'Many', { env: ENV });
    const tables = Array.from({ length: ROUTES }, (_, i) => route(i));
    const pipeline = new KafkaToIceberg(stack, 'Pipeline', {
      source: { kind: 'msk', clusterArn: CLUSTER_ARN },
      tables,
      catalog: { kind: 's3tables' },
    });
    routesBytes = Buffer.byteLength(JSON.stringify(pipeline.renderedRoutes));
    const template = app.synth().getStackByName('Many').template as {
      Resources: Record<string, FunctionResource>;
    };
    functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
  }, 300_000);

  afterAll(() => fs.rm(outdir, { recursive: true, force: true }));

  it('keeps every function’s environment far under Lambda’s 4 KB', () => {
    expect(routesBytes).toBeGreaterThan(12 * 4096);
    expect(functions).toHaveLength(8);
    for (const fn of functions) {
      const bytes = environmentBytes(fn.Properties.Environment.Variables);
      expect(bytes, fn.Properties.Handler).toBeLessThan(1024);
    }
  });

  it('ships the routes in the ingest asset, and the handler’s loader reads all 50 back', async () => {
    // Prepare: the ingest function's asset folder and environment as the template gives them
    const ingest = functions.find((f) => f.Properties.Handler === 'index.handler')!;
    const assetDir = path.join(outdir, `asset.${ingest.Properties.Code.S3Key.replace(/\.zip$/, '')}`);
    // (beside the chunks of the split bundle, `<name>-<hash>.mjs` and their maps: infra/bundle-function.ts)
    const chunk = /-[A-Z0-9]{8}\.mjs(\.map)?$/;
    expect((await fs.readdir(assetDir)).filter((f) => !chunk.test(f)).sort()).toEqual(
      ['floe-routes.json', 'index.mjs', 'index.mjs.map', 'parquet_wasm_bg.wasm'].sort(),
    );
    const env = Object.fromEntries(
      Object.entries(ingest.Properties.Environment.Variables).map(([k, v]) => [
        k,
        // deploy-time values (the table bucket ARN, the lock table name) get stand-ins
        typeof v === 'string' ? v : `arn:aws:s3tables:eu-west-1:111122223333:bucket/${k.toLowerCase()}`,
      ]),
    );
    // Act: as Lambda runs it, with the code directory as LAMBDA_TASK_ROOT
    const config = await loadHandlerConfig({ ...env, LAMBDA_TASK_ROOT: assetDir, AWS_REGION: 'eu-west-1' });
    // Assess
    expect(config.routes).toHaveLength(ROUTES);
    expect(config.routes[49]).toMatchObject({ table: { name: 'table_49' }, mode: 'upsert' });
    expect(config.routes[49].schema?.fields).toHaveLength(12);
  });

  it('gives maintenance no routes: its bundles carry no routes file', async () => {
    for (const fn of functions.filter((f) => f.Properties.Handler !== 'index.handler')) {
      expect(fn.Properties.Environment.Variables.FLOE_TABLES).toBe('[]');
      const assetDir = path.join(outdir, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`);
      expect(await fs.readdir(assetDir)).not.toContain('floe-routes.json');
    }
  });

  it('changes the ingest asset (hash and file) when the routes change, even within one process', async () => {
    // Prepare: two stacks in one app, one route apart (CDK caches bundles per process)
    const app = new App({ outdir: path.join(outdir, 'two') });
    const assetOf = (id: string, tables: TableRoute[]) => {
      const stack = new Stack(app, id, { env: ENV });
      new KafkaToIceberg(stack, 'Pipeline', {
        source: { kind: 'msk', clusterArn: CLUSTER_ARN },
        tables,
        catalog: { kind: 's3tables' },
        maintenance: { enabled: false },
      });
      return stack;
    };
    assetOf('One', [route(0)]);
    assetOf('Two', [route(0), route(1)]);
    // Act
    const assembly = app.synth();
    const keys = ['One', 'Two'].map((name) => {
      const resources = assembly.getStackByName(name).template.Resources as Record<string, FunctionResource>;
      return Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function')!.Properties.Code.S3Key;
    });
    // Assess
    expect(keys[0]).not.toBe(keys[1]);
    const routesIn = async (key: string) =>
      JSON.parse(
        await fs.readFile(
          path.join(outdir, 'two', `asset.${key.replace(/\.zip$/, '')}`, 'floe-routes.json'),
          'utf8',
        ),
      ) as unknown[];
    expect((await routesIn(keys[0])).length).toBe(1);
    expect((await routesIn(keys[1])).length).toBe(2);
  }, 300_000);
});
