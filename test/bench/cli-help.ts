/**
 * Section `cli-help`: how long `floe --help` takes as an installed package runs it — the `floe` bin
 * (functions/cli/bin.mjs) over the compiled CLI — against `node -e 0` in the same run (Node's own start).
 *
 * The installed layout is rebuilt in a temporary folder: bin.mjs under functions/cli/ with no main.ts
 * beside it (so it runs dist/, as once installed), dist/ the repository's own (`npm run build`) when
 * present, else every file of functions/ transpiled one to one by esbuild (no bundling: the CLI's lazy
 * imports stay lazy, as tsc emits them), node_modules linked. Runs alternate help and anchor; CPU
 * (user + system, every thread) comes from each child itself: a preload, given to the anchor too,
 * writes process.cpuUsage() to fd 3 on exit. One clone-mode figure beside it: the same bin in the
 * repository, where it runs the TypeScript through tsx.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

export interface CliHelpFigures {
  /** Where the compiled CLI came from: the repository's dist/ or an esbuild transpile of functions/. */
  build: 'dist' | 'esbuild';
  runs: number;
  /** Medians: `floe --help` through the bin over the compiled CLI. */
  wall_ms: number;
  cpu_ms: number;
  /** Medians: `node -e 0`, the anchor. */
  anchor_wall_ms: number;
  anchor_cpu_ms: number;
  /** help ÷ anchor. */
  wall_ratio: number;
  cpu_ratio: number;
  /** `floe --help` in a clone (the bin runs the TypeScript through tsx); median of fewer runs. */
  tsx_wall_ms: number;
}

const CPU_PRELOAD =
  'data:text/javascript,import{writeSync}from"node:fs";process.on("exit",()=>{const u=process.cpuUsage();writeSync(3,String((u.user+u.system)/1000))})';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One child: wall ms around it, CPU ms it reported. @throws Error when it fails */
function timeNode(args: string[], cwd: string): { wall: number; cpu: number } {
  const started = performance.now();
  const result = spawnSync(process.execPath, ['--import', CPU_PRELOAD, ...args], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  const wall = performance.now() - started;
  if (result.status !== 0)
    throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return { wall, cpu: Number(result.output[3]) };
}

function listTs(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The installed layout in a temporary folder (see the file comment). */
async function installedLayout(
  progress: (line: string) => void,
): Promise<{ root: string; build: 'dist' | 'esbuild' }> {
  const root = mkdtempSync(join(tmpdir(), 'floe-help-bench-'));
  cpSync(join(REPO, 'functions/cli/bin.mjs'), join(root, 'functions/cli/bin.mjs'));
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module' }));
  if (existsSync(join(REPO, 'dist/functions/cli/main.js'))) {
    symlinkSync(join(REPO, 'dist'), join(root, 'dist'));
    return { root, build: 'dist' };
  }
  progress('cli-help: no dist/ (npm run build): transpiling functions/ with esbuild');
  const { build } = await import('esbuild');
  const files = listTs(join(REPO, 'functions'));
  await build({
    entryPoints: files.map((f) => relative(REPO, f)),
    absWorkingDir: REPO,
    outdir: join(root, 'dist/functions'),
    outbase: 'functions',
    format: 'esm',
    platform: 'node',
    logLevel: 'warning',
  });
  return { root, build: 'esbuild' };
}

export async function runCliHelp(
  settings: { repeats: number },
  progress: (line: string) => void,
): Promise<CliHelpFigures> {
  const { root, build } = await installedLayout(progress);
  try {
    const bin = join(root, 'functions/cli/bin.mjs');
    // warm the file cache for both, untimed
    timeNode([bin, '--help'], root);
    timeNode(['-e', '0'], root);
    const help: { wall: number; cpu: number }[] = [];
    const anchor: { wall: number; cpu: number }[] = [];
    for (let i = 0; i < settings.repeats; i++) {
      help.push(timeNode([bin, '--help'], root));
      anchor.push(timeNode(['-e', '0'], root));
    }
    const tsx: number[] = [];
    for (let i = 0; i < Math.max(1, Math.floor(settings.repeats / 3)); i++)
      tsx.push(timeNode([join(REPO, 'functions/cli/bin.mjs'), '--help'], REPO).wall);
    const wall = median(help.map((r) => r.wall));
    const cpu = median(help.map((r) => r.cpu));
    const anchorWall = median(anchor.map((r) => r.wall));
    const anchorCpu = median(anchor.map((r) => r.cpu));
    progress(
      `cli-help: floe --help ${wall.toFixed(0)} ms (${cpu.toFixed(0)} ms CPU), node -e 0 ${anchorWall.toFixed(0)} ms`,
    );
    return {
      build,
      runs: settings.repeats,
      wall_ms: wall,
      cpu_ms: cpu,
      anchor_wall_ms: anchorWall,
      anchor_cpu_ms: anchorCpu,
      wall_ratio: wall / anchorWall,
      cpu_ratio: cpu / anchorCpu,
      tsx_wall_ms: median(tsx),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The section's lines of the text report. */
export function cliHelpText(
  h: CliHelpFigures,
  table: (head: string[], rows: (string | number)[][]) => string,
): string {
  return [
    `## cli-help. \`floe --help\` through the bin over the compiled CLI (${h.build}), medians of ${h.runs} alternating runs`,
    table(
      ['', 'wall ms', 'CPU ms'],
      [
        ['floe --help', h.wall_ms.toFixed(0), h.cpu_ms.toFixed(0)],
        ['node -e 0 (anchor)', h.anchor_wall_ms.toFixed(0), h.anchor_cpu_ms.toFixed(0)],
        ['ratio', h.wall_ratio.toFixed(2), h.cpu_ratio.toFixed(2)],
      ],
    ),
    `(target: wall < 500 ms; in a clone, through tsx: ${h.tsx_wall_ms.toFixed(0)} ms)`,
  ].join('\n');
}
