/**
 * Runs a bench section in a fresh node process (section-child.ts) and returns its figures: for a
 * section that must be measured as a process of its own runs it, whatever the bench ran before it
 * (the heap, the optimised code and the type feedback earlier sections left behind).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./section-child.ts', import.meta.url));

export interface ChildOptions {
  /** node flags before the script (heap flags). */
  nodeFlags?: string[];
  /** Variables added to the bench's environment. */
  env?: Record<string, string>;
}

export async function runSectionInChild<T>(
  section: 'ingest' | 'scan' | 'keyed-deletes',
  settings: object,
  options: ChildOptions = {},
): Promise<T> {
  const args = [...(options.nodeFlags ?? []), '--import', 'tsx', CHILD, section, JSON.stringify(settings)];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...options.env },
  });
  let stdout = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    stdout += chunk;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`the bench's ${section} child exited with ${code}`);
  return JSON.parse(stdout) as T;
}
