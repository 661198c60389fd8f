/**
 * Committed ranges with a gap survive what happens above them: a snapshot by another engine that
 * lacks floe's summary (the ancestry is walked back, and an anchor copies them up), and the batch that
 * fills the gap afterwards.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { anchorCommittedOffsets } from '../../../functions/core/table/actions/anchor-offsets.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { OFFSETS_KEY, readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';
import { EO_TOPIC, eoRoute, esmEvent, type OffsetRange } from '../../support/esm-batches.js';
import { tempWarehouse } from '../../support/tables.js';

const TABLE = { namespace: ['eo'], name: 'carried' };

describe('committed ranges above other snapshots', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  const ingest = (range: OffsetRange) =>
    ingestEvent({ catalog: wh.catalog, routes: [eoRoute(TABLE)] }, esmEvent([range], { oneDay: true }));

  /** A snapshot as another engine commits it: no floe summary properties at all. */
  async function commitForeignSnapshot(): Promise<void> {
    await commitWithRetry(wh.catalog, TABLE, {
      prepare: async (base) => {
        const prepared = await prepareSnapshot(base, {
          operation: 'replace',
          addedDataFiles: [],
          addedDeleteFiles: [],
        });
        const summary = Object.fromEntries(
          Object.entries(prepared.snapshot.summary).filter(([k]) => !k.startsWith('floe.')),
        );
        const snapshot = { ...prepared.snapshot, summary: { ...summary, operation: 'replace' as const } };
        const updates = prepared.updates.map((u) => (u.action === 'add-snapshot' ? { ...u, snapshot } : u));
        return { ...prepared, snapshot, updates };
      },
    });
  }

  it('walks back past a foreign snapshot, anchors the ranges, and merges them when the gap fills', async () => {
    // Prepare: [20, 29] then [0, 9] leave the gap [10, 19]; another engine commits on top
    await ingest({ partition: 0, first: 20, count: 10 });
    await ingest({ partition: 0, first: 0, count: 10 });
    await commitForeignSnapshot();
    const foreign = await wh.catalog.loadTable(TABLE);

    // Act
    const anchor = await anchorCommittedOffsets(wh.catalog, TABLE);
    const anchored = currentSnapshot((await wh.catalog.loadTable(TABLE)).metadata)!.summary[OFFSETS_KEY];
    const filled = await ingest({ partition: 0, first: 5, count: 20 });

    // Assess
    expect(currentSnapshot(foreign.metadata)!.summary[OFFSETS_KEY]).toBeUndefined();
    expect(readCommittedOffsets(foreign.metadata).get(EO_TOPIC)?.get(0)).toEqual([
      [0n, 9n],
      [20n, 29n],
    ]);
    expect(anchor.status).toBe('anchored');
    expect(anchored).toBe(`{"${EO_TOPIC}":{"0":"0-9,20-29"}}`);
    expect(filled.tables[0]).toMatchObject({ rowsWritten: 10, skippedAsReplayed: 10 });
    const after = await wh.catalog.loadTable(TABLE);
    expect(currentSnapshot(after.metadata)!.summary[OFFSETS_KEY]).toBe(`{"${EO_TOPIC}":{"0":"0-29"}}`);
  });
});
