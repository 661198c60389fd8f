/**
 * The shape of functions/core, checked: folders import each other in one direction (no cycle between
 * folders), AWS SDK clients only in the adapters, small files, and no exception used as a stop signal.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const CORE = resolve(import.meta.dirname, '../../functions/core');

/** Files allowed to import @aws-sdk/* besides the adapter folders. */
const AWS_ADAPTER_FOLDERS = ['io', 'catalog', 'lock', 'kafka'];
const AWS_ADAPTER_FILES = ['formats/glue-schema-source.ts'];

const MAX_LINES = 400;
/** Files over MAX_LINES, each with its reason. */
const LONG_FILES: Record<string, string> = {};

/**
 * Classes thrown and caught by `instanceof` in their own file that are real errors, not stop signals,
 * each with its reason (`file: Class`).
 */
const CAUGHT_AT_HOME: Record<string, string> = {
  'formats/schema-registry-client.ts: RegistryAuthError':
    'a refused credential: caught only to stop the retries, it leaves the file as the TransientIOError it is',
  'formats/schema-registry-client.ts: RegistryNotFound':
    "the registry's own 404, turned into the loaders' RecordDecodeError; not yet a LakeError kind",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles(CORE).map((path) => ({
  path,
  name: relative(CORE, path),
  text: readFileSync(path, 'utf8'),
}));

/** The top-level folder of core a file is in ('' for core's own files). */
function folderOf(path: string): string {
  const rel = relative(CORE, path);
  return rel.includes('/') ? rel.split('/')[0]! : '';
}

function importsOf(text: string): string[] {
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/g)].map((m) => m[1]!);
}

function folderEdges(): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const f of files) {
    const from = folderOf(f.path);
    if (from === '') continue;
    for (const spec of importsOf(f.text)) {
      if (!spec.startsWith('.')) continue;
      const to = folderOf(resolve(dirname(f.path), spec));
      if (to === '' || to === from || to.startsWith('..')) continue;
      const set = edges.get(from) ?? new Set<string>();
      set.add(to);
      edges.set(from, set);
    }
  }
  return edges;
}

/** One folder cycle, as a path from a folder back to itself, or undefined. */
function findCycle(edges: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string): string[] | undefined => {
    if (state.get(n) === 'done') return undefined;
    if (state.get(n) === 'open') return [...stack.slice(stack.indexOf(n)), n];
    state.set(n, 'open');
    stack.push(n);
    for (const m of edges.get(n) ?? []) {
      const cycle = visit(m);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(n, 'done');
    return undefined;
  };
  for (const n of edges.keys()) {
    const cycle = visit(n);
    if (cycle) return cycle;
  }
  return undefined;
}

/**
 * `file: Class` for every class declared in a file that the same file both throws and catches by
 * `instanceof`: an exception used to stop a loop or carry an answer out of a callback (a sentinel),
 * where a result (`change | noop | stale`, table/actions/table-action.ts) says the same without one.
 */
function sentinelClasses(): string[] {
  return files.flatMap((f) =>
    [...f.text.matchAll(/\bclass\s+([A-Z]\w*)/g)]
      .map((m) => m[1]!)
      .filter(
        (name) =>
          new RegExp(`\\bthrow\\s+new\\s+${name}\\b`).test(f.text) &&
          new RegExp(`\\binstanceof\\s+${name}\\b`).test(f.text),
      )
      .map((name) => `${f.name}: ${name}`),
  );
}

describe('functions/core architecture', () => {
  it('has no import cycle between its folders', () => {
    expect(findCycle(folderEdges())).toBeUndefined();
  });

  it('imports the AWS SDK only in the adapters', () => {
    const leaking = files
      .filter((f) => importsOf(f.text).some((s) => s.startsWith('@aws-sdk/')))
      .map((f) => f.name)
      .filter((name) => !AWS_ADAPTER_FOLDERS.includes(folderOf(join(CORE, name))))
      .filter((name) => !AWS_ADAPTER_FILES.includes(name));
    expect(leaking).toEqual([]);
  });

  it(`has no file over ${MAX_LINES} lines but the listed ones`, () => {
    const long = files
      .filter((f) => f.text.split('\n').length > MAX_LINES)
      .map((f) => f.name)
      .filter((name) => !(name in LONG_FILES));
    expect(long).toEqual([]);
  });

  it('throws no exception it catches itself to stop a loop (a sentinel), but the listed ones', () => {
    expect(sentinelClasses().filter((entry) => !(entry in CAUGHT_AT_HOME))).toEqual([]);
  });
});
