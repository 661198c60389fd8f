/**
 * Schema evolution committed with the data, through the real commit loop on an embedded catalog:
 * the example (decimal widened, required → optional, a new column in one batch), files read
 * back by floe's scan and by DuckDB, and two writers evolving the same table at once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { commitBatch } from '../../../functions/core/ingest/commit-batch.js';
import { writeEvolvedRows } from '../../../functions/core/ingest/write-evolved-rows.js';
import { JsonNumberText } from '../../../functions/core/records/json-to-value.js';
import {
  reconcileSchema,
  reconciliationStillApplies,
  type SchemaReconciliation,
} from '../../../functions/core/mapping/evolution/reconcile-schema.js';
import type { DecodedRecord } from '../../../functions/core/mapping/decoded-record.js';
import { mapBatch } from '../../../functions/core/mapping/map-batch.js';
import { DEFAULT_MAPPING } from '../../../functions/core/mapping/mapping-config.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { parseExpression } from '../../../functions/core/scan/parse-expression.js';
import { currentSchema, currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { parsePartitionExpression } from '../../../functions/core/spec/partition-spec.js';
import { indexById } from '../../../functions/core/spec/schema-index.js';
import type { DataFile, Row, Schema, TableIdentifier } from '../../../functions/core/spec/types.js';
import { type CommitEvent, commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { writeRows } from '../../../functions/core/table/write-rows.js';
import { duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';
import { FaultyCatalog, tempWarehouse } from '../../support/tables.js';
import { decoded } from '../mapping/support.js';

const ID: TableIdentifier = { namespace: ['sales'], name: 'orders' };
const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'order_id', required: true, type: 'long' },
    { id: 2, name: 'amount', required: true, type: 'decimal(10, 2)' },
    { id: 3, name: 'country', required: true, type: 'string' },
    { id: 4, name: 'qty', required: false, type: 'int' },
  ],
};
const noSleep = async () => {};

interface EvolvingAppend {
  /** Reconciliations made, one per (re)mapping. */
  reconciliations: SchemaReconciliation[];
  files: DataFile[];
}

/**
 * What ingest-table does once evolution is wired: map + reconcile + write on a base, and on a commit
 * retry whose base moved (another writer evolved the schema), do all three again on the new base —
 * the files carry field ids, so they must be written for the schema that commits.
 */
async function commitEvolvingAppend(
  catalog: EmbeddedCatalog | FaultyCatalog,
  records: DecodedRecord[],
  onEvent?: (e: CommitEvent) => void,
) {
  const state: EvolvingAppend = { reconciliations: [], files: [] };
  let current: SchemaReconciliation | undefined;
  const result = await commitWithRetry(
    catalog,
    ID,
    {
      prepare: async (base: LoadedTable) => {
        if (!current || !reconciliationStillApplies(base.metadata, current)) {
          const batch = mapBatch(records, { mapping: DEFAULT_MAPPING, metadata: base.metadata });
          expect(batch.deadLetters).toEqual([]);
          current = batch.reconciliation;
          state.reconciliations.push(current);
          state.files = await writeRows(base, batch.rows, { schema: current.schema });
        }
        return prepareSnapshot(base, {
          operation: 'append',
          addedDataFiles: state.files,
          addedDeleteFiles: [],
          preUpdates: current.updates,
          preRequirements: current.requirements,
        });
      },
    },
    { sleep: noSleep, onEvent },
  );
  return { result, ...state };
}

async function scan(catalog: EmbeddedCatalog, filter?: string): Promise<Row[]> {
  const table = await catalog.loadTable(ID);
  const rows = await readScanRows(
    table,
    await planScan(table, filter ? { filter: parseExpression(filter) } : {}),
  );
  return rows.sort((a, b) => Number(a.order_id) - Number(b.order_id));
}

