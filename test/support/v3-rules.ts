/** The spec's format-version 3 rules, checked on what floe committed (maintenance and CDC tests). */
import { expect } from 'vitest';
import type { LoadedTable } from '../../functions/core/catalog/catalog.js';
import { liveEntries } from './readers.js';

/**
 * Row ids handed out in order (each snapshot's first-row-id is the running total of added-rows, and
 * next-row-id their sum); deletes by position are deletion vectors only, each naming a live data file,
 * at most one per data file.
 */
export async function checkV3(table: LoadedTable): Promise<void> {
  const md = table.metadata;
  expect(md['format-version']).toBe(3);
  let next = 0;
  for (const s of md.snapshots) {
    expect(s['first-row-id'], 'first-row-id').toBe(next);
    next += s['added-rows'] ?? Number.NaN;
  }
  expect(md['next-row-id']).toBe(next);
  const live = await liveEntries(table);
  const data = new Set(live.filter((e) => e.data_file.content === 0).map((e) => e.data_file.file_path));
  const deletes = live.filter((e) => e.data_file.content === 1).map((e) => e.data_file);
  for (const dv of deletes) {
    expect(dv.file_format).toBe('PUFFIN');
    expect(data.has(dv.referenced_data_file ?? ''), 'a vector names a live data file').toBe(true);
  }
  const named = deletes.map((d) => d.referenced_data_file);
  expect(new Set(named).size, 'at most one vector per data file').toBe(named.length);
}
