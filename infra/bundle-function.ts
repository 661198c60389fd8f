/**
 * How a floe function's code is bundled (for the construct, infra/functions.ts, and for the memory bench,
 * which must measure exactly this), also as a program: `node --import tsx infra/bundle-function.ts
 * '{"entry":…,"outdir":…,"assetFiles":{…}}'` (CDK's bundling step is synchronous; esbuild's plugins are not).
 *
 * The bundle is split (esbuild `splitting`): what a module reaches through a dynamic `import()` — every
 * AWS SDK client, the catalogs, the lock, kafkajs, parquet-wasm — is a chunk of its own beside
 * `index.mjs`, read and compiled only when a batch needs it. A single file would hold all of it (5 MB),
 * and Node parses the whole file when it loads the handler: ~30 MiB more resident memory at init and a
 * slower cold start, for code an ingest of JSON into the embedded catalog never runs. A dynamically
 * imported CommonJS package keeps its named exports through lazy-commonjs.ts.
 *
 * parquet-wasm's Node build is CommonJS and loads its WebAssembly with
 * `readFileSync(`${__dirname}/parquet_wasm_bg.wasm`)`. In an ESM bundle neither `__dirname` nor `require`
 * exists, and the .wasm is not part of the JS graph esbuild follows. So the banner defines both (from
 * `import.meta.url` of the file evaluated first; every output file sits in one folder) and the bundling
 * copies the .wasm next to `index.mjs`, where `__dirname` then points.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { lazyCommonJsPlugin } from './lazy-commonjs.js';

/** The repository root (entry files and the lock file are found from here, whatever the cwd). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where parquet-wasm's Node build keeps its WebAssembly (resolved through the package's exports map). */
export const PARQUET_WASM_PATH = createRequire(import.meta.url).resolve(
  'parquet-wasm/node/parquet_wasm_bg.wasm',
);

/** The WebAssembly's name in the asset: next to `index.mjs`, where parquet-wasm looks for it. */
const WASM_NAME = 'parquet_wasm_bg.wasm';

/**
 * Prepended to every output file: CommonJS globals for the CommonJS modules inside an ESM bundle. Set on
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
 * The esbuild settings of every floe function (and of the memory bench, which must measure exactly
 * this): `entry` → `outdir/index.mjs` and the chunks `outdir/*-<hash>.mjs`.
 */
export function floeBuildOptions(entry: string, outdir: string): BuildOptions {
  return {
    entryPoints: { index: entry },
    outdir,
    outExtension: { '.js': '.mjs' },
    // beside index.mjs, not in a folder: `__dirname` (the .wasm's folder) is that of whichever file the
    // runtime evaluates first, and index.mjs's static imports are evaluated before index.mjs itself
    chunkNames: '[name]-[hash]',
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
    // a dynamically imported CommonJS package keeps its named exports in its chunk (lazy-commonjs.ts)
    plugins: [lazyCommonJsPlugin()],
    absWorkingDir: REPO_ROOT,
    logLevel: 'warning',
  };
}

/**
 * Bundles `entry` into `outdir` as a floe function's asset: the split ESM bundle, the WebAssembly next
 * to `index.mjs`, and `assetFiles` (name in the asset → file on this machine).
 * @throws Error when esbuild reports an error (the message lists them)
 */
export async function bundleFloeFunction(
  entry: string,
  outdir: string,
  assetFiles: Readonly<Record<string, string>> = {},
): Promise<void> {
  mkdirSync(outdir, { recursive: true });
  await build(floeBuildOptions(entry, outdir));
  copyFileSync(PARQUET_WASM_PATH, path.join(outdir, WASM_NAME));
  for (const [name, from] of Object.entries(assetFiles)) copyFileSync(from, path.join(outdir, name));
}

/** The program: one bundling, its arguments as JSON (see the file comment). */
async function main(argument: string | undefined): Promise<void> {
  const { entry, outdir, assetFiles } = JSON.parse(argument ?? '{}') as {
    entry: string;
    outdir: string;
    assetFiles?: Record<string, string>;
  };
  await bundleFloeFunction(entry, outdir, assetFiles);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2]);
}