describe('schema evolution committed with the data', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
    await catalog.createTable(ID, {
      schema: SCHEMA,
      partitionSpec: parsePartitionExpression('bucket(4, order_id), truncate(10, qty)', SCHEMA),
    });
    await commitEvolvingAppend(catalog, [
      decoded({ order_id: 1, amount: '10.50', country: 'DE', qty: 3 }),
      decoded({ order_id: 2, amount: 99999999.99, country: 'FR', qty: 40 }),
    ]);
  });
  afterEach(() => cleanup());

  it('DECIMAL(10,2) → DECIMAL(12,2), country required → optional, new channel — in one commit', async () => {
    const before = await catalog.loadTable(ID);
    const { result, reconciliations } = await commitEvolvingAppend(catalog, [
      decoded({ order_id: 3, amount: new JsonNumberText('1234567890.12'), country: null, channel: 'web' }),
      decoded({ order_id: 4, amount: '7.00', channel: 'app', qty: 2 ** 31 }),
    ]);
    expect(reconciliations).toHaveLength(1);
    const md = result.table.metadata;
    const schema = currentSchema(md);
    expect(md['current-schema-id']).toBe(1);
    expect(md.schemas.map((s) => s['schema-id'])).toEqual([0, 1]);
    expect(schema.fields).toEqual([
      { id: 1, name: 'order_id', required: true, type: 'long' },
      { id: 2, name: 'amount', required: true, type: 'decimal(12, 2)' },
      { id: 3, name: 'country', required: false, type: 'string' },
      { id: 4, name: 'qty', required: false, type: 'long' },
      { id: 5, name: 'channel', required: false, type: 'string' },
    ]);
    expect(md['last-column-id']).toBe(5);
    // One commit: the data snapshot is the only new one, and it was written with the new schema.
    expect(md.snapshots).toHaveLength(before.metadata.snapshots.length + 1);
    expect(currentSnapshot(md)!['schema-id']).toBe(1);

    expect(await scan(catalog)).toEqual([
      { order_id: 1n, amount: 1050n, country: 'DE', qty: 3n, channel: null },
      { order_id: 2n, amount: 9999999999n, country: 'FR', qty: 40n, channel: null },
      { order_id: 3n, amount: 123456789012n, country: null, qty: null, channel: 'web' },
      { order_id: 4n, amount: 700n, country: null, qty: 2147483648n, channel: 'app' },
    ]);
    // Partition pruning still holds across the promoted partition source (truncate on int → long).
    expect((await scan(catalog, 'qty >= 2147483648')).map((r) => r.order_id)).toEqual([4n]);
    expect((await scan(catalog, 'qty < 10')).map((r) => r.order_id)).toEqual([1n]);
  });

  it('writes files DuckDB reads with the new types and field ids', async () => {
    await commitEvolvingAppend(catalog, [
      decoded({ order_id: 3, amount: new JsonNumberText('1234567890.12'), country: null, channel: 'web' }),
    ]);
    const table = await catalog.loadTable(ID);
    const entries = await liveEntries(table);
    const local = (p: string) => (p.startsWith('file:') ? new URL(p).pathname : p);
    const paths = entries.map((e) => sqlString(local(e.data_file.file_path)));
    const newest = sqlString(
      local(
        entries.find(
          (e) =>
            e.data_file.file_path.includes('order_id_bucket') &&
            e.snapshot_id === currentSnapshot(table.metadata)!['snapshot-id'],
        )!.data_file.file_path,
      ),
    );
    const rows = await duckdbQuery(
      `select order_id, amount::varchar as amount, country, channel from read_parquet([${paths.join(',')}], union_by_name = true) order by order_id`,
    );
    expect(rows).toEqual([
      { order_id: 1n, amount: '10.50', country: 'DE', channel: null },
      { order_id: 2n, amount: '99999999.99', country: 'FR', channel: null },
      { order_id: 3n, amount: '1234567890.12', country: null, channel: 'web' },
    ]);
    const fieldIds = await duckdbQuery(
      `select name, field_id, type, converted_type from parquet_schema(${newest}) where name in ('amount', 'channel')`,
    );
    expect(Number(fieldIds.find((f) => f.name === 'channel')?.field_id)).toBe(5);
    expect(Number(fieldIds.find((f) => f.name === 'amount')?.field_id)).toBe(2);
  });

  it('a second writer evolving at once is refused, re-reconciles and takes fresh ids', async () => {
    const faulty = new FaultyCatalog(catalog);
    // Writer A evolves the schema (adds `channel`) just before B's first commit request arrives.
    faulty.beforeCommit = async () => {
      const base = await catalog.loadTable(ID);
      const a = reconcileSchema(base.metadata, [
        { order_id: 9, amount: '1.00', country: 'DE', channel: 'web' },
      ]);
      await catalog.commitTable(ID, a.requirements, a.updates);
    };
    const events: CommitEvent[] = [];
    const b = await commitEvolvingAppend(
      faulty,
      [
        decoded({ order_id: 5, amount: '1.00', country: 'NL', promo: 'XMAS' }),
        decoded({ order_id: 6, amount: '2.00', country: 'NL', channel: 'b2b' }),
      ],
      (e) => events.push(e),
    );

    const conflict = events.find((e) => e.type === 'conflict');
    // Refused either by assert-current-schema-id (catalogs that check the current metadata) or, as the
    // embedded catalog commits on the base it was given, by the conditional create of the next version.
    expect(conflict && 'error' in conflict && conflict.error).toMatch(
      /assert-current-schema-id|committed by another writer/,
    );
    expect(b.reconciliations).toHaveLength(2);
    const [first, second] = b.reconciliations;
    // First try: promo id 5, channel id 6 (on schema 0). A took id 5 for channel meanwhile.
    expect(first.schema.fields.slice(4).map((f) => [f.name, f.id])).toEqual([
      ['promo', 5],
      ['channel', 6],
    ]);
    // The retry re-reconciled on A's schema: channel is A's id 5, promo got a fresh id 6.
    expect(second.baseSchemaId).toBe(1);
    expect(second.schema.fields.slice(4).map((f) => [f.name, f.id])).toEqual([
      ['channel', 5],
      ['promo', 6],
    ]);
    const md = (await catalog.loadTable(ID)).metadata;
    expect(md['current-schema-id']).toBe(2);
    expect(md['last-column-id']).toBe(6);
    for (const s of md.schemas) {
      const ids = [...indexById(s).keys()];
      expect(new Set(ids).size).toBe(ids.length);
    }
    // Each id means one column in every schema it appears in.
    const names = new Map<number, string>();
    for (const s of md.schemas) {
      for (const [id, f] of indexById(s)) {
        expect(names.get(id) ?? f.name).toBe(f.name);
        names.set(id, f.name);
      }
    }
    const rows = await scan(catalog);
    expect(rows.find((r) => r.order_id === 5n)).toMatchObject({ promo: 'XMAS', channel: null });
    expect(rows.find((r) => r.order_id === 6n)).toMatchObject({ promo: null, channel: 'b2b' });
  });

  it('two writers that both commit data: the later one rebases onto the earlier one’s schema', async () => {
    const faulty = new FaultyCatalog(catalog);
    faulty.beforeCommit = async () => {
      await commitEvolvingAppend(catalog, [
        decoded({ order_id: 7, amount: '3.00', country: 'DE', channel: 'web' }),
      ]);
    };
    const b = await commitEvolvingAppend(faulty, [
      decoded({ order_id: 8, amount: '4.00', country: 'IT', promo: 'P' }),
    ]);
    expect(b.result.status).toBe('committed');
    expect(b.reconciliations.map((r) => r.baseSchemaId)).toEqual([0, 1]);
    const schema = currentSchema((await catalog.loadTable(ID)).metadata);
    expect(schema.fields.slice(4).map((f) => [f.name, f.id])).toEqual([
      ['channel', 5],
      ['promo', 6],
    ]);
    const rows = await scan(catalog);
    expect(rows.map((r) => [r.order_id, r.channel, r.promo])).toEqual([
      [1n, null, null],
      [2n, null, null],
      [7n, 'web', null],
      [8n, null, 'P'],
    ]);
  });
});

