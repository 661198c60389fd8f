/**
 * CDC commits under the failures the commit loop knows: an outcome unknown after landing, another
 * writer committing some of the batch's offsets meanwhile, another writer evolving the partition
 * specs between writing the delete files and committing them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { parsePartitionExpression } from '../../../functions/core/spec/partition-spec.js';
import {
  buildStream,
  CDC_TOPIC,
  esmEvent,
  ITEMS_SCHEMA,
  itemKey,
  modelKeys,
  type Step,
} from '../../support/cdc-stream.js';
import { jsonEvent } from '../../support/json-event.js';
import { liveEntries } from '../../support/readers.js';
import { FaultyCatalog, tempWarehouse } from '../../support/tables.js';

const step = (id: number, action: number, region: string, amount: number): Step => ({
  id,
  action,
  region,
  amount,
  note: null,
  noise: false,
});
// ids 3 and 6 stay on Kafka partition 0; actions: < 7 insert/update, >= 7 delete (when present)
const STEPS = [
  step(3, 5, 'EU', 1),
  step(6, 5, 'US', 2),
  step(3, 5, 'US', 3),
  step(6, 9, 'US', 0),
  step(3, 5, 'APAC', 4),
  step(6, 5, 'EU', 5),
];

describe('CDC commits under failure', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  let faulty: FaultyCatalog;
  const route: TableRoute = {
    table: { namespace: ['db'], name: 'items' },
    topics: [CDC_TOPIC],
    schema: ITEMS_SCHEMA,
    partitionBy: 'region',
    mode: 'debezium',
    identifierColumns: ['id'],
    kafkaLineage: false,
    properties: {},
  };
  const stream = buildStream(STEPS, 'debezium');
  beforeEach(async () => {
    wh = await tempWarehouse();
    faulty = new FaultyCatalog(wh.catalog);
  });
  afterEach(() => wh.cleanup());

  async function liveKeys(): Promise<string[]> {
    const table = await wh.catalog.loadTable(route.table);
    return (await readScanRows(table, await planScan(table))).map(itemKey).sort();
  }

  it('an outcome unknown after landing is recognised: one snapshot, the right rows', async () => {
    // Prepare
    faulty.faults.push('unknown-after-landing');

    // Act
    const report = await ingestEvent(
      { catalog: faulty, routes: [route] },
      esmEvent(stream.records, { from: 0, to: 6 }),
    );

    // Assess
    expect(report.tables[0]).toMatchObject({ status: 'committed', unknownOutcomes: 1 });
    const table = await wh.catalog.loadTable(route.table);
    expect(table.metadata.snapshots).toHaveLength(1);
    expect(await liveKeys()).toEqual(modelKeys(stream.states[5]));
  });

  it('offsets committed by another writer meanwhile are not applied twice', async () => {
    // Prepare: while our batch [0, 6) is written, another delivery commits [0, 3)
    await ingestEvent({ catalog: wh.catalog, routes: [route] }, esmEvent(stream.records, { from: 0, to: 1 }));
    faulty.beforeCommit = async () => {
      await ingestEvent(
        { catalog: wh.catalog, routes: [route] },
        esmEvent(stream.records, { from: 1, to: 3 }),
      );
    };

    // Act
    const report = await ingestEvent(
      { catalog: faulty, routes: [route] },
      esmEvent(stream.records, { from: 0, to: 6 }),
    );

    // Assess
    expect(report.tables[0]).toMatchObject({ status: 'committed', skippedAsReplayed: 3 });
    expect(await liveKeys()).toEqual(modelKeys(stream.states[5]));
    const table = await wh.catalog.loadTable(route.table);
    expect(table.metadata.snapshots).toHaveLength(3);
  });

  it('delete files planned for a spec another writer took are rewritten for the new one', async () => {
    // Prepare: the first batch plans its unpartitioned delete spec as id 1; before it commits, another
    // writer adds a spec of its own with that id. (Equality deletes: position deletes take their data
    // files' specs and need no spec of their own.)
    const eqRoute: TableRoute = { ...route, properties: { 'floe.delete-mode': 'equality' } };
    await ingestEvent(
      { catalog: wh.catalog, routes: [eqRoute] },
      esmEvent(stream.records, { from: 0, to: 1 }),
    );
    faulty.beforeCommit = async () => {
      const spec = { ...parsePartitionExpression('bucket(2, id)', ITEMS_SCHEMA), 'spec-id': 1 };
      spec.fields = spec.fields.map((f) => ({ ...f, 'field-id': 1001 }));
      await wh.catalog.commitTable(eqRoute.table, [], [{ action: 'add-spec', spec }]);
    };

    // Act
    const report = await ingestEvent(
      { catalog: faulty, routes: [eqRoute] },
      esmEvent(stream.records, { from: 1, to: 6 }),
    );

    // Assess
    expect(report.tables[0].status).toBe('committed');
    const table = await wh.catalog.loadTable(eqRoute.table);
    expect(table.metadata['partition-specs'].map((s) => [s['spec-id'], s.fields.length])).toEqual([
      [0, 1],
      [1, 1],
      [2, 0],
    ]);
    const deletes = (await liveEntries(table)).filter((e) => e.data_file.content === 2);
    expect(deletes.length).toBeGreaterThan(0);
    expect(deletes.every((e) => e.data_file.spec_id === 2)).toBe(true);
    expect(await liveKeys()).toEqual(modelKeys(stream.states[5]));
  });

  it('a batch written for an empty table (no equality deletes) is written again when rows land first', async () => {
    // Prepare: our batch updates id 7 in a table with no data files, so it plans no deletes; before
    // it commits, another writer commits a row for id 7 (from another partition).
    const change = (id: number, note: string, op: string) => ({
      before: null,
      after: { id, region: 'EU', amount: 1, note },
      source: {},
      op,
    });
    faulty.beforeCommit = async () => {
      await ingestEvent(
        { catalog: wh.catalog, routes: [route] },
        jsonEvent(CDC_TOPIC, [change(7, 'other writer', 'c')], { partition: 1 }),
      );
    };

    // Act
    const report = await ingestEvent(
      { catalog: faulty, routes: [route] },
      jsonEvent(CDC_TOPIC, [change(7, 'ours', 'u')], { partition: 0 }),
    );

    // Assess: written again with the other writer's row deleted, so id 7 has one row, ours.
    expect(report.tables[0]).toMatchObject({ status: 'committed', positionDeletes: 1 });
    const table = await wh.catalog.loadTable(route.table);
    const rows = await readScanRows(table, await planScan(table));
    expect(rows.map((r) => [r.id, r.note])).toEqual([[7n, 'ours']]);
  });
});
