/**
 * How every floe Lambda function is built: Node.js 22 on arm64, bundled by the local esbuild into one ESM
 * file, with its own role and log group (no managed policies: the role only gets what the caller grants).
 *
 * parquet-wasm's Node build is CommonJS and loads its WebAssembly with
 * `readFileSync(`${__dirname}/parquet_wasm_bg.wasm`)`. In an ESM bundle neither `__dirname` nor `require`
 * exists, and the .wasm is not part of the JS graph esbuild follows. So the banner defines both (from
 * `import.meta.url`) and an after-bundling hook copies the .wasm next to `index.mjs`, where `__dirname`
 * then points. test/unit/infra/bundling.test.ts runs such a bundle under node to prove it.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { acknowledgeRule, RUNTIME_REASON } from './nag.js';

/** The repository root (entry files and the lock file are found from here, whatever the cwd). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The handlers' directory. */
export const HANDLERS_DIR = path.join(REPO_ROOT, 'functions', 'handlers');

/** Where parquet-wasm's Node build keeps its WebAssembly (resolved through the package's exports map). */
export const PARQUET_WASM_PATH = createRequire(import.meta.url).resolve(
  'parquet-wasm/node/parquet_wasm_bg.wasm',
);

/**
 * Prepended to the bundle: CommonJS globals for the CommonJS modules inside an ESM bundle. Set on
 * `globalThis` (not as `const`) so that a bundled module declaring its own `__dirname` cannot clash.
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
 * esbuild settings shared by every floe function. `assetFiles` (name in the asset → file on this machine)
 * are copied next to `index.mjs`, as the WebAssembly is.
 */
export function floeBundling(assetFiles: Readonly<Record<string, string>> = {}): nodejs.BundlingOptions {
  return {
    format: nodejs.OutputFormat.ESM,
    target: 'node22',
    minify: true,
    // error names drive Step Functions retries (`CommitFailedError`...): minification must keep them
    keepNames: true,
    // index.mjs.map ships with the code for decoding stack traces; Node applies it only with
    // NODE_OPTIONS=--enable-source-maps, which the construct leaves to the user (the environment is
    // exactly the handlers' contract, and source-mapped traces cost time on every error)
    sourceMap: true,
    sourcesContent: false,
    // the AWS SDK is bundled too, so the code runs the exact versions the tests ran, not the runtime's
    externalModules: [],
    banner: ESM_BANNER,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (_inputDir: string, outputDir: string) => [
        `cp "${PARQUET_WASM_PATH}" "${path.join(outputDir, 'parquet_wasm_bg.wasm')}"`,
        ...Object.entries(assetFiles).map(([name, from]) => `cp "${from}" "${path.join(outputDir, name)}"`),
      ],
    },
  };
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
    entry: options.entry,
    handler: options.handler,
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
    projectRoot: REPO_ROOT,
    depsLockFilePath: path.join(REPO_ROOT, 'package-lock.json'),
    bundling: floeBundling(options.assetFiles),
  });
  acknowledgeRule(fn, 'AwsSolutions-L1', RUNTIME_REASON);
  return fn;
}
