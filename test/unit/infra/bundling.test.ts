import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFloeFunction } from '../../../infra/functions.js';
import { invokeBundle } from './bundle-runner.js';

const PROBE_ENTRY = path.join(import.meta.dirname, 'fixtures', 'wasm-probe.ts');

describe('the bundle a floe function deploys (local esbuild, ESM, parquet-wasm)', () => {
  let outdir: string;
  let assetDir: string;

  beforeAll(async () => {
    // Prepare: synthesize one function built exactly like floe's, with real bundling, into a temp dir
    outdir = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-bundle-'));
    const app = new App({ outdir });
    const stack = new Stack(app, 'Probe');
    createFloeFunction(stack, 'Probe', {
      entry: PROBE_ENTRY,
      handler: 'handler',
      description: 'bundling probe',
      memorySize: 512,
      timeout: Duration.seconds(30),
      environment: {},
      logRetention: logs.RetentionDays.ONE_DAY,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const template = app.synth().getStackByName('Probe').template as {
      Resources: Record<string, { Type: string; Properties: { Code?: { S3Key?: string } } }>;
    };
    const fn = Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function')!;
    assetDir = path.join(outdir, `asset.${fn.Properties.Code!.S3Key!.replace(/\.zip$/, '')}`);
  }, 120_000);

  afterAll(async () => {
    await fs.rm(outdir, { recursive: true, force: true });
  });

  it('holds the ESM bundle, its source map and the WebAssembly next to it', async () => {
    const files = (await fs.readdir(assetDir)).sort();
    expect(files).toEqual(['index.mjs', 'index.mjs.map', 'parquet_wasm_bg.wasm']);
    const wasm = await fs.readFile(path.join(assetDir, 'parquet_wasm_bg.wasm'));
    expect([...wasm.subarray(0, 4)]).toEqual([0x00, 0x61, 0x73, 0x6d]);
  });

  it('runs under node from outside the repository: writes and reads Parquet, keeps error names', async () => {
    // Act
    const out = await invokeBundle(path.join(assetDir, 'index.mjs'), 'handler', { values: [1.5, -2, 1e300] });
    // Assess
    expect(out).toEqual({ roundTrip: [1.5, -2, 1e300], errorName: 'CommitFailedError' });
  }, 60_000);

  it('fails without the copied WebAssembly (the after-bundling hook is what makes it work)', async () => {
    // Prepare
    const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-bundle-nowasm-'));
    try {
      await fs.copyFile(path.join(assetDir, 'index.mjs'), path.join(copy, 'index.mjs'));
      // Act + Assess
      await expect(invokeBundle(path.join(copy, 'index.mjs'), 'handler', { values: [1] })).rejects.toThrow(
        /parquet_wasm_bg\.wasm/,
      );
    } finally {
      await fs.rm(copy, { recursive: true, force: true });
    }
  }, 60_000);
});
