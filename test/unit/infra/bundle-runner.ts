/** Runs a synthesized Lambda bundle the way Lambda's Node.js runtime loads it: an ESM import, then a call. */
import { execFile } from 'node:child_process';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Imports a bundle in a fresh node process (as Lambda's runtime does) and calls one export with an event. */
export async function invokeBundle(indexFile: string, exportName: string, event: unknown): Promise<unknown> {
  const script = `const m = await import(process.argv[1]);
const out = await m[process.argv[2]](JSON.parse(process.argv[3]), { getRemainingTimeInMillis: () => 60000 });
process.stdout.write(JSON.stringify(out));`;
  const { stdout } = await run(
    process.execPath,
    ['--input-type=module', '-e', script, pathToFileURL(indexFile).href, exportName, JSON.stringify(event)],
    { cwd: os.tmpdir(), env: { PATH: process.env.PATH ?? '' } },
  );
  return JSON.parse(stdout);
}

/** The exports of a bundle and their `typeof`, read in a fresh node process (loading it runs its top level). */
export async function bundleExports(indexFile: string): Promise<Record<string, string>> {
  const script = `const m = await import(process.argv[1]);
process.stdout.write(JSON.stringify(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v]))));`;
  const { stdout } = await run(
    process.execPath,
    ['--input-type=module', '-e', script, pathToFileURL(indexFile).href],
    {
      cwd: os.tmpdir(),
      env: { PATH: process.env.PATH ?? '' },
    },
  );
  return JSON.parse(stdout);
}
