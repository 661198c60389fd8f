/**
 * How every floe Lambda function is built: Node.js 22 on arm64, bundled by esbuild into a split ESM bundle
 * (`index.mjs` and the chunks it loads on first use: bundle-function.ts says why and how), with its own
 * role and log group (no managed policies: the role only gets what the caller grants).
 * NodejsFunction's own bundling always writes one file (`--outfile`), so the code is a local asset
 * bundling step of ours; test/unit/infra/bundling.test.ts runs such bundles under node.
 *
 * Where the bundle comes from depends on how floe is installed. The npm package ships each function
 * bundled when the package was built (`lambda/<name>/` beside the compiled `infra/` and `functions/`:
 * infra/package/build.ts), so a user's `cdk synth` copies that folder and needs neither esbuild (a
 * devDependency) nor floe's TypeScript. A clone has no such folder: it bundles the sources at synth, so
 * the repository's tests and its example app deploy exactly the code in the working tree.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AssetHashType, type ILocalBundling } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { acknowledgeRule, RUNTIME_REASON } from './nag.js';

/**
 * The root of floe's files: the repository in a clone, the package's `dist/` once installed (this file
 * is `infra/functions.ts` or `dist/infra/functions.js`).
 */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where the package keeps the functions bundled at build time: `lambda/<entry's name>/index.mjs`. */
export const PREBUILT_DIR = path.join(REPO_ROOT, 'lambda');

/** The child process's script: bundle-function.ts run as a program. */
const BUNDLE_SCRIPT = path.join(REPO_ROOT, 'infra', 'bundle-function.ts');

/** The handlers' directory. */
export const HANDLERS_DIR = path.join(REPO_ROOT, 'functions', 'handlers');

/**
 * Variables every floe function runs with, besides its own. glibc's malloc serves a request of at least
 * its mmap threshold (128 KiB) from a mapping of its own, returned to the system when freed; but after
 * such a block is freed it raises the threshold (up to 32 MiB), and from then on a batch's large buffers
 * (pages, column data, compressed output) come from the heap, stay resident when freed and fragment
 * it: ~20 MiB of the 6 MB batch's peak RSS on warm invocations. A fixed threshold keeps them mappings
 * (measured: no change in ingest CPU). The memory bench runs its child with these too.
 */
export const FUNCTION_RUNTIME_ENVIRONMENT: Readonly<Record<string, string>> = {
  GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=131072',
};

/**
 * Bundles `entry` into `outdir` now (see bundle-function.ts). CDK's local bundling step is synchronous
 * and esbuild's plugins need its asynchronous API, so the bundling runs in a child process.
 * @throws Error when the bundling fails (its output, esbuild's errors included, went to stderr)
 */
export function bundleFloeFunctionSync(
  entry: string,
  outdir: string,
  assetFiles: Readonly<Record<string, string>> = {},
): void {
  execFileSync(
    process.execPath,
    ['--import', 'tsx', BUNDLE_SCRIPT, JSON.stringify({ entry, outdir, assetFiles })],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
}

/**
 * The local bundling step. Its fields are data on purpose: CDK keys its cache of staged assets (shared by
 * every stack synthesized in the process) on the bundling options as JSON, so without them every floe
 * function would get the first one's bundle.
 */
class FloeLocalBundling implements ILocalBundling {
  constructor(
    readonly entry: string,
    readonly assetFiles: Readonly<Record<string, string>>,
  ) {}

  tryBundle(outputDir: string): boolean {
    bundleFloeFunctionSync(this.entry, outputDir, this.assetFiles);
    return true;
  }
}

/**
 * The copying step of an installed package: the prebuilt bundle and the asset files into CDK's output
 * folder. Fields are data for the same reason as FloeLocalBundling's.
 */
class PrebuiltLocalBundling implements ILocalBundling {
  constructor(
    readonly prebuilt: string,
    readonly assetFiles: Readonly<Record<string, string>>,
  ) {}

  tryBundle(outputDir: string): boolean {
    cpSync(this.prebuilt, outputDir, { recursive: true });
    for (const [name, from] of Object.entries(this.assetFiles)) cpSync(from, path.join(outputDir, name));
    return true;
  }
}

/**
 * The folder of `entry`'s prebuilt bundle, when this floe is an installed package (undefined in a clone).
 * Named after the entry file (`functions/handlers/ingest.ts` → `lambda/ingest`).
 */
export function prebuiltBundle(entry: string): string | undefined {
  const dir = path.join(PREBUILT_DIR, path.basename(entry).replace(/\.[cm]?[jt]s$/, ''));
  return existsSync(path.join(dir, 'index.mjs')) ? dir : undefined;
}

/** The function's code: the package's prebuilt bundle, or `entry` bundled now (see the file comment). */
function floeCode(entry: string, assetFiles: Readonly<Record<string, string>>): lambda.Code {
  const prebuilt = prebuiltBundle(entry);
  if (prebuilt !== undefined) {
    // the asset files (the routes) belong in the function's folder, so the prebuilt folder is copied
    // with them rather than used as it is; the hash is again that of the output
    return lambda.Code.fromAsset(prebuilt, {
      assetHashType: AssetHashType.OUTPUT,
      bundling: {
        // required by CDK, never pulled: copying always succeeds locally
        image: lambda.Runtime.NODEJS_22_X.bundlingImage,
        local: new PrebuiltLocalBundling(prebuilt, assetFiles),
      },
    });
  }
  // The asset's hash is that of the bundle (as NodejsFunction's), so a change anywhere in the code a
  // function reaches, or in its asset files, deploys it again; nothing else does.
  return lambda.Code.fromAsset(REPO_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // required by CDK, never pulled: the local step always bundles (esbuild is a devDependency)
      image: lambda.Runtime.NODEJS_22_X.bundlingImage,
      local: new FloeLocalBundling(entry, assetFiles),
    },
  });
}

export interface FloeFunctionOptions {
  /** Entry file (TypeScript); its name also names the prebuilt bundle of an installed package. */
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
    environment: { ...FUNCTION_RUNTIME_ENVIRONMENT, ...options.environment },
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
