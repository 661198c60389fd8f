/**
 * Schema evolution on CDC tables, as on appends: a column added at the source arrives as a new field
 * of the row images and becomes an optional column (fresh id) in the same commit as the rows; values
 * that need a wider type promote the column; the table's policy (`dlq`, `block`) is honoured; a
 * record that is not a change leaves no column behind. Before, new fields were dropped silently.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchemaEvolutionError } from '../../../functions/core/errors.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSchema, currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { Row, TableIdentifier } from '../../../functions/core/spec/types.js';
import { jsonEvent } from '../../support/json-event.js';
import { tempWarehouse } from '../../support/tables.js';

const TOPIC = 'shop.public.items';

/** Debezium values on partition 0 of TOPIC (their key comes from the row image, not the Kafka key). */
const event = (values: unknown[], firstOffset: number) => jsonEvent(TOPIC, values, { firstOffset });

/** A Debezium change (no Connect schemas) whose `after` is `row`. */
const upsertOf = (op: 'c' | 'u', row: Record<string, unknown>) => ({
  before: null,
  after: row,
  source: { table: 'items' },
  op,
  ts_ms: 1,
});

describe('CDC schema evolution', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  const routes = (extra: Record<string, unknown> = {}) =>
    parseRoutes([
      {
        table: 'shop.items',
        topics: [TOPIC],
        mode: 'debezium',
        identifierColumns: ['id'],
        kafkaLineage: false,
        schema: {
          type: 'struct',
          'schema-id': 0,
          fields: [
            { id: 1, name: 'id', required: true, type: 'long' },
            { id: 2, name: 'qty', required: true, type: 'int' },
          ],
        },
        ...extra,
      },
    ]);

  async function rows(table: TableIdentifier): Promise<Row[]> {
    const loaded = await wh.catalog.loadTable(table);
    return (await readScanRows(loaded, await planScan(loaded))).sort((a, b) => Number(a.id) - Number(b.id));
  }

  async function deadLetters(table: TableIdentifier): Promise<[bigint, string, string][]> {
    const letters = await rows({ namespace: table.namespace, name: `${table.name}__dlq` });
    return letters.map((r) => [r.offset as bigint, r.stage as string, r.error as string]);
  }

  it('adds a new source column in the same commit as the rows, and promotes a column that needs it', async () => {
    // Arrange
    const [route] = routes();
    await ingestEvent({ catalog: wh.catalog, routes: [route] }, event([upsertOf('c', { id: 1, qty: 1 })], 0));

    // Act: the source table gained `note`; one quantity no longer fits an int.
    const report = await ingestEvent(
      { catalog: wh.catalog, routes: [route] },
      event(
        [
          upsertOf('c', { id: 2, qty: 2, note: 'gift' }),
          upsertOf('u', { id: 1, qty: 3_000_000_000, note: null }),
        ],
        1,
      ),
    );

    // Assess
    expect(report.tables[0].deadLettered).toBe(0);
    const table = await wh.catalog.loadTable(route.table);
    const schema = currentSchema(table.metadata);
    expect(schema.fields).toEqual([
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'qty', required: true, type: 'long' },
      { id: 3, name: 'note', required: false, type: 'string' },
    ]);
    expect(schema['identifier-field-ids']).toEqual([1]);
    // One snapshot carries both the rows and the schema they were written with.
    expect(table.metadata.snapshots).toHaveLength(2);
    expect(currentSnapshot(table.metadata)?.['schema-id']).toBe(schema['schema-id']);
    expect(await rows(route.table)).toEqual([
      { id: 1n, qty: 3_000_000_000n, note: null },
      { id: 2n, qty: 2n, note: 'gift' },
    ]);
  });

  it('makes a column the source dropped optional instead of dead-lettering every change', async () => {
    // Arrange
    const [route] = routes();

    // Act: `qty` is gone from the source table.
    const report = await ingestEvent(
      { catalog: wh.catalog, routes: [route] },
      event([upsertOf('c', { id: 7 })], 0),
    );

    // Assess
    expect(report.tables[0].deadLettered).toBe(0);
    const table = await wh.catalog.loadTable(route.table);
    expect(currentSchema(table.metadata).fields[1]).toEqual({
      id: 2,
      name: 'qty',
      required: false,
      type: 'int',
    });
    expect(await rows(route.table)).toEqual([{ id: 7n, qty: null }]);
  });

  it("keeps the schema under policy dlq: changes that need a new column are dead letters (stage 'schema')", async () => {
    // Arrange
    const [route] = routes({ schemaEvolution: 'dlq' });

    // Act
    const report = await ingestEvent(
      { catalog: wh.catalog, routes: [route] },
      event([upsertOf('c', { id: 1, qty: 1 }), upsertOf('c', { id: 2, qty: 2, note: 'x' })], 0),
    );

    // Assess
    expect(report.tables[0].deadLettered).toBe(1);
    const table = await wh.catalog.loadTable(route.table);
    expect(currentSchema(table.metadata).fields.map((f) => f.name)).toEqual(['id', 'qty']);
    expect(await rows(route.table)).toEqual([{ id: 1n, qty: 1 }]);
    expect(await deadLetters(route.table)).toEqual([[1n, 'schema', expect.stringContaining('note')]]);
  });

  it('fails the batch under policy block when a change needs an incompatible type', async () => {
    // Arrange
    const [route] = routes({ schemaEvolution: 'block' });
    const batch = event([upsertOf('c', { id: 1, qty: 'many' })], 0);

    // Act / Assess
    await expect(ingestEvent({ catalog: wh.catalog, routes: [route] }, batch)).rejects.toThrow(
      SchemaEvolutionError,
    );
  });

  it('leaves no column behind for a record that shaped it but is not a change', async () => {
    // Arrange: the record with the new field has no key, so extraction dead-letters it.
    const [route] = routes();

    // Act
    const report = await ingestEvent(
      { catalog: wh.catalog, routes: [route] },
      event([upsertOf('c', { id: 1, qty: 1 }), upsertOf('c', { id: null, qty: 2, stray: true })], 0),
    );

    // Assess
    expect(report.tables[0].deadLettered).toBe(1);
    const table = await wh.catalog.loadTable(route.table);
    expect(currentSchema(table.metadata).fields.map((f) => f.name)).toEqual(['id', 'qty']);
    expect(await deadLetters(route.table)).toEqual([
      [1n, 'map', 'after.id: is required but missing or null'],
    ]);
  });

  it('lets upsert values leave key columns to the Kafka key', async () => {
    // Arrange
    const [route] = parseRoutes([
      {
        table: 'shop.counts',
        topics: [TOPIC],
        mode: 'upsert',
        identifierColumns: ['id'],
        kafkaLineage: false,
        schema: {
          type: 'struct',
          'schema-id': 0,
          fields: [
            { id: 1, name: 'id', required: true, type: 'long' },
            { id: 2, name: 'n', required: false, type: 'int' },
          ],
        },
      },
    ]);
    const batch = jsonEvent(TOPIC, [{ n: 5, label: 'five' }], { key: () => '{"id":42}' });

    // Act
    const report = await ingestEvent({ catalog: wh.catalog, routes: [route] }, batch);

    // Assess: the value's new field became a column; the missing key did not make `id` optional.
    expect(report.tables[0].deadLettered).toBe(0);
    const table = await wh.catalog.loadTable(route.table);
    expect(currentSchema(table.metadata).fields.map((f) => [f.name, f.required])).toEqual([
      ['id', true],
      ['n', false],
      ['label', false],
    ]);
    expect(await rows(route.table)).toEqual([{ id: 42n, n: 5, label: 'five' }]);
  });
});
