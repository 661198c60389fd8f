import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFloeFunction } from '../../../infra/functions.js';
import { invokeBundle } from './bundle-runner.js';

const PROBE_ENTRY = path.join(import.meta.dirname, 'fixtures', 'wasm-probe.ts');
const LAZY_PROBE_ENTRY = path.join(import.meta.dirname, 'fixtures', 'wasm-lazy-probe.ts');

/** Synthesizes one function built exactly like floe's, with real bundling, into `outdir`: its asset folder. */
function synthesizeProbe(outdir: string, entry: string): string {
  const app = new App({ outdir });
  const stack = new Stack(app, 'Probe');
  createFloeFunction(stack, 'Probe', {
    entry,
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
  return path.join(outdir, `asset.${fn.Properties.Code!.S3Key!.replace(/\.zip$/, '')}`);
}

/** The describe block's probe asset: synthesized before its tests into a temp dir, removed after them. */
function useProbeAsset(entry: string): { dir: string } {
  const asset = { dir: '' };
  let outdir: string;
  beforeAll(async () => {
    outdir = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-bundle-'));
    asset.dir = synthesizeProbe(outdir, entry);
  }, 120_000);
  afterAll(() => fs.rm(outdir, { recursive: true, force: true }));
  return asset;
}

describe('the bundle a floe function deploys (local esbuild, ESM, parquet-wasm)', () => {
  // Prepare: one function built exactly like floe's, with real bundling
  const asset = useProbeAsset(PROBE_ENTRY);

  it('holds the ESM bundle, its source map and the WebAssembly next to it', async () => {
    const files = (await fs.readdir(asset.dir)).sort();
    expect(files).toEqual(['index.mjs', 'index.mjs.map', 'parquet_wasm_bg.wasm']);
    const wasm = await fs.readFile(path.join(asset.dir, 'parquet_wasm_bg.wasm'));
    expect([...wasm.subarray(0, 4)]).toEqual([0x00, 0x61, 0x73, 0x6d]);
  });

  it('runs under node from outside the repository: writes and reads Parquet, keeps error names', async () => {
    // Act
    const out = await invokeBundle(path.join(asset.dir, 'index.mjs'), 'handler', {
      values: [1.5, -2, 1e300],
    });
    // Assess
    expect(out).toEqual({ roundTrip: [1.5, -2, 1e300], errorName: 'CommitFailedError' });
  }, 60_000);

  it('fails without the copied WebAssembly (the after-bundling hook is what makes it work)', async () => {
    // Prepare
    const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-bundle-nowasm-'));
    try {
      await fs.copyFile(path.join(asset.dir, 'index.mjs'), path.join(copy, 'index.mjs'));
      // Act + Assess
      await expect(invokeBundle(path.join(copy, 'index.mjs'), 'handler', { values: [1] })).rejects.toThrow(
        /parquet_wasm_bg\.wasm/,
      );
    } finally {
      await fs.rm(copy, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("the bundle of a function that loads parquet-wasm on first use, as floe's handlers do", () => {
  // Prepare
  const asset = useProbeAsset(LAZY_PROBE_ENTRY);

  it('keeps parquet-wasm out of index.mjs: a chunk beside it, read only when imported', async () => {
    // Act
    const files = await fs.readdir(asset.dir);
    const read = (name: string) => fs.readFile(path.join(asset.dir, name), 'utf8');
    // Assess: the loader's glue (`parquet_wasm_bg.wasm` named in its readFileSync) is in a chunk only
    const scripts = files.filter((f) => f.endsWith('.mjs'));
    const holders = [];
    for (const name of scripts) if ((await read(name)).includes('parquet_wasm_bg.wasm')) holders.push(name);
    expect(scripts.length).toBeGreaterThan(1);
    expect(holders).toHaveLength(1);
    expect(holders[0]).not.toBe('index.mjs');
  });

  it('runs under node from outside the repository: the chunks find the WebAssembly, keep named exports', async () => {
    // Act
    const out = await invokeBundle(path.join(asset.dir, 'index.mjs'), 'handler', { values: [0.25, 7] });
    // Assess
    expect(out).toEqual({ roundTrip: [0.25, 7], sdkClient: 'function' });
  }, 60_000);
});
