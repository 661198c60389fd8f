/**
 * No two live versions of a key, in a keyed table (CDC, upsert, an aggregate's result table): the key
 * columns of every live row (deletes applied) are read, and a key held by two rows is a finding.
 *
 * Memory is bounded by passes, not by spilling: with more live rows than `keysPerPass`, the rows are
 * read once per pass and each pass keeps only the keys whose hash falls in its bucket, so one pass
 * holds at most about `keysPerPass` keys (their text, ~100 bytes each: ~100 MB at the default 1M).
 * A table of 10M rows is read 10 times; reading only the key columns keeps each pass cheap, and
 * nothing is written anywhere (a spill would need a writable place the CLI may not have).
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { readPath, indexPaths, pruneStruct } from '../scan/read-columns.js';
import { readScan } from '../scan/read-scan.js';
import type { ScanPlan } from '../scan/scan-plan.js';
import { tupleKey, valueKey } from '../scan/value-key.js';
import { currentSchema } from '../spec/metadata.js';
import { schemaFieldPaths } from '../spec/schema.js';
import type { FindingList } from './findings.js';

/** Keys one pass holds at most (about): see the file comment. */
export const DEFAULT_KEYS_PER_PASS = 1_000_000;

/** 32-bit FNV-1a of a key's text: which pass the key belongs to. */
function bucketOf(text: string, buckets: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0) % buckets;
}

export interface KeyCheckOptions {
  keyIds: readonly number[];
  /** An upper bound of the live rows (the live data files' record count). */
  rowsAtMost: bigint;
  /** @default DEFAULT_KEYS_PER_PASS */
  keysPerPass?: number;
}

/**
 * Reads the key columns of the plan's live rows and reports every key held more than once.
 * Returns the passes made.
 * @throws whatever readScan throws (NotFoundError, TransientIOError, ValidationError)
 */
export async function checkKeys(
  table: LoadedTable,
  plan: ScanPlan,
  options: KeyCheckOptions,
  findings: FindingList,
): Promise<number> {
  const schema = currentSchema(table.metadata);
  const projection = pruneStruct(schema, new Set(options.keyIds));
  const paths = indexPaths(projection);
  const keyPaths = options.keyIds.map((id) => paths.get(id) ?? []);
  const names = schemaFieldPaths(schema);
  const columns = options.keyIds.map((id) => names.get(id) ?? `#${id}`).join(', ');
  const perPass = BigInt(options.keysPerPass ?? DEFAULT_KEYS_PER_PASS);
  const passes = Number((options.rowsAtMost + perPass - 1n) / perPass) || 1;
  for (let pass = 0; pass < passes; pass++) {
    const counts = new Map<string, number>();
    for await (const row of readScan(table, plan, { schema: projection })) {
      const key = tupleKey(keyPaths.map((p) => readPath(row, p)));
      if (passes > 1 && bucketOf(key, passes) !== pass) continue;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const [key, n] of counts) {
      if (n < 2) continue;
      findings.add({
        check: 'duplicate-key',
        what: `${n} live rows hold the same key (${columns}): a change applied twice, or a delete that missed`,
        where: `key ${key.split('|').map(displayKeyPart).join(', ')}`,
        count: BigInt(n - 1),
      });
    }
  }
  return passes;
}

/** A key part as valueKey wrote it, shown as the value (`i42` → 42, `s"a"` → "a"). Never throws. */
function displayKeyPart(part: string): string {
  if (part === 'n') return 'null';
  if (part === valueKey(true) || part === valueKey(false)) return part === 't' ? 'true' : 'false';
  return part.slice(1);
}
