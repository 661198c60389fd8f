/**
 * Builds the npm package into `dist/` (gitignored; `npm pack` runs this as `prepack`):
 *
 * - `functions/` and `infra/` compiled to JavaScript with type declarations (./tsconfig.json: the files
 *   the three entry points reach — the CLI, `floe` and `floe/cdk` — and nothing of the tests);
 * - `lambda/<name>/`: each Lambda function bundled as the construct deploys it (infra/bundle-function.ts),
 *   so a user's `cdk synth` copies the folder (infra/functions.ts) instead of running esbuild;
 * - `events/`: the sample events `floe demo` ingests (it finds them beside the compiled CLI, as in a clone),
 *   and the example routes files under `events/routes/`;
 * - the routes' JSON Schema at its place in the source tree (`floe/routes.schema.json`), so the example
 *   files' relative `"$schema"` finds it in the package as in a clone.
 *
 * The `bin` (functions/cli/bin.mjs) runs the compiled CLI once installed and the TypeScript in a clone.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { REPO_ROOT } from '../functions.js';
import { bundleFloeFunction } from '../bundle-function.js';

/** The package's build output: the `files` of package.json name it. */
export const DIST = path.join(REPO_ROOT, 'dist');

/** The functions the construct deploys: handler file under functions/handlers/ → `lambda/<name>/`. */
export const PREBUILT_FUNCTIONS = ['ingest', 'maintenance'] as const;

async function build(): Promise<void> {
  rmSync(DIST, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(REPO_ROOT, 'infra', 'package', 'tsconfig.json')], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
  for (const name of PREBUILT_FUNCTIONS) {
    await bundleFloeFunction(
      path.join(REPO_ROOT, 'functions', 'handlers', `${name}.ts`),
      path.join(DIST, 'lambda', name),
    );
  }
  cpSync(path.join(REPO_ROOT, 'events'), path.join(DIST, 'events'), { recursive: true });
  const routesSchema = path.join('functions', 'core', 'routing', 'routes.schema.json');
  cpSync(path.join(REPO_ROOT, routesSchema), path.join(DIST, routesSchema));
}

await build();
