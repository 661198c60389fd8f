/**
 * What the installed package runs imports only what `npm install floe` installs: every package a file
 * of functions/ or infra/ imports at run time is a dependency (or, for the construct, a peer dependency:
 * aws-cdk-lib and constructs come with the user's CDK app), never a devDependency, which a user does
 * not get. The files that are not part of the runtime — the build, the example app — are listed with
 * their reason, and the test checks that no entry point of the package reaches them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** Files of functions/ and infra/ the package does not run, each with its reason. */
const NOT_RUNTIME: Record<string, string> = {
  'infra/bundle-function.ts': 'bundles the functions with esbuild: the build and the clone synth',
  'infra/lazy-commonjs.ts': 'an esbuild plugin of the bundling',
  'infra/package/build.ts': 'builds the package',
  'infra/example-stack.ts': "the repository's example app, checked by cdk-nag",
  'infra/app.ts': "the repository's example app (cdk.json)",
};

/** Imports a runtime file makes only on a path the package never takes. */
const CLONE_ONLY_IMPORTS: Record<string, Record<string, string>> = {
  'functions/cli/bin.mjs': { tsx: 'only where main.ts sits beside it: a clone, never the package' },
};

/** The package's entry points: the bin, `floe`, `floe/cdk` and the Lambda handlers it bundles. */
const ENTRY_POINTS = [
  'functions/cli/bin.mjs',
  'functions/cli/main.ts',
  'functions/core/index.ts',
  'infra/index.ts',
  'functions/handlers/ingest.ts',
  'functions/handlers/maintenance.ts',
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs)$/.test(path) && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file's code without its comments' lines (a comment may quote an import). */
function codeOf(path: string): string {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
    .join('\n');
}

/**
 * The modules a file loads when it runs: static imports and re-exports (not `import type`, which the
 * compiler erases), side-effect imports, `import('…')` and `require('…')`.
 */
function runtimeImports(code: string): string[] {
  const found: string[] = [];
  for (const m of code.matchAll(/(?:^|\n)\s*(import|export)(\s+type)?\s[^;]*?from\s+'([^']+)'/g)) {
    if (!m[2]) found.push(m[3]!);
  }
  for (const m of code.matchAll(/(?:^|\n)\s*import\s+'([^']+)'/g)) found.push(m[1]!);
  for (const m of code.matchAll(/\b(?:import|require)\(\s*'([^']+)'\s*\)/g)) found.push(m[1]!);
  return found;
}

/** The npm package a bare specifier names (`@scope/name/sub` → `@scope/name`); undefined for Node's own. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('node:') || builtinModules.includes(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** A relative import resolved to its source file (`./x.js` → `x.ts`), or undefined when outside the sources. */
function resolveRelative(from: string, specifier: string): string | undefined {
  const target = resolve(dirname(from), specifier);
  for (const candidate of [target.replace(/\.js$/, '.ts'), target, `${target}.ts`]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

const files = [...sourceFiles(join(ROOT, 'functions')), ...sourceFiles(join(ROOT, 'infra'))].map((path) => ({
  path,
  name: relative(ROOT, path),
  imports: runtimeImports(codeOf(path)),
}));

describe('runtime dependencies', () => {
  it('every package a runtime file imports is a dependency or a peer dependency, not a devDependency', () => {
    // Prepare
    const installed = new Set([
      ...Object.keys(manifest.dependencies),
      ...Object.keys(manifest.peerDependencies),
    ]);

    // Act
    const missing = files
      .filter((file) => !(file.name in NOT_RUNTIME))
      .flatMap((file) =>
        file.imports
          .filter((spec) => !spec.startsWith('.'))
          .map(packageOf)
          .filter((pkg): pkg is string => pkg !== undefined && !installed.has(pkg))
          .filter((pkg) => CLONE_ONLY_IMPORTS[file.name]?.[pkg] === undefined)
          .map(
            (pkg) =>
              `${file.name} imports ${pkg}${pkg in manifest.devDependencies ? ' (a devDependency)' : ''}`,
          ),
      );

    // Assess
    expect(missing).toEqual([]);
  });

  it('no entry point of the package reaches a file that is not part of the runtime', () => {
    // Prepare
    const byPath = new Map(files.map((file) => [file.path, file]));
    const reached = new Set<string>();
    const pending = ENTRY_POINTS.map((name) => join(ROOT, name));

    // Act
    while (pending.length > 0) {
      const path = pending.pop()!;
      if (reached.has(path)) continue;
      reached.add(path);
      for (const spec of byPath.get(path)?.imports ?? []) {
        if (!spec.startsWith('.')) continue;
        const target = resolveRelative(path, spec);
        if (target !== undefined && byPath.has(target)) pending.push(target);
      }
    }

    // Assess
    const names = [...reached].map((path) => relative(ROOT, path));
    expect(names).toContain('infra/kafka-to-iceberg.ts');
    expect(names).toContain('functions/core/live/read-live-table.ts');
    expect(names.filter((name) => name in NOT_RUNTIME)).toEqual([]);
  });

  it('the listed exceptions exist and the devDependency check sees an import of one', () => {
    // Prepare
    const names = new Set(files.map((file) => file.name));
    const bundler = files.find((file) => file.name === 'infra/bundle-function.ts');

    // Act
    const absent = Object.keys(NOT_RUNTIME).filter((name) => !names.has(name));
    const bundlerPackages = (bundler?.imports ?? []).map(packageOf);

    // Assess
    expect(absent).toEqual([]);
    expect(bundlerPackages).toContain('esbuild');
    expect(manifest.devDependencies).toHaveProperty('esbuild');
  });
});
