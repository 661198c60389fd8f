/**
 * The shape of functions/core, checked: folders import each other in one direction (no cycle between
 * folders), data/'s rooms too, AWS SDK clients only in the adapters, hyparquet's private paths in one
 * test module only, small files, and no exception used as a stop signal. And of all of functions/: the
 * Kafka client library only in core/kafka/, and every error class a LakeError named …Error. And of infra/
 * (the CDK constructs): small files too, and nothing under functions/ imports it (the Lambda bundles and
 * the CLI stay free of the CDK).
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
  'formats/schema-registry-client.ts: RegistryNotFoundError':
    "the registry's own 404, turned into the loaders' RecordDecodeError at the one place that knows the record",
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

/**
 * data/'s rooms and the rooms each may import — downward only: Arrow data and the Thrift compact
 * protocol at the bottom, the files both Parquet sides share (parquet/*.ts) above them, the writer above
 * those, floe's own decoder above the writer (it takes the writer's constants, so it reads exactly what
 * the writer writes), and read planning at the top (it hands floe's files to the decoder). Puffin files
 * (puffin/) stand alone beside them: the container format only; deletion vectors, the blobs floe puts in
 * it, live in core's deletes/ folder above data/.
 */
const DATA_ROOMS: Record<string, string[]> = {
  arrow: [],
  puffin: [],
  'parquet/thrift': [],
  parquet: [],
  'parquet/write': ['arrow', 'parquet/thrift', 'parquet'],
  'parquet/read/native': ['arrow', 'parquet/thrift', 'parquet', 'parquet/write'],
  'parquet/read': ['arrow', 'parquet/thrift', 'parquet', 'parquet/write', 'parquet/read/native'],
};
const DATA = join(CORE, 'data');

/** The room of data/ a path is in (its folder under data/), or undefined outside data/. */
function dataRoomOf(path: string): string | undefined {
  const rel = relative(DATA, path);
  return rel.startsWith('..') ? undefined : dirname(rel);
}

/** The one module allowed to import hyparquet's private paths (hyparquet/src/...). */
const HYPARQUET_INTERNALS = 'test/support/hyparquet-internals.ts';
const REPO = resolve(CORE, '../..');

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

  it("keeps data/'s rooms importing downward (arrow/, parquet/thrift/ < parquet/ < parquet/write/ < parquet/read/native/ < parquet/read/)", () => {
    const upward: string[] = [];
    for (const f of files) {
      const from = dataRoomOf(f.path);
      if (from === undefined) continue;
      if (!(from in DATA_ROOMS)) {
        upward.push(`${f.name} is in no room of data/`);
        continue;
      }
      for (const spec of importsOf(f.text)) {
        if (!spec.startsWith('.')) continue;
        const to = dataRoomOf(resolve(dirname(f.path), spec));
        if (to === undefined || to === from) continue;
        if (!DATA_ROOMS[from]!.includes(to)) upward.push(`${f.name} imports ${spec}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it(`imports hyparquet's private paths only in ${HYPARQUET_INTERNALS}`, () => {
    const importing = ['functions', 'infra', 'test']
      .flatMap((dir) => sourceFiles(join(REPO, dir)))
      .filter((path) => /(?:from\s+|import\s*\(\s*)'hyparquet\/src\//.test(readFileSync(path, 'utf8')))
      .map((path) => relative(REPO, path));
    expect(importing).toEqual([HYPARQUET_INTERNALS]);
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

const FUNCTIONS = resolve(CORE, '..');
const allFunctionFiles = sourceFiles(FUNCTIONS).map((path) => ({
  name: relative(FUNCTIONS, path),
  text: readFileSync(path, 'utf8'),
}));

/**
 * The one folder that may use the Kafka client library. The CLI and the handlers build clients only
 * through its factory (createKafka) and pass the KafkaConnection it returns to kafka/'s functions.
 */
const KAFKA_CLIENT_FOLDER = 'core/kafka/';

/** Classes that still extend Error directly, each with its reason; LakeError is the base of the rest. */
const ERROR_CLASS_EXCEPTIONS: Record<string, string> = {
  'core/errors.ts:LakeError': 'the base of every error floe throws',
};

describe('functions/ architecture', () => {
  it('uses kafkajs only in functions/core/kafka/', () => {
    const kafkajs = /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)'kafkajs(?:\/[^']*)?'/m;
    const leaking = allFunctionFiles
      .filter((f) => !f.name.startsWith(KAFKA_CLIENT_FOLDER) && kafkajs.test(f.text))
      .map((f) => f.name);
    expect(leaking).toEqual([]);
  });

  it('has no class extending Error but LakeError (and the listed ones)', () => {
    const direct = allFunctionFiles.flatMap((f) =>
      [...f.text.matchAll(/\bclass\s+(\w+)\s+extends\s+Error\b/g)].map((m) => `${f.name}:${m[1]}`),
    );
    expect(direct.filter((c) => !(c in ERROR_CLASS_EXCEPTIONS))).toEqual([]);
  });

  it('names every error class …Error', () => {
    const misnamed = allFunctionFiles.flatMap((f) =>
      [...f.text.matchAll(/\bclass\s+(\w+)\s+extends\s+\w*Error\b/g)]
        .map((m) => `${f.name}:${m[1]}`)
        .filter((c) => !c.endsWith('Error') && !(c in ERROR_CLASS_EXCEPTIONS)),
    );
    expect(misnamed).toEqual([]);
  });
});

const INFRA = resolve(import.meta.dirname, '../../infra');
/** Files of infra/ over MAX_LINES, each with its reason. */
const LONG_INFRA_FILES: Record<string, string> = {};

/** Static imports and re-exports, and dynamic `import('...')` with a literal specifier. */
function allImportsOf(text: string): string[] {
  return [...importsOf(text), ...[...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]!)];
}

describe('infra architecture', () => {
  const infraFiles = sourceFiles(INFRA).map((path) => ({
    name: relative(INFRA, path),
    text: readFileSync(path, 'utf8'),
  }));

  it(`has no file over ${MAX_LINES} lines but the listed ones`, () => {
    expect(infraFiles.length).toBeGreaterThan(0);
    const long = infraFiles
      .filter((f) => f.text.split('\n').length > MAX_LINES)
      .map((f) => f.name)
      .filter((name) => !(name in LONG_INFRA_FILES));
    expect(long).toEqual([]);
  });

  it('is never imported by functions/', () => {
    const importing = sourceFiles(FUNCTIONS).flatMap((path) =>
      allImportsOf(readFileSync(path, 'utf8'))
        .filter((spec) => spec.startsWith('.'))
        .filter((spec) => !relative(INFRA, resolve(dirname(path), spec)).startsWith('..'))
        .map((spec) => `${relative(FUNCTIONS, path)} imports ${spec}`),
    );
    expect(importing).toEqual([]);
  });
});
