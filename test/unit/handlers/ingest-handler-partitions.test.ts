/**
 * Hostile partitions and offsets through the Lambda handler (the event as the runtime hands it over:
 * parsed by JSON.parse): a record placed anywhere but where its key says is a dead letter that claims
 * nothing, so the genuine record at that place still lands.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import type { Row, TableIdentifier } from '../../../functions/core/spec/types.js';
import { encodeOffsets, readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';
import { ingestHandler } from '../../../functions/handlers/ingest.js';
import { tempWarehouse } from '../../support/tables.js';

const context = { getRemainingTimeInMillis: () => 60_000 };
const MAIN: TableIdentifier = { namespace: ['hostile'], name: 'orders' };
const DLQ: TableIdentifier = { namespace: ['hostile'], name: 'orders__dlq' };

/** An ESM event from its JSON text, as the Lambda runtime parses it before the handler. */
function event(records: string): unknown {
  return JSON.parse(`{"eventSource":"aws:kafka","records":${records}}`);
}

const value = (id: number) => Buffer.from(JSON.stringify({ order_id: id })).toString('base64');

describe('ingest handler: partitions and offsets checked before anything is claimed', () => {
  let dir: string;
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, catalog, cleanup } = await tempWarehouse());
    process.env.FLOE_CATALOG = 'embedded';
    process.env.FLOE_WAREHOUSE = dir;
    process.env.FLOE_TABLES = JSON.stringify([
      {
        table: 'hostile.orders',
        topics: ['t', 't-'],
        schema: {
          type: 'struct',
          'schema-id': 0,
          fields: [{ id: 1, name: 'order_id', required: true, type: 'long' }],
        },
      },
    ]);
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  });
  afterAll(() => cleanup());

  const rowsOf = async (id: TableIdentifier): Promise<Row[]> => {
    const table = await catalog.loadTable(id);
    return readScanRows(table, await planScan(table));
  };
  const committed = async (id: TableIdentifier) =>
    encodeOffsets(readCommittedOffsets((await catalog.loadTable(id)).metadata));

  it('dead-letters a record of partition -1 under "t--1" without claiming t/1, so the genuine t/1@0 lands', async () => {
    // Prepare: the hostile record (key "t--1", partition -1), then the genuine record at t/1 offset 0
    const hostile = event(`{"t--1":[{"topic":"t","partition":-1,"offset":0,"value":"${value(1)}"}]}`);
    const genuine = event(`{"t-1":[{"topic":"t","partition":1,"offset":0,"value":"${value(2)}"}]}`);

    // Act
    const first = await ingestHandler(hostile, context);
    const second = await ingestHandler(genuine, context);

    // Assess: the hostile record is in the DLQ with its values as given, and claimed nothing
    expect(first.tables[0]).toMatchObject({ deadLettered: 1, rowsWritten: 0 });
    const [letter] = await rowsOf(DLQ);
    expect(letter).toMatchObject({ topic: 't', partition: -1, offset: -1n, stage: 'decode' });
    expect(letter.error).toMatch(/record partition -1 is not a Kafka partition number/);
    expect(JSON.parse(letter.original as string)).toMatchObject({ partition: -1, offset: 0 });
    expect(await committed(DLQ)).not.toMatch(/"1"/);
    // …so the genuine record at t/1 offset 0 is not taken for a replay
    expect(second.tables[0]).toMatchObject({ status: 'committed', rowsWritten: 1, skippedAsReplayed: 0 });
    const rows = await rowsOf(MAIN);
    expect(rows.map((r) => [r.order_id, (r._kafka as { partition: number }).partition])).toEqual([[2n, 1]]);
    // A redelivery of the hostile batch is recognised (by what its unplaced record holds): one letter
    const again = await ingestHandler(
      event(`{"t--1":[{"topic":"t","partition":-1,"offset":0,"value":"${value(1)}"}]}`),
      context,
    );
    expect(again.tables[0]?.status).toBe('already-committed');
    expect(await rowsOf(DLQ)).toHaveLength(1);
  });

  it('dead-letters a record whose partition is not the one its key names, and claims neither', async () => {
    // Prepare: under "t-2", a record that says partition 3; then the genuine records at t/2@0 and t/3@0
    const hostile = event(`{"t-2":[{"topic":"t","partition":3,"offset":0,"value":"${value(3)}"}]}`);
    const genuine = event(
      `{"t-2":[{"topic":"t","partition":2,"offset":0,"value":"${value(4)}"}],` +
        `"t-3":[{"topic":"t","partition":3,"offset":0,"value":"${value(5)}"}]}`,
    );

    // Act
    const first = await ingestHandler(hostile, context);
    const second = await ingestHandler(genuine, context);

    // Assess
    expect(first.tables[0]).toMatchObject({ deadLettered: 1, rowsWritten: 0 });
    const letter = (await rowsOf(DLQ)).find((r) => String(r.original).includes(value(3)));
    expect(letter?.error).toBe(
      'record "t" partition 3 is under event.records["t-2"], which names topic "t" partition 2',
    );
    expect(second.tables[0]).toMatchObject({ rowsWritten: 2, skippedAsReplayed: 0 });
    const ids = (await rowsOf(MAIN)).map((r) => r.order_id);
    expect(ids).toEqual(expect.arrayContaining([4n, 5n]));
  });

  it('dead-letters offsets the runtime rounded (past 2^53), negative or fractional ones, and string partitions, as given', async () => {
    // Prepare: offsets the runtime's JSON.parse could not hold exactly, and other bad placements
    const hostile = event(
      `{"t-4":[` +
        `{"topic":"t","partition":4,"offset":9223372036854775807,"value":"${value(6)}"},` +
        `{"topic":"t","partition":4,"offset":9007199254740993,"value":"${value(7)}"},` +
        `{"topic":"t","partition":4,"offset":-1,"value":"${value(8)}"},` +
        `{"topic":"t","partition":4,"offset":1.5,"value":"${value(9)}"},` +
        `{"topic":"t","partition":"4","offset":2,"value":"${value(10)}"},` +
        `{"topic":"t","partition":2147483648,"offset":3,"value":"${value(11)}"}]}`,
    );

    // Act
    const report = await ingestHandler(hostile, context);

    // Assess: every one is a dead letter with its reason; no offset of t/4 is claimed
    expect(report.tables[0]).toMatchObject({ deadLettered: 6, rowsWritten: 0 });
    const errors = (await rowsOf(DLQ))
      .filter((r) => /"offset":(9223|9007|-1|1\.5|2,|3,)/.test(String(r.original)))
      .map((r) => r.error)
      .sort();
    expect(errors).toEqual(
      [
        'record offset 9223372036854776000 cannot be read exactly: it is past 2^53, and the event was parsed into doubles before floe saw it (the Lambda runtime parses it), which rounds such a number',
        'record offset 9007199254740992 cannot be read exactly: it is past 2^53, and the event was parsed into doubles before floe saw it (the Lambda runtime parses it), which rounds such a number',
        'record offset -1 is not a Kafka offset (an integer from 0 to 9223372036854775807)',
        'record offset 1.5 is not a Kafka offset (an integer from 0 to 9223372036854775807)',
        'record partition "4" is not a Kafka partition number (an integer from 0 to 2147483647)',
        'record partition 2147483648 is not a Kafka partition number (an integer from 0 to 2147483647)',
      ].sort(),
    );
    expect(JSON.parse(await committed(DLQ)).t?.['4']).toBeUndefined();
    expect(JSON.parse(await committed(MAIN)).t?.['4']).toBeUndefined();
  });
});
