/**
 * The READMEs as the docs tests read them: which files count (README.md at the top and every README.md
 * under functions/, infra/ and test/), their fenced blocks with the language tag and the
 * `<!-- not run: reason -->` line that may stand right before a fence, and their relative links.
 * A Markdown library would give a full syntax tree; these READMEs need only fences at the start of a
 * line and inline links, and the line a block starts on is what a failure must name.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const REPO_ROOT = join(import.meta.dirname, '../..');

/** Fence languages whose blocks are shell commands (the test runs them with bash). */
export const COMMAND_LANGUAGES: ReadonlySet<string> = new Set(['sh', 'bash', 'shell']);

export interface FencedBlock {
  /** The README, relative to the repository root. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's language tag ('' when it has none). */
  language: string;
  code: string;
  /** The reason of a `<!-- not run: reason -->` line right before the fence, if there is one. */
  notRun?: string;
}

/** README.md and every README.md under functions/, infra/ and test/ (no node_modules), sorted. */
export function readmeFiles(root = REPO_ROOT): string[] {
  const found = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === 'README.md') found.push(path);
    }
  };
  for (const dir of ['functions', 'infra', 'test']) walk(dir);
  return found.sort();
}

const FENCE_OPEN = /^```([A-Za-z0-9_+-]*)[^`]*$/;
const FENCE_CLOSE = /^```\s*$/;
const NOT_RUN = /^<!--\s*not run:\s*(.*?)\s*-->\s*$/;

/**
 * The fenced blocks of one README, in order.
 * @throws Error naming the file and line of a fence that is never closed
 */
export function fencedBlocks(markdown: string, file: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE_OPEN.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((line, j) => j > i && FENCE_CLOSE.test(line));
    if (end < 0) throw new Error(`${file}:${i + 1}: a fence that is never closed`);
    const marker = i > 0 ? NOT_RUN.exec(lines[i - 1]!) : null;
    blocks.push({
      file,
      line: i + 1,
      language: open[1]!.toLowerCase(),
      code: lines.slice(i + 1, end).join('\n'),
      ...(marker ? { notRun: marker[1]! } : {}),
    });
    i = end;
  }
  return blocks;
}

/** Every fenced block of every README, read from `root`. */
export function allFencedBlocks(root = REPO_ROOT): FencedBlock[] {
  return readmeFiles(root).flatMap((file) => fencedBlocks(readFileSync(join(root, file), 'utf8'), file));
}

export interface MarkdownLink {
  file: string;
  line: number;
  target: string;
}

/**
 * The inline links `[text](target)` outside fenced blocks and code spans, with their line; absolute
 * URLs (`scheme:`) left out.
 */
export function relativeLinks(markdown: string, file: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  let inFence = false;
  markdown.split('\n').forEach((line, index) => {
    if (/^```/.test(line)) {
      inFence = !inFence;
      return;
    }
    if (inFence) return;
    const prose = line.replace(/`+[^`]*`+/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      links.push({ file, line: index + 1, target });
    }
  });
  return links;
}

/**
 * The anchors GitHub gives a Markdown file's headings: lower case, code marks and punctuation other
 * than `-` and `_` dropped, spaces to `-`, a repeated anchor suffixed `-1`, `-2`, ...
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}
