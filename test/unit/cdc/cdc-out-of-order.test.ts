/**
 * A CDC batch older than changes the table already has (a redriven on-failure batch, a backfill under
 * the live tail) is applied, not dropped as a replay. On a route without `_kafka` lineage (as here)
 * floe cannot tell which change is newer, so the report says its changes landed after newer ones: a
 * key both touched shows the older change (with lineage: cdc-late-versions.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { buildStream, CDC_TOPIC, esmEvent, ITEMS_SCHEMA, type Step } from '../../support/cdc-stream.js';
import { tempWarehouse } from '../../support/tables.js';

const step = (id: number, region: string): Step => ({
  id,
  action: 5,
  region,
  amount: 1,
  note: null,
  noise: false,
});

describe('CDC batches out of order', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  const route: TableRoute = {
    table: { namespace: ['db'], name: 'items' },
    topics: [CDC_TOPIC],
    schema: ITEMS_SCHEMA,
    mode: 'debezium',
    identifierColumns: ['id'],
    kafkaLineage: false,
    properties: {},
  };
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('applies an older batch after a newer one and warns about it', async () => {
    // Prepare: ids 3 and 6 both live on Kafka partition 0 (offsets 0, 1, 2)
    const stream = buildStream([step(3, 'EU'), step(6, 'US'), step(3, 'APAC')], 'debezium');
    const warnings: string[] = [];
    const options = {
      catalog: wh.catalog,
      routes: [route],
      onWarning: (_t: string, m: string) => warnings.push(m),
    };

    // Act: offset 2 commits first, offsets [0, 1] afterwards
    const newer = await ingestEvent(options, esmEvent(stream.records, { from: 2, to: 3 }));
    const older = await ingestEvent(options, esmEvent(stream.records, { from: 0, to: 2 }));

    // Assess: the older batch is not a replay (id 6 is not lost), and it says it came late
    expect(newer.tables[0].warnings).toEqual([]);
    expect(older.tables[0]).toMatchObject({ status: 'committed', skippedAsReplayed: 0 });
    expect(older.tables[0].warnings).toEqual([
      expect.stringMatching(
        new RegExp(`^changes of ${CDC_TOPIC}/0 older than offset 2, which the table already has`),
      ),
    ]);
    expect(warnings).toEqual(older.tables[0].warnings);
    const table = await wh.catalog.loadTable(route.table);
    const ids = (await readScanRows(table, await planScan(table))).map((r) => r.id).sort();
    expect(ids).toEqual([3n, 6n]);
  });
});
