/**
 * The merged rows of a table and its hotset. Append tables: the cold rows, then the hot rows. CDC
 * tables: the tail's changes, collapsed per key in offset order, over the cold rows — a key the tail
 * touches loses its cold row (a later update replaces it, a delete removes it), and its final row, if
 * any, follows the cold rows. Pure.
 */
import type { KeyState } from '../cdc/collapse-changes.js';
import { keyFromRow } from '../cdc/record-key.js';
import type { KeyColumn } from '../routing/table-mode.js';
import type { Row } from '../spec/types.js';

export interface Overlaid {
  rows: Row[];
  /** Cold rows a hot change replaced or deleted. */
  replaced: number;
  /** Hot rows added (final rows of keys, or appended rows). */
  added: number;
}

/**
 * Applies collapsed changes over cold rows. `keep` decides which hot final rows are shown (a row
 * filter); cold rows are taken as already filtered. Cold rows without a usable key stay (ingestion
 * never writes such rows; another writer may have).
 */
export function overlayChanges(
  cold: readonly Row[],
  finals: readonly KeyState[],
  key: readonly KeyColumn[],
  keep: (row: Row) => boolean = () => true,
): Overlaid {
  const touched = new Set(finals.map((f) => f.key.text));
  const rows: Row[] = [];
  let replaced = 0;
  for (const row of cold) {
    let text: string | undefined;
    try {
      text = keyFromRow(row, key).text;
    } catch {
      text = undefined;
    }
    if (text !== undefined && touched.has(text)) replaced++;
    else rows.push(row);
  }
  let added = 0;
  for (const f of finals) {
    if (f.row !== null && keep(f.row)) {
      rows.push(f.row);
      added++;
    }
  }
  return { rows, replaced, added };
}

/** Appended hot rows after the cold ones, through `keep`. Never throws. */
export function unionRows(
  cold: readonly Row[],
  hot: readonly Row[],
  keep: (row: Row) => boolean = () => true,
): Overlaid {
  const added = hot.filter(keep);
  return { rows: [...cold, ...added], replaced: 0, added: added.length };
}
