/**
 * `floe rebase-offsets`: starts a new offset epoch for a topic of a table (and of its dead-letter table,
 * whose letters are checked against the same offsets), the way on after floe refused a batch because
 * the topic's history changed under the table (functions/core/ingest/rebase-offsets.ts).
 */
import { helpFor } from '../help.js';
import { parseArgs } from 'node:util';
import { parseIdentifier } from '../../core/catalog/catalog.js';
import { type RebaseResult, rebaseOffsets } from '../../core/table/actions/rebase-offsets.js';
import { dlqIdentifier } from '../../core/records/dead-letters.js';
import { openCatalog } from '../catalog-options.js';
import { OPTIONS, UsageError } from '../options.js';

const REBASE_FLAGS = {
  topic: { type: 'string' },
  partitions: { type: 'string' },
  'dlq-table': { type: 'string' },
} as const;

function rebaseOptions() {
  // Built on call, as run.ts's: the CLI's modules import each other, so OPTIONS may not be set at load time.
  return { ...OPTIONS, ...REBASE_FLAGS };
}

/** `--partitions 0,1`: distinct non-negative 32-bit integers. @throws UsageError */
export function parsePartitionList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const p = /^\d+$/.test(part.trim()) ? Number(part.trim()) : Number.NaN;
    if (!Number.isSafeInteger(p) || p > 2_147_483_647)
      throw new UsageError(`--partitions takes partition numbers separated by commas, got '${part}'`);
    if (!out.includes(p)) out.push(p);
  }
  return out.sort((a, b) => a - b);
}

function describe(result: RebaseResult, topic: string): string {
  if (result.status === 'nothing-committed')
    return `${result.table}: no committed offsets of ${topic} for those partitions; nothing to rebase\n`;
  const parts = result.closed
    .map(
      (c) =>
        `${c.partition} (now epoch ${c.epoch}; ${c.ranges.map(([a, b]) => `${a}-${b}`).join(',')} moved aside)`,
    )
    .join(', ');
  return `${result.table}: ${topic} partitions ${parts}; snapshot ${result.snapshotId}\n`;
}

/** Runs `floe rebase-offsets`; returns the exit code. @throws UsageError for bad flags */
export async function runRebaseOffsets(args: string[]): Promise<number> {
  let values: ReturnType<typeof parseArgs<{ options: ReturnType<typeof rebaseOptions> }>>['values'];
  try {
    const parsed = parseArgs({ args, options: rebaseOptions(), allowPositionals: true, strict: true });
    if (parsed.positionals.length > 0)
      throw new UsageError(`rebase-offsets takes no arguments, got '${parsed.positionals[0]}'`);
    values = parsed.values;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(helpFor('rebase-offsets')!);
    return 0;
  }
  if (!values.table) throw new UsageError('rebase-offsets needs --table NS.NAME');
  if (!values.topic) throw new UsageError('rebase-offsets needs --topic T');
  const topic = values.topic;
  const partitions = values.partitions === undefined ? undefined : parsePartitionList(values.partitions);
  const id = parseIdentifier(values.table);
  const { catalog, lock } = await openCatalog(values, { withLock: true });
  const main = await rebaseOffsets(catalog, id, topic, partitions, { lock });
  process.stdout.write(describe(main, topic));
  const dlq = dlqIdentifier(id, values['dlq-table']);
  if (await catalog.tableExists(dlq)) {
    process.stdout.write(describe(await rebaseOffsets(catalog, dlq, topic, partitions, { lock }), topic));
  }
  return 0;
}
