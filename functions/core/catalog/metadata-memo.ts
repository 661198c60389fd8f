/**
 * The last metadata a catalog read or wrote for each table, by its file's location. A metadata.json is
 * never rewritten in place (every commit writes a new file; the catalog's pointer moves), so while the
 * pointer still names the same location the parsed object is that file's content: a warm function's next
 * commit skips one GET and one JSON parse of a file that grows with the table's history.
 *
 * The entries are deep-frozen: a loaded table's metadata is shared by every load that hits the memo, so
 * code that changed it in place would change what the next batch reads. Frozen, such code throws at the
 * change instead (updates go through applyUpdates, which works on a copy).
 */
import type { TableMetadata } from '../spec/types.js';

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return Object.freeze(value);
}

export class MetadataMemo {
  private readonly entries = new Map<string, { location: string; metadata: TableMetadata }>();

  /** The memo's metadata when `location` is the one it holds for `table`. */
  get(table: string, location: string): TableMetadata | undefined {
    const entry = this.entries.get(table);
    return entry?.location === location ? entry.metadata : undefined;
  }

  /** Remembers `metadata` as the content of `location` (read from it, or just written there); frozen. */
  remember(table: string, location: string, metadata: TableMetadata): TableMetadata {
    this.entries.set(table, { location, metadata: deepFreeze(metadata) });
    return metadata;
  }

  forget(table: string): void {
    this.entries.delete(table);
  }
}
