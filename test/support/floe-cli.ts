/**
 * The `floe` the integration tests run: the CLI bundled once per test run by esbuild into
 * `.cache/floe-cli/bin/main.mjs` (the integration global setup builds it), run by the pinned Node 22.
 *
 * Why a bundle: each `node --import tsx functions/cli/main.ts` resolves and transpiles some 500 modules
 * on start (about 1.5 s of CPU, twice that through the tsx CLI's own child process); the suite spawns
 * floe hundreds of times on a 2-core machine. The bundle starts in about half the CPU, and is closer
 * to what users run (the package ships compiled JavaScript, not tsx). Packages stay external, resolved
 * from the repository's node_modules as the compiled package resolves them. The bundle sits three
 * folders below the repository root like functions/cli/commands/, so paths taken from `import.meta.url`
 * (the demo's events/) resolve the same.
 *
 * The global setup names the bundle in FLOE_TEST_CLI (inherited by the test workers); without it (a
 * test file run outside the integration project), tsx runs the sources.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const REPO_ROOT = join(import.meta.dirname, '../..');
/** Node 22 pinned by package.json (Node 20 lacks JSON.rawJSON). */
export const PINNED_NODE = join(REPO_ROOT, 'node_modules/.bin/node');
const MAIN = join(REPO_ROOT, 'functions/cli/main.ts');
export const FLOE_CLI_BUNDLE = join(REPO_ROOT, '.cache/floe-cli/bin/main.mjs');

/** Bundles the CLI into FLOE_CLI_BUNDLE (about a second). @throws Error with esbuild's messages when the sources do not build */
export async function buildFloeCli(): Promise<void> {
  const { build } = await import('esbuild');
  await build({
    entryPoints: [MAIN],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    packages: 'external',
    outfile: FLOE_CLI_BUNDLE,
    logLevel: 'error',
  });
}

/** The Node arguments that run `floe` (before floe's own): the bundle the global setup built this run, else tsx over the sources. */
export function floeNodeArgs(): string[] {
  const bundle = process.env.FLOE_TEST_CLI;
  return bundle && existsSync(bundle) ? [bundle] : ['--import', 'tsx', MAIN];
}
