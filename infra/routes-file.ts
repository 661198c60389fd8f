/**
 * The routes travel as a file in the ingest function's asset (`floe-routes.json` next to `index.mjs`),
 * not in an environment variable: Lambda allows 4 KB of variables per function, which about six tables
 * with schemas fill. The environment carries only `FLOE_TABLES_FILE=floe-routes.json`, which the handler
 * reads once per cold start relative to `LAMBDA_TASK_ROOT`.
 *
 * The file is written at synth to a content-addressed path, and the bundling's after-bundling hook copies
 * it into the bundle. Because the path carries the content's hash, the hook's command (part of CDK's
 * bundling cache key) changes with the routes, and so does the asset hash (computed over the output):
 * changed routes deploy new code, and two stacks with different routes never share a cached bundle.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The file's name in the asset, and the value of `FLOE_TABLES_FILE`. */
export const ROUTES_FILE_NAME = 'floe-routes.json';

/** Writes `json` once to a path named by its hash (atomically, so parallel synths cannot see half a file). */
export function stageRoutesFile(json: string): string {
  const hash = createHash('sha256').update(json).digest('hex').slice(0, 32);
  const dir = path.join(os.tmpdir(), 'floe-routes');
  const file = path.join(dir, `${hash}.json`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, json);
    renameSync(partial, file);
  }
  return file;
}
