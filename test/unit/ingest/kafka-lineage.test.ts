/** The lineage timestamp in µs, exact at every safe millisecond value; bad record timestamps dead-lettered. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { timestampMicros } from '../../../functions/core/records/kafka-lineage.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { tempWarehouse } from '../../support/tables.js';

describe('timestampMicros', () => {
  it.each([
    [0, 0n],
    [-1, -1000n],
    [1_795_000_000_123, 1_795_000_000_123_000n],
    [9_007_199_254_740, 9_007_199_254_740_000n], // the last ms whose µs is a safe integer
    [9_007_199_254_741, 9_007_199_254_741_000n],
    [Number.MAX_SAFE_INTEGER, 9_007_199_254_740_991_000n],
    [-Number.MAX_SAFE_INTEGER, -9_007_199_254_740_991_000n],
  ])('%d ms → %d µs', (ms, micros) => {
    expect(timestampMicros(ms)).toBe(micros);
  });
});

describe('a record whose timestamp is not whole epoch milliseconds', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('goes to the DLQ with the reason; the rest of the batch commits', async () => {
    // Arrange: before, 1.5 threw a RangeError for the whole batch, and 1e300 failed it at write time.
    const routes = parseRoutes([
      {
        table: 'a.t',
        topics: ['t'],
        schema: {
          type: 'struct',
          'schema-id': 0,
          fields: [{ id: 1, name: 'n', required: false, type: 'long' }],
        },
      },
    ]);
    const record = (offset: number, timestamp: unknown) => ({
      topic: 't',
      partition: 0,
      offset,
      timestamp,
      timestampType: 'CREATE_TIME',
      value: Buffer.from(JSON.stringify({ n: offset })).toString('base64'),
      headers: [],
    });
    const event = {
      eventSource: 'aws:kafka',
      records: { 't-0': [record(0, 1_795_000_000_000), record(1, 1.5), record(2, 1e300)] },
    };

    // Act
    const report = await ingestEvent({ catalog: wh.catalog, routes }, event);

    // Assess
    expect([report.tables[0].rowsWritten, report.tables[0].deadLettered]).toEqual([1, 2]);
    const dlq = await wh.catalog.loadTable({ namespace: ['a'], name: 't__dlq' });
    const letters = await readScanRows(dlq, await planScan(dlq));
    expect(letters.map((l) => [l.offset, l.stage, l.error]).sort()).toEqual([
      [1n, 'decode', 'record timestamp 1.5 is not an integer number of epoch milliseconds'],
      [2n, 'decode', 'record timestamp 1e+300 is not an integer number of epoch milliseconds'],
    ]);
  });
});
