/**
 * The Lambda path when a topic's history changes under a table (the topic recreated, the cluster
 * replaced): the ESM delivers new records at offsets the table committed. They are neither skipped as
 * replays nor appended: the batch fails with a non-retryable OffsetIdentityError naming the topic and
 * partitions, the table is unchanged, and after `floe rebase-offsets` they land exactly once — while a
 * true redelivery is still skipped, before and after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { OffsetIdentityError } from '../../../functions/core/ingest/offset-identity-error.js';
import { rebaseOffsets } from '../../../functions/core/table/actions/rebase-offsets.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { EPOCHS_KEY, OFFSETS_KEY } from '../../../functions/core/table/source-offsets.js';
import { ingestHandler } from '../../../functions/handlers/ingest.js';
import { tempWarehouse } from '../../support/tables.js';

const TOPIC = 'ev3';
const TABLE = { namespace: ['app'], name: 'events' };
const context = { getRemainingTimeInMillis: () => 60_000 };

/** An MSK ESM event of ids `first..first+count-1` over 2 partitions (offset = id / 2 per partition). */
function esmEvent(cluster: string, firstId: number, count: number, t0: number) {
  const records: Record<string, unknown[]> = {};
  for (let id = firstId; id < firstId + count; id++) {
    const partition = id % 2;
    const key = `${TOPIC}-${partition}`;
    records[key] ??= [];
    records[key].push({
      topic: TOPIC,
      partition,
      offset: Math.floor(id / 2),
      timestamp: t0 + id,
      timestampType: 'CREATE_TIME',
      key: Buffer.from(`key-${id}`).toString('base64'),
      value: Buffer.from(JSON.stringify({ id, cluster })).toString('base64'),
      headers: [],
    });
  }
  return { eventSource: 'aws:kafka', records };
}

describe('the ingest handler when the topic was recreated', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  const catalog = () => new EmbeddedCatalog({ warehouse: dir });
  const rows = async () => {
    const table = await catalog().loadTable(TABLE);
    const scan = await planScan(table, {});
    return (await readScanRows(table, scan)).map((r) => `${r.cluster}:${r.id}`).sort();
  };

  beforeAll(async () => {
    ({ dir, cleanup } = await tempWarehouse());
    process.env.FLOE_CATALOG = 'embedded';
    process.env.FLOE_WAREHOUSE = dir;
    process.env.FLOE_TABLES = JSON.stringify([
      {
        table: 'app.events',
        topics: [TOPIC],
        schema: {
          type: 'struct',
          'schema-id': 0,
          fields: [
            { id: 1, name: 'id', required: true, type: 'long' },
            { id: 2, name: 'cluster', required: false, type: 'string' },
          ],
        },
      },
    ]);
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  });
  afterAll(() => cleanup());

  it('fails loudly on new records at committed offsets, then lands them once after a rebase', async () => {
    // Prepare: the old cluster's 600 records committed (offsets 0-299 of two partitions), redelivered once
    const old = await ingestHandler(esmEvent('old', 0, 600, 1_700_000_000_000), context);
    const redelivered = await ingestHandler(esmEvent('old', 0, 600, 1_700_000_000_000), context);
    const before = currentSnapshot((await catalog().loadTable(TABLE)).metadata)!;

    // Act: the new cluster's 300 records at offsets 0-149, produced later
    const fresh = esmEvent('new', 0, 300, 1_800_000_000_000);
    const failure = await ingestHandler(structuredClone(fresh), context).catch((e: unknown) => e);

    // Assess: refused, not retryable, topic and partitions named; the table unchanged
    expect(old.tables[0]).toMatchObject({ status: 'committed', rowsWritten: 600 });
    expect(redelivered.tables[0]).toMatchObject({ status: 'nothing-to-commit', skippedAsReplayed: 600 });
    expect(failure).toBeInstanceOf(OffsetIdentityError);
    const error = failure as OffsetIdentityError;
    expect(error.retryable).toBe(false);
    expect(error.partitions).toEqual({ [TOPIC]: [0, 1] });
    expect(error.message).toMatch(
      /ev3\/0 offsets 0-149 \(150 records; offset 0: expected timestamp 1700000000000/,
    );
    expect(error.message).toMatch(/ev3\/1 offsets 0-149/);
    const after = currentSnapshot((await catalog().loadTable(TABLE)).metadata)!;
    expect(after['snapshot-id']).toBe(before['snapshot-id']);

    // Act: the documented way on, then the same delivery again, then its redelivery
    const rebase = await rebaseOffsets(catalog(), TABLE, TOPIC, undefined);
    const landed = await ingestHandler(structuredClone(fresh), context);
    const again = await ingestHandler(structuredClone(fresh), context);

    // Assess: the 300 land exactly once beside the old 600; the redelivery is skipped
    expect(rebase).toMatchObject({ status: 'rebased' });
    expect(rebase.closed.map((c) => [c.partition, c.epoch])).toEqual([
      [0, 2],
      [1, 2],
    ]);
    expect(landed.tables[0]).toMatchObject({ status: 'committed', rowsWritten: 300, skippedAsReplayed: 0 });
    expect(again.tables[0]).toMatchObject({ status: 'nothing-to-commit', skippedAsReplayed: 300 });
    const all = await rows();
    expect(all).toHaveLength(900);
    expect(new Set(all).size).toBe(900);
    expect(all.filter((r) => r.startsWith('new:'))).toHaveLength(300);
    const summary = currentSnapshot((await catalog().loadTable(TABLE)).metadata)!.summary;
    expect(summary[OFFSETS_KEY]).toBe('{"ev3":{"0":"0-149","1":"0-149"}}');
    expect(JSON.parse(summary[EPOCHS_KEY]).ev3['0'][0]).toMatchObject({ epoch: 1, ranges: '0-299' });
    // The same offsets in epoch 2 are another batch: its id is not the old batch's over offsets 0-149
    expect(summary['floe.batch-id']).toBe(
      `${landed.batchId}${summary['floe.batch-id'].slice(landed.batchId.length)}`,
    );
    expect(summary['floe.batch-id']).toMatch(/-e[0-9a-f]{12}$/);
  });

  it('refuses a batch whose first record differs at a marked offset even with the old timestamps', async () => {
    // Prepare: a topic of its own, committed
    const event = (value: string) => ({
      eventSource: 'aws:kafka',
      records: {
        [`${TOPIC}-5`]: [0, 1, 2].map((o) => ({
          topic: TOPIC,
          partition: 5,
          offset: o,
          timestamp: 1_700_000_000_000,
          timestampType: 'CREATE_TIME',
          value: Buffer.from(JSON.stringify({ id: 10_000 + o, cluster: o === 0 ? value : 'x' })).toString(
            'base64',
          ),
          headers: [],
        })),
      },
    });
    await ingestHandler(event('a'), context);
    // Act
    const failure = await ingestHandler(event('b'), context).catch((e: unknown) => e);
    const redelivery = await ingestHandler(event('a'), context);
    // Assess
    expect(failure).toBeInstanceOf(OffsetIdentityError);
    expect((failure as Error).message).toMatch(
      /ev3\/5 offsets 0-0 \(1 records; offset 0: expected timestamp 1700000000000, hash/,
    );
    expect(redelivery.tables[0]).toMatchObject({ status: 'nothing-to-commit', skippedAsReplayed: 3 });
  });
});
