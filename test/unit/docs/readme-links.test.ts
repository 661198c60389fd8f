/**
 * Every relative link of every README reaches a file of the repository, and a `#anchor` one of that
 * file's headings; every fenced block says what it is. (The command blocks themselves are run by
 * test/integration/docs/readme-commands.test.ts.)
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  allFencedBlocks,
  fencedBlocks,
  headingAnchors,
  REPO_ROOT,
  readmeFiles,
  relativeLinks,
} from '../../support/readme-blocks.js';

/** What is wrong with one link, or null when it resolves. */
function brokenLink(file: string, target: string): string | null {
  const [path = '', anchor] = target.split('#', 2);
  const resolved = path === '' ? join(REPO_ROOT, file) : normalize(join(REPO_ROOT, dirname(file), path));
  if (!resolved.startsWith(REPO_ROOT)) return 'leaves the repository';
  if (!existsSync(resolved)) return 'no such file';
  if (anchor === undefined || statSync(resolved).isDirectory() || !resolved.endsWith('.md')) return null;
  return headingAnchors(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))
    ? null
    : `no heading #${anchor}`;
}

describe('the READMEs', () => {
  it('are found at the top and under functions/, infra/ and test/', () => {
    // Act
    const files = readmeFiles();

    // Assess
    expect(files).toContain('README.md');
    expect(files).toContain('infra/README.md');
    expect(files).toContain('functions/cli/README.md');
    expect(files.some((file) => file.includes('node_modules'))).toBe(false);
  });

  it('link only to files and headings that exist', () => {
    // Prepare
    const links = readmeFiles().flatMap((file) =>
      relativeLinks(readFileSync(join(REPO_ROOT, file), 'utf8'), file),
    );

    // Act
    const broken = links
      .map((link) => ({ link, problem: brokenLink(link.file, link.target) }))
      .filter(({ problem }) => problem !== null)
      .map(({ link, problem }) => `${link.file}:${link.line}: ${link.target} (${problem})`);

    // Assess
    expect(links.length).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });

  it('tag every fenced block with what it holds', () => {
    // Act
    const untagged = allFencedBlocks()
      .filter((block) => block.language === '')
      .map((block) => `${block.file}:${block.line}`);

    // Assess
    expect(untagged).toEqual([]);
  });
});

describe('the link checker', () => {
  it('reports a missing file, a missing heading and a link out of the repository', () => {
    // Prepare
    const markdown = [
      '# Top',
      'See [a](functions/cli/README.md), [b](no/such.md), [c](infra/README.md#no-such-heading),',
      '[d](../outside.md), [e](https://example.com/x.md), `[f](in/code.md)` and [g](#floe).',
    ].join('\n');

    // Act
    const problems = relativeLinks(markdown, 'README.md').map((link) => [
      link.target,
      brokenLink(link.file, link.target),
    ]);

    // Assess
    expect(problems).toEqual([
      ['functions/cli/README.md', null],
      ['no/such.md', 'no such file'],
      ['infra/README.md#no-such-heading', 'no heading #no-such-heading'],
      ['../outside.md', 'leaves the repository'],
      ['#floe', null],
    ]);
  });

  it('names headings as GitHub anchors them', () => {
    // Act
    const anchors = headingAnchors(
      [
        '# `floe serve`: a read-only Iceberg REST catalog',
        "## When a topic's history changes",
        '## Route keys (in the routes file or `FLOE_TABLES`)',
        '## Tests',
        '```sh',
        '# a comment, not a heading',
        '```',
        '## Tests',
      ].join('\n'),
    );

    // Assess
    expect([...anchors]).toEqual([
      'floe-serve-a-read-only-iceberg-rest-catalog',
      'when-a-topics-history-changes',
      'route-keys-in-the-routes-file-or-floe_tables',
      'tests',
      'tests-1',
    ]);
  });
});

describe('fencedBlocks', () => {
  it('reads the language and a not-run reason only from the line right before the fence', () => {
    // Prepare
    const markdown = [
      '<!-- not run: needs an AWS account -->',
      '```sh',
      'npx cdk deploy',
      '```',
      '<!-- not run: too far away -->',
      '',
      '```bash',
      'floe --help',
      '```',
      '```json',
      '{}',
      '```',
    ].join('\n');

    // Act
    const blocks = fencedBlocks(markdown, 'X.md');

    // Assess
    expect(blocks).toEqual([
      { file: 'X.md', line: 2, language: 'sh', code: 'npx cdk deploy', notRun: 'needs an AWS account' },
      { file: 'X.md', line: 7, language: 'bash', code: 'floe --help' },
      { file: 'X.md', line: 10, language: 'json', code: '{}' },
    ]);
  });

  it('refuses a fence that is never closed', () => {
    expect(() => fencedBlocks('text\n```sh\nfloe --help\n', 'X.md')).toThrow(/X.md:2/);
  });
});
