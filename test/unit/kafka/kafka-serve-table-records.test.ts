/**
 * kafka-serve's table reads: records of one partition in offset order from files whose offsets
 * interleave, and an early stop (enough bytes) that never leaves a hole an unread file would fill.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { TableRecords } from '../../../functions/core/kafka/serve/table-records.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { jsonEvent } from '../../support/json-event.js';
import { tempWarehouse } from '../../support/tables.js';

const ROUTE: TableRoute = {
  table: { namespace: ['app'], name: 'events' },
  topics: ['ev'],
  kafkaLineage: true,
  properties: {},
  schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] },
};

interface EventRecord {
  offset: number;
}

describe('kafka-serve table records', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(async () => {
    await wh.cleanup();
  });

  it('reads in offset order across interleaved files, and stops early only below the next file', async () => {
    // Prepare: one file holds offsets 3-7, a later one 0-2 and 8-9 (as a compaction can leave them)
    const options = { catalog: wh.catalog, routes: [ROUTE] };
    const first = jsonEvent(
      'ev',
      [0, 1, 2, 8, 9].map((id) => ({ id })),
    ) as {
      records: Record<string, EventRecord[]>;
    };
    [0, 1, 2, 8, 9].forEach((offset, i) => {
      first.records['ev-0'][i].offset = offset;
    });
    await ingestEvent(
      options,
      jsonEvent(
        'ev',
        [3, 4, 5, 6, 7].map((id) => ({ id })),
        { firstOffset: 3 },
      ),
    );
    await ingestEvent(options, first);
    const table = await wh.catalog.loadTable(ROUTE.table);
    const records = new TableRecords(() => (row) => Buffer.from(String(row.id)));
    // Act
    const all = await records.read(table, 'ev', 0, 0n, 9n);
    const middle = await records.read(table, 'ev', 0, 2n, 8n);
    const enough = await records.read(table, 'ev', 0, 0n, 9n, 1);
    const otherPartition = await records.read(table, 'ev', 1, 0n, 9n);
    // Assess
    expect(all.map((r) => [r.offset, r.value?.toString()])).toEqual(
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((o) => [BigInt(o), String(o)]),
    );
    expect(middle.map((r) => r.offset)).toEqual([2n, 3n, 4n, 5n, 6n, 7n, 8n]);
    expect(enough.map((r) => r.offset)).toEqual([0n, 1n, 2n]);
    expect(otherPartition).toEqual([]);
  });
});
