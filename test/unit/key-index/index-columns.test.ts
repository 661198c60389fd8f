/**
 * The cold build of a key index view from the index files' columns (index-columns.ts, as
 * IndexViewCache.view reads an index whole) answers what folding the same files' rows as entries
 * answers (rowEntry, then KeyView.fold: the build it replaced), for any index (2 buckets: runs of rows
 * in a file): dead rows, versions or
 * none, positions and offsets past 2^16, negative offsets, several appends.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { readDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { appendEntries } from '../../../functions/core/key-index/index-commit.js';
import { type IndexEntry, rowEntry } from '../../../functions/core/key-index/index-entries.js';
import { INDEX_SCHEMA, loadOrCreateIndex } from '../../../functions/core/key-index/index-table.js';
import { KeyView } from '../../../functions/core/key-index/key-view.js';
import { IndexViewCache } from '../../../functions/core/key-index/view-cache.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { readSnapshotManifests } from '../../../functions/core/table/snapshot-manifests.js';
import { tempWarehouse } from '../../support/tables.js';

const KEYS = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? `i${i * 70_001}` : `s"k-é-${i}"`));
const PATHS = ['s3://w/data/a.parquet', 's3://w/data/b.parquet', 's3://w/data/c-ü.parquet'];

const entryArb: fc.Arbitrary<IndexEntry> = fc.record({
  key: fc.constantFrom(...KEYS),
  filePath: fc.constantFrom(...PATHS),
  // Mostly a few positions, so deaths often name a key's live row.
  pos: fc
    .oneof(
      { weight: 4, arbitrary: fc.integer({ min: 0, max: 1 }) },
      { weight: 1, arbitrary: fc.integer({ min: 65_530, max: 2 ** 31 - 1 }) },
    )
    .map(BigInt),
  live: fc.boolean(),
  seq: fc.integer({ min: 1, max: 6 }).map(BigInt),
  version: fc.option(
    fc.record({
      topic: fc.constantFrom('shop.orders', 'shop.items'),
      partition: fc.integer({ min: 0, max: 3 }),
      offset: fc.oneof(
        fc.bigInt({ min: -(2n ** 20n), max: 2n ** 20n }),
        fc.bigInt({ min: 2n ** 40n, max: 2n ** 52n }),
      ),
    }),
    { nil: null },
  ),
});

/** The view built the way it was before index-columns.ts: row objects, entries, then the fold. */
async function rowsView(index: LoadedTable): Promise<KeyView | undefined> {
  const snapshot = currentSnapshot(index.metadata);
  const view = new KeyView();
  if (snapshot === undefined) return view;
  const manifests = await readSnapshotManifests(index.io, snapshot);
  const paths = manifests.flatMap((m) => m.entries.map((e) => e.data_file.file_path));
  async function* chunks() {
    for (const path of paths)
      yield (await readDataFile(index.io, path, INDEX_SCHEMA)).flatMap((r) => rowEntry(r) ?? []);
  }
  return (await view.foldChunks(chunks())) === true ? view : undefined;
}

describe('the key index view built from the index files columns', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeAll(async () => {
    wh = await tempWarehouse();
  });
  afterAll(() => wh.cleanup());
  let tables = 0;

  it('answers every lookup as folding the rows as entries does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(entryArb, { minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 3 }),
        async (appends) => {
          // Prepare
          let index = await loadOrCreateIndex(wh.catalog, { namespace: ['shop'], name: `t${tables++}` }, 2);
          for (const [i, entries] of appends.entries()) {
            const coverage = { snapshotId: BigInt(i + 1), sequenceNumber: i + 1, tableUuid: 'main' };
            const out = await appendEntries(wh.catalog, index, entries, coverage, () => 'append');
            if (out.kind === 'committed') index = out.index;
          }
          // Act
          const columns = await new IndexViewCache().view(index);
          const rows = await rowsView(index);
          // Assess
          expect(columns === undefined).toBe(rows === undefined);
          expect(columns?.size).toBe(rows?.size);
          for (const key of KEYS) expect(columns?.state(key)).toEqual(rows?.state(key));
        },
      ),
      { numRuns: 50 },
    );
  });
});
