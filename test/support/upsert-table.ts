/** An upsert table (key `id`) in a local warehouse for key index tests (test/unit/key-index/, the kill -9 test), fed by JSON batches. */
import { ingestEvent } from '../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../functions/core/routing/routes.js';
import { planScan } from '../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../functions/core/scan/read-scan.js';
import type { Schema } from '../../functions/core/spec/types.js';
import { jsonEvent } from './json-event.js';
import type { tempWarehouse } from './tables.js';

export const TOPIC = 'shop.items';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'v', required: false, type: 'string' },
  ],
};

/** The route of table `shop.<name>`, with extra table properties. */
export function upsertRoute(name: string, properties: Record<string, string> = {}): TableRoute {
  return {
    table: { namespace: ['shop'], name },
    topics: [TOPIC],
    schema: SCHEMA,
    mode: 'upsert',
    identifierColumns: ['id'],
    kafkaLineage: true,
    properties,
  };
}

/** A change: `[id, v]` upserts, `[id, null]` deletes (a tombstone). */
export type Change = [number, string | null];

/** Feeds changes as one batch at `firstOffset`; `model` follows them as the source table would. */
export async function feed(
  wh: Awaited<ReturnType<typeof tempWarehouse>>,
  route: TableRoute,
  changes: readonly Change[],
  firstOffset: number,
  model?: Map<number, string>,
): Promise<void> {
  const values = changes.map(([id, v]) => (v === null ? null : { id, v }));
  const event = jsonEvent(TOPIC, values, {
    firstOffset,
    key: (_v, i) => JSON.stringify({ id: changes[i][0] }),
  });
  const report = await ingestEvent({ catalog: wh.catalog, routes: [route] }, event);
  if (report.tables[0]?.status !== 'committed')
    throw new Error(`batch not committed: ${JSON.stringify(report.tables[0])}`);
  for (const [id, v] of changes) {
    if (v === null) model?.delete(id);
    else model?.set(id, v);
  }
}

/** The table's rows as `id=v`, sorted. */
export async function rowsOf(
  wh: Awaited<ReturnType<typeof tempWarehouse>>,
  route: TableRoute,
): Promise<string[]> {
  const table = await wh.catalog.loadTable(route.table);
  const rows = await readScanRows(table, await planScan(table));
  return rows.map((r) => `${r.id}=${r.v}`).sort();
}

/** The model's rows as `id=v`, sorted. */
export function modelRows(model: ReadonlyMap<number, string>): string[] {
  return [...model].map(([id, v]) => `${id}=${v}`).sort();
}
