#!/usr/bin/env node
// `floe` entry point. Installed from the package, it runs the compiled CLI (dist/, built by
// infra/package/build.ts); in a clone (`npx floe ...` after `npm ci`), where main.ts sits beside this
// file, it runs the TypeScript through tsx, so a clone never runs a stale build.
import { existsSync } from 'node:fs';

const fromSources = existsSync(new URL('./main.ts', import.meta.url));
if (fromSources) {
  const { register } = await import('tsx/esm/api');
  register();
}
const { runCli } = await import(fromSources ? './main.ts' : '../../dist/functions/cli/main.js');
await runCli(process.argv.slice(2));
