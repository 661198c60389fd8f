/**
 * An esbuild plugin for the split bundle: `await import('a-commonjs-package')` keeps its named exports.
 *
 * With `splitting`, esbuild makes a dynamically imported package a chunk of its own. For a CommonJS
 * package (the AWS SDK clients' `dist-cjs`, parquet-wasm's Node build, the MSK IAM signer) that chunk
 * has only `export default module.exports`, so `const { GlueClient } = await import('@aws-sdk/client-glue')`
 * would be undefined, where Node itself (and a bundle without splitting) gives the named exports too.
 * The plugin puts a small ES module in between that re-exports them by name: the names are read by
 * loading, here at bundling time, the very file esbuild resolved.
 */
import { builtinModules, createRequire } from 'node:module';
import type { Plugin, PluginBuild } from 'esbuild';

const NAMESPACE = 'floe-lazy-commonjs';
const MODULE = '__floeLazyModule';
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const BUILTINS = new Set(builtinModules);
/** Marks the plugin's own resolution of a path, which it leaves to esbuild. */
const RESOLVING = Symbol('floe-lazy-commonjs resolving');

interface Wrapped {
  resolveDir: string;
  names: string[];
}

/** Whether `name` can be a `const` binding (an identifier and not a reserved word). */
function isBindingName(name: string): boolean {
  if (!IDENTIFIER.test(name) || name === MODULE) return false;
  try {
    new Function(`"use strict"; let ${name};`);
    return true;
  } catch {
    return false;
  }
}

/** The export names of the CommonJS `file`, loaded as Node loads it; undefined when it does not load. */
function commonJsExportNames(file: string): string[] | undefined {
  let loaded: unknown;
  try {
    loaded = createRequire(file)(file);
  } catch {
    return undefined;
  }
  if ((typeof loaded !== 'object' && typeof loaded !== 'function') || loaded === null) return [];
  return Object.keys(loaded).filter((n) => n !== 'default' && n !== '__esModule' && isBindingName(n));
}

/** Whether esbuild reads `file` as an ES module (as `dist-es` builds are): its chunk has static exports. */
async function isEsModule(esbuild: PluginBuild['esbuild'], file: string): Promise<boolean> {
  const { metafile } = await esbuild.build({
    entryPoints: [file],
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return Object.values(metafile.inputs).some((input) => input.format === 'esm');
}

/** See the file comment. */
export function lazyCommonJsPlugin(): Plugin {
  return {
    name: 'floe-lazy-commonjs',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.kind !== 'dynamic-import' || args.namespace !== 'file') return undefined;
        if (args.pluginData === RESOLVING || args.path.startsWith('node:') || BUILTINS.has(args.path))
          return undefined;
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: RESOLVING,
        });
        if (resolved.errors.length > 0 || resolved.external) return undefined;
        if (!/\.c?js$/.test(resolved.path) || (await isEsModule(build.esbuild, resolved.path)))
          return undefined;
        const names = commonJsExportNames(resolved.path);
        if (!names) return undefined;
        const pluginData: Wrapped = { resolveDir: args.resolveDir, names };
        return { path: args.path, namespace: NAMESPACE, pluginData };
      });
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => {
        const { resolveDir, names } = args.pluginData as Wrapped;
        const lines = [
          `import * as ${MODULE} from ${JSON.stringify(args.path)};`,
          // Node's default export of a CommonJS module is module.exports
          `export default ${MODULE}.default;`,
        ];
        if (names.length > 0) lines.push(`export const { ${names.join(', ')} } = ${MODULE};`);
        return { contents: lines.join('\n'), resolveDir, loader: 'js' };
      });
    },
  };
}
