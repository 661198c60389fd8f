/**
 * `floe index`: the key index of a keyed table (functions/core/key-index/). `build` creates it or
 * catches it up to the table's current snapshot; `rebuild` rewrites it from a full scan (also how its
 * log of entries is compacted); `status` says which snapshot it covers and how far behind it is;
 * `verify` compares it with a full scan (exit 1 naming the first differences). Works on a keyed table
 * another writer made too (its key is the schema's identifier fields or floe.identifier-columns).
 */
import { parseArgs } from 'node:util';
import { parseIdentifier } from '../../core/catalog/catalog.js';
import { catchUpIndex } from '../../core/key-index/catch-up.js';
import { loadOrCreateIndex } from '../../core/key-index/index-table.js';
import { rebuildIndex } from '../../core/key-index/rebuild-index.js';
import { indexStatus, keyColumnsOf, verifyIndex } from '../../core/key-index/verify-index.js';
import { stringifyJson } from '../../core/spec/json-codec.js';
import { currentSnapshot } from '../../core/spec/metadata.js';
import { CATALOG_USAGE, openCatalog } from '../catalog-options.js';
import { helpFor } from '../help.js';
import { OPTIONS, UsageError } from '../options.js';

const ACTIONS = ['build', 'rebuild', 'status', 'verify'] as const;
type Action = (typeof ACTIONS)[number];

function indexOptions() {
  // Built on call, as verify.ts's: the CLI's modules import each other.
  return { ...OPTIONS };
}

const out = (line: string) => process.stdout.write(`${line}\n`);

/** Runs `floe index`; returns the exit code (0 ok, 1 differences). @throws UsageError for bad usage */
export async function runIndex(args: string[]): Promise<number> {
  let values: ReturnType<typeof parseArgs<{ options: ReturnType<typeof indexOptions> }>>['values'];
  let action: Action;
  try {
    const parsed = parseArgs({ args, options: indexOptions(), allowPositionals: true, strict: true });
    values = parsed.values;
    if (values.help) {
      process.stdout.write(`${helpFor('index')!}\n${CATALOG_USAGE}`);
      return 0;
    }
    const [first, ...more] = parsed.positionals;
    if (more.length > 0) throw new UsageError(`index takes one action, got '${more[0]}' too`);
    if (!ACTIONS.includes((first ?? 'status') as Action))
      throw new UsageError(`unknown index action '${first}' (actions: ${ACTIONS.join(', ')})`);
    action = (first ?? 'status') as Action;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
  if (!values.table) throw new UsageError('index needs --table NS.NAME');
  const { catalog } = await openCatalog(values);
  const main = await catalog.loadTable(parseIdentifier(values.table));
  if (action === 'status') {
    const status = await indexStatus(catalog, main);
    if (values.json) out(stringifyJson(status, 2));
    else {
      const covered = status.covered ? `snapshot ${status.covered.snapshotId}` : 'nothing';
      const current = status.current ? `snapshot ${status.current.snapshotId}` : 'no snapshot';
      out(
        `${status.index}: ${status.exists ? `covers ${covered}` : 'does not exist'}; ${status.table} is at ${current}`,
      );
      out(
        status.behind === null
          ? `behind: unknown (${status.problem})`
          : `behind: ${status.behind} snapshot(s)`,
      );
    }
    return 0;
  }
  if (action === 'verify') {
    const differences = await verifyIndex(catalog, main);
    if (values.json) out(stringifyJson({ table: values.table, differences }, 2));
    else {
      for (const d of differences) out(`DIFFERENCE ${d}`);
      out(
        differences.length === 0
          ? 'index verify: the index agrees with the table'
          : `index verify: ${differences.length} difference(s)`,
      );
    }
    return differences.length === 0 ? 0 : 1;
  }
  const columns = keyColumnsOf(main);
  const snapshot = currentSnapshot(main.metadata);
  if (action === 'rebuild' && snapshot !== undefined) {
    const index = await loadOrCreateIndex(catalog, main.identifier);
    await rebuildIndex(catalog, main, snapshot, columns, index);
    out(`${values.table}: index rebuilt at snapshot ${snapshot['snapshot-id']}`);
    return 0;
  }
  const up = await catchUpIndex(catalog, main, columns);
  const how =
    up.kind === 'ahead'
      ? 'already covers a newer snapshot'
      : up.how === 'caught-up'
        ? `caught up over ${up.snapshots} snapshot(s)`
        : up.how === 'rebuilt'
          ? `rebuilt (${up.reason})`
          : 'current';
  out(`${values.table}: index ${how}${snapshot ? ` at snapshot ${snapshot['snapshot-id']}` : ''}`);
  return 0;
}
