/**
 * How every floe Lambda function is built: Node.js 22 on arm64, bundled by the local esbuild into ESM
 * (`index.mjs` and the chunks it loads on first use), with its own role and log group (no managed
 * policies: the role only gets what the caller grants).
 *
 * The bundle is split (esbuild `splitting`): what a module reaches through a dynamic `import()` — every
 * AWS SDK client, the catalogs, the lock, kafkajs, parquet-wasm — is a chunk of its own under `chunks/`,
 * read and compiled only when a batch needs it. A single file would hold all of it (5 MB), and Node
 * parses the whole file when it loads the handler: ~30 MiB more resident memory and a slower cold start
 * for code an ingest of JSON into the embedded catalog never runs. NodejsFunction's own bundling always
 * writes one file (`--outfile`), so the functions are bundled here, with the same esbuild, as a local
 * asset bundling step.
 *
 * parquet-wasm's Node build is CommonJS and loads its WebAssembly with
 * `readFileSync(`${__dirname}/parquet_wasm_bg.wasm`)`. In an ESM bundle neither `__dirname` nor `require`
 * exists, and the .wasm is not part of the JS graph esbuild follows. So the banner defines both (from
 * `import.meta.url` of the file loaded first, `index.mjs`) and the bundling step copies the .wasm next to
 * `index.mjs`, where `__dirname` then points. test/unit/infra/bundling.test.ts runs such a bundle under
 * node to prove it.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AssetHashType } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { type BuildOptions, buildSync } from 'esbuild';
import { acknowledgeRule, RUNTIME_REASON } from './nag.js';

/** The repository root (entry files and the lock file are found from here, whatever the cwd). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The handlers' directory. */
export const HANDLERS_DIR = path.join(REPO_ROOT, 'functions', 'handlers');

/** Where parquet-wasm's Node build keeps its WebAssembly (resolved through the package's exports map). */
export const PARQUET_WASM_PATH = createRequire(import.meta.url).resolve(
  'parquet-wasm/node/parquet_wasm_bg.wasm',
);

/** The WebAssembly's name in the asset: next to `index.mjs`, where parquet-wasm looks for it. */
const WASM_NAME = 'parquet_wasm_bg.wasm';

/**
 * Prepended to every output file: CommonJS globals for the CommonJS modules inside an ESM bundle. Set on
 * `globalThis` (not as `const`) so that a bundled module declaring its own `__dirname` cannot clash, and
 * with `??=`, so `index.mjs` (loaded first) sets them and a chunk does not move `__dirname` to `chunks/`.
 */
export const ESM_BANNER = [
  "import { createRequire as __floeCreateRequire } from 'node:module';",
  "import { fileURLToPath as __floeFileUrlToPath } from 'node:url';",
  "import { dirname as __floeDirname } from 'node:path';",
  'globalThis.require ??= __floeCreateRequire(import.meta.url);',
  'globalThis.__filename ??= __floeFileUrlToPath(import.meta.url);',
  'globalThis.__dirname ??= __floeDirname(globalThis.__filename);',
].join(' ');

/**
 * The esbuild settings of every floe function (and of the memory bench, which must measure exactly
 * this): `entry` → `outdir/index.mjs` and `outdir/chunks/*.mjs`.
 */
export function floeBuildOptions(entry: string, outdir: string): BuildOptions {
  return {
    entryPoints: { index: entry },
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    // error names drive Step Functions retries (`CommitFailedError`...): minification must keep them
    keepNames: true,
    // index.mjs.map ships with the code for decoding stack traces; Node applies it only with
    // NODE_OPTIONS=--enable-source-maps, which the construct leaves to the user (the environment is
    // exactly the handlers' contract, and source-mapped traces cost time on every error)
    sourcemap: true,
    sourcesContent: false,
    // the AWS SDK is bundled too, so the code runs the exact versions the tests ran, not the runtime's
    external: [],
    banner: { js: ESM_BANNER },
    absWorkingDir: REPO_ROOT,
    logLevel: 'warning',
  };
}

/**
 * Bundles `entry` into `outdir` as a floe function's asset: the split ESM bundle, the WebAssembly next
 * to `index.mjs`, and `assetFiles` (name in the asset → file on this machine).
 * @throws Error when esbuild reports an error (the message lists them)
 */
export function bundleFloeFunction(
  entry: string,
  outdir: string,
  assetFiles: Readonly<Record<string, string>> = {},
): void {
  mkdirSync(outdir, { recursive: true });
  buildSync(floeBuildOptions(entry, outdir));
  copyFileSync(PARQUET_WASM_PATH, path.join(outdir, WASM_NAME));
  for (const [name, from] of Object.entries(assetFiles)) copyFileSync(from, path.join(outdir, name));
}

/** The function's code: `entry` bundled on this machine when the stack is synthesized. */
function floeCode(entry: string, assetFiles: Readonly<Record<string, string>>): lambda.Code {
  // The asset's hash is that of the bundle (as NodejsFunction's), so a change anywhere in the code a
  // function reaches, or in its asset files, deploys it again; nothing else does.
  return lambda.Code.fromAsset(REPO_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // required by CDK, never pulled: the local step below always bundles (esbuild is a dependency)
      image: lambda.Runtime.NODEJS_22_X.bundlingImage,
      local: {
        tryBundle(outputDir: string): boolean {
          bundleFloeFunction(entry, outputDir, assetFiles);
          return true;
        },
      },
    },
  });
}

export interface FloeFunctionOptions {
  /** Entry file (TypeScript). */
  readonly entry: string;
  /** Exported handler name. */
  readonly handler: string;
  readonly description: string;
  readonly memorySize: number;
  readonly timeout: Duration;
  readonly environment: Record<string, string>;
  readonly logRetention: logs.RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  readonly reservedConcurrency?: number;
  /**
   * Files to ship next to `index.mjs`: name in the asset → file on this machine.
   * @default - none
   */
  readonly assetFiles?: Readonly<Record<string, string>>;
}

/** A floe function with its own role (logs only, until granted more) and log group. */
export function createFloeFunction(
  scope: Construct,
  id: string,
  options: FloeFunctionOptions,
): nodejs.NodejsFunction {
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
    retention: options.logRetention,
    removalPolicy: options.removalPolicy,
  });
  const role = new iam.Role(scope, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: `floe ${options.handler}: ${options.description}`,
  });
  // instead of AWSLambdaBasicExecutionRole (logs:* on every log group): this function's group only
  logGroup.grantWrite(role);
  const fn = new nodejs.NodejsFunction(scope, id, {
    handler: `index.${options.handler}`,
    description: options.description,
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    memorySize: options.memorySize,
    timeout: options.timeout,
    environment: options.environment,
    role,
    logGroup,
    ...(options.reservedConcurrency === undefined
      ? {}
      : { reservedConcurrentExecutions: options.reservedConcurrency }),
    code: floeCode(options.entry, options.assetFiles ?? {}),
  });
  acknowledgeRule(fn, 'AwsSolutions-L1', RUNTIME_REASON);
  return fn;
}
