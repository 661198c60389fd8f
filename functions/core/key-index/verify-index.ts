/**
 * What `floe index status` and `floe index verify` report: how far behind the main table an index is,
 * and whether its view (index-entries.ts) equals a full scan of the snapshot it covers — every live
 * row's key at the file and position the index names, and no key the scan does not hold.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { ValidationError } from '../errors.js';
import type { KeyColumn } from '../routing/table-mode.js';
import { resolveCdcSettings } from '../routing/table-mode.js';
import { currentSchema, currentSnapshot, snapshotById } from '../spec/metadata.js';
import { readIngestProperties } from '../spec/table-properties.js';
import { missedSnapshots } from './catch-up.js';
import { type Coverage, indexIdentifier, loadIndex, readCoverage } from './index-table.js';
import { readIndexView } from './index-locator.js';
import { scanEntries } from './rebuild-index.js';

/** Differences reported at most (verify stops listing past these). */
const MAX_DIFFERENCES = 20;

export interface IndexStatus {
  table: string;
  index: string;
  exists: boolean;
  covered: Coverage | null;
  current: { snapshotId: bigint; sequenceNumber: number } | null;
  /** Snapshots of the main table since the covered one; null when the covered one is not an ancestor. */
  behind: number | null;
  /** Why `behind` is null, when it is. */
  problem: string | null;
}

/**
 * The key columns of a keyed table (debezium or upsert mode, from its properties and schema).
 * @throws ValidationError when the table is not a keyed table, or has no usable key
 */
export function keyColumnsOf(main: LoadedTable): KeyColumn[] {
  const properties = main.metadata.properties ?? {};
  const mode = readIngestProperties(properties).mode;
  if (mode !== 'debezium' && mode !== 'upsert')
    throw new ValidationError(
      `${main.identifier.name} is not a keyed table (floe.mode is ${mode ?? 'unset'})`,
    );
  const route = { table: main.identifier, topics: [], kafkaLineage: false, properties: {} };
  return resolveCdcSettings(mode, currentSchema(main.metadata), route, properties).key;
}

/**
 * How far behind `main` its index is.
 * @throws whatever the catalog throws
 */
export async function indexStatus(catalog: Catalog, main: LoadedTable): Promise<IndexStatus> {
  const index = await loadIndex(catalog, main.identifier);
  const covered = index ? readCoverage(index) : null;
  const snapshot = currentSnapshot(main.metadata);
  const missed = missedSnapshots(main, covered);
  return {
    table: [...main.identifier.namespace, main.identifier.name].join('.'),
    index: [...main.identifier.namespace, indexIdentifier(main.identifier).name].join('.'),
    exists: index !== undefined,
    covered,
    current: snapshot
      ? { snapshotId: snapshot['snapshot-id'], sequenceNumber: snapshot['sequence-number'] }
      : null,
    behind: typeof missed === 'string' ? null : missed.length,
    problem: typeof missed === 'string' ? missed : null,
  };
}

/**
 * The differences between the index's view and a scan of the snapshot it covers (empty: they agree).
 * @throws ValidationError when the table is not keyed; NotFoundError / TransientIOError from reading
 */
export async function verifyIndex(catalog: Catalog, main: LoadedTable): Promise<string[]> {
  const columns = keyColumnsOf(main);
  const index = await loadIndex(catalog, main.identifier);
  if (index === undefined) return ['the key index does not exist (floe index build makes it)'];
  const covered = readCoverage(index);
  if (covered === null) return ['the key index covers no snapshot of the table'];
  const snapshot = snapshotById(main.metadata, covered.snapshotId);
  if (snapshot === undefined || covered.tableUuid !== main.metadata['table-uuid'])
    return [`the key index covers snapshot ${covered.snapshotId}, which the table does not have`];
  const scanned = new Map<string, string>();
  const differences: string[] = [];
  const note = (text: string) => {
    if (differences.length < MAX_DIFFERENCES) differences.push(text);
  };
  for (const e of await scanEntries(main, snapshot, columns)) {
    const where = `${e.filePath}@${e.pos}`;
    const held = scanned.get(e.key);
    if (held !== undefined) note(`key ${e.key} has two live rows in the table (${held}, ${where})`);
    scanned.set(e.key, where);
  }
  const view = await readIndexView(index);
  for (const key of new Set([...scanned.keys(), ...view.keys()])) {
    const { row } = view.state(key);
    const indexed = row ? `${row.filePath}@${row.pos}` : undefined;
    const actual = scanned.get(key);
    if (indexed === actual) continue;
    note(`key ${key}: the index says ${indexed ?? 'no live row'}, the table has ${actual ?? 'no live row'}`);
  }
  return differences;
}
