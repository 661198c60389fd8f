/**
 * A table with position and equality deletes, written with floe's writers and committed through the
 * commit loop, read by icebird (over loopback HTTP) and by floe's reader: same live rows. The table
 * is unpartitioned and delete rows hold no nulls, where icebird's documented shortcuts (equality
 * deletes ignore partition scoping; a null in a delete row matches anything) cannot bite.
 */
import { icebergRead } from 'icebird';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import type { DataFile, Row, Schema, TableIdentifier } from '../../../functions/core/spec/types.js';
import { commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { type HttpWarehouse, startHttpWarehouse } from '../../support/http-warehouse.js';

const ID: TableIdentifier = { namespace: ['cdc'], name: 'accounts' };
const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'owner', required: true, type: 'string' },
    { id: 3, name: 'balance', required: false, type: 'double' },
  ],
};
const POSITION_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 2147483546, name: 'file_path', required: true, type: 'string' },
    { id: 2147483545, name: 'pos', required: true, type: 'long' },
  ],
};

describe('deletes written by floe, read by icebird and floe alike', () => {
  let wh: HttpWarehouse;
  let table: LoadedTable;
  let n = 0;

  async function write(
    rows: Row[],
    schema: Schema,
    content: 0 | 1 | 2,
    equalityIds?: number[],
  ): Promise<DataFile[]> {
    return writeDataFiles(rows, {
      io: wh.io,
      schema,
      specId: 0,
      partition: {},
      content,
      equalityIds,
      nextLocation: (i) => `${table.metadata.location}/data/f${n++}-${i}.parquet`,
    });
  }

  async function commit(operation: 'append' | 'delete' | 'overwrite', data: DataFile[], deletes: DataFile[]) {
    const result = await commitWithRetry(wh.catalog, ID, {
      prepare: (base) =>
        prepareSnapshot(base, { operation, addedDataFiles: data, addedDeleteFiles: deletes }),
    });
    table = result.table;
  }

  const rows = (from: number, to: number, owner: string): Row[] =>
    Array.from({ length: to - from + 1 }, (_, i) => ({
      id: BigInt(from + i),
      owner,
      balance: (from + i) * 1.5,
    }));

  beforeAll(async () => {
    wh = await startHttpWarehouse();
    table = await wh.catalog.createTable(ID, {
      schema: SCHEMA,
      properties: { 'write.avro.compression-codec': 'uncompressed' },
    });
    // seq 1: ids 1..10 in one file
    const [first] = await write(rows(1, 10, 'ann'), SCHEMA, 0);
    await commit('append', [first], []);
    // seq 2: position deletes of rows 0 and 4 of the first file (ids 1 and 5), plus ids 11..15
    const pos = await write(
      [
        { file_path: first.file_path, pos: 0n },
        { file_path: first.file_path, pos: 4n },
      ],
      POSITION_SCHEMA,
      1,
    );
    await commit('overwrite', await write(rows(11, 15, 'bob'), SCHEMA, 0), pos);
    // seq 3: equality deletes of ids 3 and 12, and a new version of id 12 in the same commit (survives:
    // an equality delete applies only to strictly older data)
    const eq = await write([{ id: 3n }, { id: 12n }], { ...SCHEMA, fields: [SCHEMA.fields[0]] }, 2, [1]);
    await commit('overwrite', await write([{ id: 12n, owner: 'bob-v2', balance: 99 }], SCHEMA, 0), eq);
  });
  afterAll(() => wh.close());

  it("floe's reader applies both kinds by the sequence-number rules", async () => {
    const live = await readScanRows(table, await planScan(table));
    const byId = new Map(live.map((r) => [Number(r.id), r.owner]));
    expect([...byId.keys()].sort((a, b) => a - b)).toEqual([2, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    expect(byId.get(12)).toBe('bob-v2');
  });

  it('icebird returns the same live rows', async () => {
    const floe = await readScanRows(table, await planScan(table));
    const ice = (await icebergRead({ tableUrl: `${wh.url}/cdc/accounts` })) as Record<string, unknown>[];
    const key = (r: Record<string, unknown>) => `${r.id}/${r.owner}/${r.balance}`;
    expect(ice.map(key).sort()).toEqual(floe.map(key).sort());
  });
});
