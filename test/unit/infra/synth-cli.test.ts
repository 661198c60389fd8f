import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../infra/functions.js';
import { bundleExports } from './bundle-runner.js';

const run = promisify(execFile);

interface LambdaResource {
  Type: string;
  Properties: { Handler?: string; Code?: { S3Key?: string } };
}

describe('npx cdk synth (cdk.json → infra/app.ts), offline, with real bundling', () => {
  let outdir: string;
  let exitCode: number;
  let output: string;

  beforeAll(async () => {
    // Prepare: a clean output dir; no AWS credentials or metadata service to consult
    outdir = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-synth-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      AWS_EC2_METADATA_DISABLED: 'true',
      CDK_DISABLE_CLI_TELEMETRY: 'true',
    };
    for (const name of ['AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'])
      delete env[name];
    // Act
    try {
      const result = await run('npx', ['cdk', 'synth', '--no-notices', '--quiet', '--output', outdir], {
        cwd: REPO_ROOT,
        env,
        maxBuffer: 64 * 1024 * 1024,
      });
      exitCode = 0;
      output = result.stdout + result.stderr;
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      exitCode = failed.code ?? 1;
      output = `${failed.stdout ?? ''}${failed.stderr ?? ''}`;
    }
  }, 300_000);

  afterAll(async () => {
    await fs.rm(outdir, { recursive: true, force: true });
  });

  it('exits 0 and writes the example stack', async () => {
    expect(exitCode, output).toBe(0);
    const template = JSON.parse(await fs.readFile(path.join(outdir, 'FloeExample.template.json'), 'utf8'));
    expect(Object.keys(template.Resources).length).toBeGreaterThan(30);
  });

  it('bundles every function with its WebAssembly and the handler export its configuration names', async () => {
    // Prepare
    const template = JSON.parse(await fs.readFile(path.join(outdir, 'FloeExample.template.json'), 'utf8'));
    const functions = Object.values(template.Resources as Record<string, LambdaResource>).filter(
      (r) => r.Type === 'AWS::Lambda::Function',
    );
    expect(functions).toHaveLength(8);
    for (const fn of functions) {
      const assetDir = path.join(outdir, `asset.${fn.Properties.Code!.S3Key!.replace(/\.zip$/, '')}`);
      expect(await fs.readdir(assetDir)).toEqual(
        expect.arrayContaining(['index.mjs', 'parquet_wasm_bg.wasm']),
      );
      // the ingest function reads its routes from the file next to its bundle
      if (fn.Properties.Handler === 'index.handler') {
        expect(await fs.readdir(assetDir)).toContain('floe-routes.json');
      }
      // Act: load the bundle the way Lambda does
      const exported = await bundleExports(path.join(assetDir, 'index.mjs'));
      // Assess
      const name = fn.Properties.Handler!.replace(/^index\./, '');
      expect(exported[name], `${fn.Properties.Handler} in ${assetDir}`).toBe('function');
    }
  }, 120_000);
});