describe('schema evolution through commit-batch (the ingest-table wiring)', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
    await catalog.createTable(ID, { schema: SCHEMA });
  });
  afterEach(() => cleanup());

  /** What ingest-table's append path does once wired: map on each round's base, write, commit. */
  function ingest(target: EmbeddedCatalog | FaultyCatalog, batchId: string, records: DecodedRecord[]) {
    return commitBatch(
      { catalog: target },
      ID,
      batchId,
      records.map((d) => d.record),
      async (current, fresh) => {
        const unseen = new Set(fresh);
        const batch = mapBatch(
          records.filter((d) => unseen.has(d.record)),
          { mapping: DEFAULT_MAPPING, metadata: current.metadata },
        );
        return writeEvolvedRows(current, batch, batchId);
      },
    );
  }

  it('commits the evolved schema with the data, and a replay adds nothing', async () => {
    const records = [
      decoded({ order_id: 1, amount: '1234567890.12', country: null, channel: 'web' }, { offset: 0n }),
      decoded({ order_id: 2, amount: '1.00', country: 'DE' }, { offset: 1n }),
    ];
    const first = await ingest(catalog, 'batch-1', records);
    expect(first.result?.status).toBe('committed');
    const md = (await catalog.loadTable(ID)).metadata;
    expect(md.snapshots).toHaveLength(1);
    expect(md['current-schema-id']).toBe(1);
    expect(currentSnapshot(md)!['schema-id']).toBe(1);
    const replay = await ingest(catalog, 'batch-1', records);
    expect(replay.result).toBeUndefined();
    expect((await catalog.loadTable(ID)).metadata.schemas).toHaveLength(2);
    expect((await scan(catalog)).map((r) => [r.order_id, r.amount, r.country, r.channel])).toEqual([
      [1n, 123456789012n, null, 'web'],
      [2n, 100n, 'DE', null],
    ]);
  });

  it('a writer whose base schema moved writes its files again with fresh ids', async () => {
    const faulty = new FaultyCatalog(catalog);
    faulty.beforeCommit = async () => {
      await ingest(catalog, 'writer-a', [
        decoded({ order_id: 10, amount: '1.00', country: 'DE', channel: 'web' }, { partition: 1 }),
      ]);
    };
    const b = await ingest(faulty, 'writer-b', [
      decoded({ order_id: 20, amount: '2.00', country: 'FR', promo: 'P', channel: 'b2b' }, { partition: 0 }),
    ]);
    expect(b.result?.status).toBe('committed');
    const md = (await catalog.loadTable(ID)).metadata;
    expect(
      currentSchema(md)
        .fields.slice(4)
        .map((f) => [f.name, f.id]),
    ).toEqual([
      ['channel', 5],
      ['promo', 6],
    ]);
    expect(md['last-column-id']).toBe(6);
    // B's first files (written for schema 0, where promo was id 5) were dropped, not committed.
    const live = (await liveEntries(await catalog.loadTable(ID))).map((e) => e.data_file.file_path);
    expect(live).toHaveLength(2);
    expect(b.written?.dataFiles.every((f) => live.includes(f.file_path))).toBe(true);
    expect((await scan(catalog)).map((r) => [r.order_id, r.channel, r.promo])).toEqual([
      [10n, 'web', null],
      [20n, 'b2b', 'P'],
    ]);
  });
});
