/**
 * Section "lambda": the bundled ingest function's cold start under AWS's runtime interface client
 * (aws-lambda-ric, through the loopback Runtime API of test/support): the asset `cdk synth` writes for
 * the KafkaToIceberg construct, started as Lambda starts it, on the pinned Node 22.
 *
 * - init_ms: from spawning the process until its first `GET /runtime/invocation/next` (the runtime client
 *   loaded, the bundle imported, its top level run: what Lambda bills as Init Duration);
 * - rss_after_init_mb: the process's resident set at that moment;
 * - first_invoke_ms: the first invocation (config, catalog, table creation, one 120-record batch).
 * Medians over several cold starts. The catalog is the embedded one on a local warehouse, in place of the
 * template's REST endpoint; nothing else in the template's environment changes.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { KafkaToIceberg } from '../../infra/kafka-to-iceberg.js';
import { startRic } from '../support/ric-process.js';
import { synthesizeStack } from '../support/synthesized-functions.js';
import { readOrdersSchema } from './orders-batch.js';
import { median } from './stats.js';

export interface LambdaFigures {
  init_ms: number;
  rss_after_init_mb: number;
  first_invoke_ms: number;
  /** The bundle's index.mjs, KiB. */
  bundle_kib: number;
  cold_starts: number;
}

export async function runLambdaColdStart(
  settings: { coldStarts: number },
  progress: (line: string) => void,
): Promise<LambdaFigures> {
  progress('lambda: synthesizing the construct with bundling');
  const stack = await synthesizeStack((app) => {
    const s = new Stack(app, 'FloeBenchLambda', { env: { account: '111122223333', region: 'us-east-1' } });
    new KafkaToIceberg(s, 'Pipeline', {
      source: {
        kind: 'msk',
        clusterArn:
          'arn:aws:kafka:us-east-1:111122223333:cluster/bench/00000000-0000-0000-0000-000000000000-1',
      },
      tables: [{ topics: ['orders'], table: 'sales.orders', schema: readOrdersSchema() }],
      catalog: { kind: 'rest', uri: 'http://127.0.0.1:9/unused', warehouse: 'bench' },
      maintenance: { enabled: false },
      logLevel: 'WARN',
    });
    return s;
  });
  const event = await readFile('events/orders-batch-1.json', 'utf8');
  const init: number[] = [];
  const rss: number[] = [];
  const invoke: number[] = [];
  try {
    const [id] = stack.functionIds['index.handler'] ?? [];
    if (!id) throw new Error('the synthesized stack has no ingest function');
    const spec = stack.functionSpec(id, (ref) => `<${ref}>`);
    // no DynamoDB here: the lock is left out (a cold start does not touch it)
    const { FLOE_LOCK_TABLE: _lock, ...environment } = spec.environment;
    const bundleKib = (await readFile(join(spec.assetDir, 'index.mjs'))).byteLength / 1024;
    for (let i = 0; i < settings.coldStarts; i++) {
      progress(`lambda: cold start ${i + 1}/${settings.coldStarts}`);
      const warehouse = await mkdtemp(join(tmpdir(), 'floe-bench-lambda-'));
      const fn = await startRic(
        { ...spec, environment },
        { FLOE_CATALOG: 'embedded', FLOE_WAREHOUSE: warehouse, POWERTOOLS_METRICS_DISABLED: 'true' },
      );
      try {
        const initDone = await fn.initDone;
        init.push(initDone - fn.spawnedAt);
        rss.push(fn.rssMb());
        const t0 = performance.now();
        const result = await fn.invoke(event);
        if (!result.ok) throw new Error(`the function failed: ${JSON.stringify(result.error)}`);
        invoke.push(performance.now() - t0);
      } finally {
        await fn.stop();
        await rm(warehouse, { recursive: true, force: true });
      }
    }
    return {
      init_ms: median(init),
      rss_after_init_mb: median(rss),
      first_invoke_ms: median(invoke),
      bundle_kib: bundleKib,
      cold_starts: settings.coldStarts,
    };
  } finally {
    await stack.cleanup();
  }
}
