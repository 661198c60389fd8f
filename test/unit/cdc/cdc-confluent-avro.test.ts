/**
 * CDC tables decode through the route's format like append tables: Debezium envelopes written as
 * Confluent Avro (schema from an in-process registry) become the source table's current state, and a
 * registry outage fails the batch with nothing dead-lettered.
 */
import avro from 'avsc';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RawRecord } from '../../../functions/core/records/esm-event.js';
import { ingestTable } from '../../../functions/core/ingest/ingest-table.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { Row, Schema } from '../../../functions/core/spec/types.js';
import {
  type SchemaRegistryServer,
  startSchemaRegistryServer,
} from '../../support/schema-registry-server.js';
import { tempWarehouse } from '../../support/tables.js';

const TOPIC = 'db.public.items';
const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
  ],
};
/** Debezium's Avro envelope (AvroConverter), trimmed to the fields floe reads. */
const ENVELOPE = {
  type: 'record',
  name: 'Envelope',
  namespace: TOPIC,
  fields: [
    {
      name: 'before',
      type: [
        'null',
        {
          type: 'record',
          name: 'Value',
          fields: [
            { name: 'id', type: 'long' },
            { name: 'name', type: ['null', 'string'], default: null },
          ],
        },
      ],
      default: null,
    },
    { name: 'after', type: ['null', 'Value'], default: null },
    { name: 'op', type: 'string' },
    { name: 'ts_ms', type: ['null', 'long'], default: null },
  ],
};
const envelopeType = avro.Type.forSchema(ENVELOPE as avro.Schema);

interface Image {
  id: number;
  name: string | null;
}

/** `0x00 | schema id (int32 BE) | Avro body`, as Confluent's serializer frames it. */
function confluentAvro(schemaId: number, envelope: { op: string; before?: Image; after?: Image }): Buffer {
  const header = Buffer.alloc(5);
  header.writeInt32BE(schemaId, 1);
  const body = envelopeType.toBuffer({
    before: envelope.before ?? null,
    after: envelope.after ?? null,
    op: envelope.op,
    ts_ms: 1_795_000_000_000,
  });
  return Buffer.concat([header, body]);
}

function record(offset: number, id: number, value: Uint8Array | null): RawRecord {
  return {
    topic: TOPIC,
    partition: 0,
    offset: BigInt(offset),
    timestamp: 1_795_000_000_000 + offset,
    timestampType: 'CREATE_TIME',
    key: new Uint8Array(Buffer.from(JSON.stringify({ id }))),
    value,
    headers: [],
  };
}

describe('CDC tables with Confluent Avro values', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  let registry: SchemaRegistryServer;
  const route = (): TableRoute => ({
    table: { namespace: ['db'], name: 'items' },
    topics: [TOPIC],
    schema: SCHEMA,
    mode: 'debezium',
    identifierColumns: ['id'],
    kafkaLineage: false,
    properties: {},
    format: { value: 'confluent', registry: { url: registry.url, timeoutMs: 2_000 } },
  });
  const dlq = { namespace: ['db'], name: 'items__dlq' };

  beforeEach(async () => {
    wh = await tempWarehouse();
    registry = await startSchemaRegistryServer();
  });
  afterEach(async () => {
    await registry.close();
    await wh.cleanup();
  });

  it('turns Avro change envelopes into the current state, dead-lettering an unknown schema id', async () => {
    // Prepare
    const id = registry.register({ schema: JSON.stringify(ENVELOPE), subject: `${TOPIC}-value` });
    const records = [
      record(0, 1, confluentAvro(id, { op: 'c', after: { id: 1, name: 'a' } })),
      record(1, 2, confluentAvro(id, { op: 'r', after: { id: 2, name: 'b' } })),
      record(
        2,
        1,
        confluentAvro(id, { op: 'u', before: { id: 1, name: 'a' }, after: { id: 1, name: 'a2' } }),
      ),
      record(3, 2, confluentAvro(id, { op: 'd', before: { id: 2, name: 'b' } })),
      record(4, 2, null),
      record(5, 3, confluentAvro(id + 100, { op: 'c', after: { id: 3, name: 'lost' } })),
      record(6, 4, confluentAvro(id, { op: 'c', after: { id: 4, name: null } })),
    ];

    // Act
    const report = await ingestTable({ catalog: wh.catalog }, route(), 'batch-avro', records);

    // Assess
    const table = await wh.catalog.loadTable(route().table);
    const rows = await readScanRows(table, await planScan(table));
    const state = rows.map((r: Row) => [r.id, r.name]).sort((a, b) => Number(a[0]) - Number(b[0]));
    expect(state).toEqual([
      [1n, 'a2'],
      [4n, null],
    ]);
    expect(report).toMatchObject({ status: 'committed', deadLettered: 1, ignored: { tombstone: 1 } });
    const letters = await wh.catalog.loadTable(dlq);
    const [letter] = await readScanRows(letters, await planScan(letters));
    expect(letter).toMatchObject({ stage: 'decode' });
  });

  it('fails the batch on a registry outage, with nothing written or dead-lettered', async () => {
    // Prepare
    const id = registry.register({ schema: JSON.stringify(ENVELOPE), subject: `${TOPIC}-value` });
    const records = [record(0, 1, confluentAvro(id, { op: 'c', after: { id: 1, name: 'a' } }))];
    registry.failNext(10, 503);

    // Act
    const outcome = ingestTable({ catalog: wh.catalog }, route(), 'batch-outage', records);

    // Assess
    await expect(outcome).rejects.toMatchObject({ retryable: true });
    expect(registry.count('/schemas/ids/')).toBeGreaterThan(0);
    expect(await wh.catalog.tableExists(dlq)).toBe(false);
    const table = await wh.catalog.loadTable(route().table);
    expect(currentSnapshot(table.metadata)).toBeUndefined();
  });
});
