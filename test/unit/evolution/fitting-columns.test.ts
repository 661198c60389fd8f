/**
 * Gathering columns must be invisible: it takes exactly the values the fitting-row path takes, holds
 * the same rows, and builds the same Arrow batch (the same Parquet bytes) and the same column stats as
 * the rows do — for the whole batch and for any row range (files roll over row ranges); and mapBatch
 * gives the same result with and without `columnar`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toArrowSchema } from '../../../functions/core/data/arrow/arrow-schema.js';
import { buildRecordBatch } from '../../../functions/core/data/arrow/build-record-batch.js';
import type { StatsSink } from '../../../functions/core/data/arrow/column-stats.js';
import { encodeBatch } from '../../../functions/core/data/parquet/write/encode-parquet.js';
import { GatheredRows } from '../../../functions/core/data/arrow/gathered-rows.js';
import { compileFittingColumns } from '../../../functions/core/mapping/fast/fitting-columns.js';
import { compileFittingRow, NOT_FITTING } from '../../../functions/core/mapping/fast/fitting-row.js';
import {
  KAFKA_FIELD,
  kafkaLineageRow,
  withKafkaLineage,
} from '../../../functions/core/records/kafka-lineage.js';
import { mapBatch } from '../../../functions/core/mapping/map-batch.js';
import { DEFAULT_MAPPING } from '../../../functions/core/mapping/mapping-config.js';
import type { Row, Schema } from '../../../functions/core/spec/types.js';
import { decoded, header, metadataOf, rawRecord } from '../mapping/support.js';
import { plain, schemaAndValues } from './fitting-arbitraries.js';

function parquetOf(schema: Schema, build: (stats: StatsSink) => ReturnType<typeof buildRecordBatch>) {
  const stats: StatsSink = new Map();
  const batch = build(stats);
  const { bytes } = encodeBatch(schema, batch, {
    codec: 'uncompressed',
    rowGroupRows: 1 << 20,
    keyValueMetadata: new Map(),
    writer: 'floe',
  });
  return { bytes: Buffer.from(bytes).toString('base64'), stats: plain([...stats]) };
}

describe('gathered columns', () => {
  it('take what fitting rows take, hold the same rows, and build the same batch and stats', () => {
    let gatheredRows = 0;
    fc.assert(
      fc.property(schemaAndValues, fc.nat(), fc.nat(), ([valueSchema, values], a, b) => {
        const schema = withKafkaLineage(valueSchema);
        const gatherer = compileFittingColumns(schema, new Set([KAFKA_FIELD]));
        const toRow = compileFittingRow(valueSchema);
        const rows: Row[] = [];
        values.forEach((value, i) => {
          const record = rawRecord({
            offset: BigInt(i),
            key: i % 2 ? new Uint8Array([i]) : null,
            headers: i % 3 ? [header('h', 'v')] : [],
          });
          const lineage = kafkaLineageRow(record);
          const row = toRow(value);
          expect(gatherer.append(value, { [KAFKA_FIELD]: lineage })).toBe(row !== NOT_FITTING);
          if (row !== NOT_FITTING) rows.push({ ...row, [KAFKA_FIELD]: lineage });
        });
        const gathered = new GatheredRows(gatherer.columns);
        gatheredRows += gathered.length;
        expect(gathered.length).toBe(rows.length);
        expect(plain(gathered.toRows())).toEqual(plain(rows));
        if (rows.length === 0) return;
        const arrowSchema = toArrowSchema(schema);
        const start = a % rows.length;
        const end = start + 1 + (b % (rows.length - start));
        for (const [from, to] of [
          [0, rows.length],
          [start, end],
        ]) {
          expect(parquetOf(schema, (s) => gathered.buildBatch(schema, arrowSchema, from, to, s))).toEqual(
            parquetOf(schema, (s) => buildRecordBatch(schema, arrowSchema, rows, from, to, s)),
          );
        }
      }),
      { seed: 20261205, numRuns: 600 },
    );
    expect(gatheredRows).toBeGreaterThan(300);
  });

  it('leave mapBatch as it is without them', () => {
    fc.assert(
      fc.property(schemaAndValues, ([schema, values]) => {
        const md = metadataOf(withKafkaLineage(schema));
        const records = values.map((v, i) => decoded(v, { offset: BigInt(i) }));
        const columnar = mapBatch(records, { mapping: DEFAULT_MAPPING, metadata: md, columnar: true });
        const rows = mapBatch(records, { mapping: DEFAULT_MAPPING, metadata: md });
        expect(plain(columnar.gathered?.toRows() ?? columnar.rows)).toEqual(plain(rows.rows));
        expect(columnar.used).toEqual(rows.used);
        expect(columnar.deadLetters).toEqual(rows.deadLetters);
        expect(columnar.reconciliation.changes).toEqual(rows.reconciliation.changes);
        if (columnar.gathered) expect(columnar.rows).toEqual([]);
      }),
      { numRuns: 600 },
    );
  });

  it('roll back a row that stops fitting half-way', () => {
    const schema = withKafkaLineage({
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        {
          id: 2,
          name: 'lines',
          required: false,
          type: {
            type: 'list',
            'element-id': 3,
            'element-required': true,
            element: { type: 'struct', fields: [{ id: 4, name: 'qty', required: true, type: 'int' }] },
          },
        },
      ],
    });
    const gatherer = compileFittingColumns(schema, new Set([KAFKA_FIELD]));
    const lineage = { [KAFKA_FIELD]: kafkaLineageRow(rawRecord()) };
    expect(gatherer.append({ id: 1, lines: [{ qty: 1 }] }, lineage)).toBe(true);
    // The second line needs int → long: nothing of this row may stay behind.
    expect(gatherer.append({ id: 2, lines: [{ qty: 2 }, { qty: 2 ** 40 }] }, lineage)).toBe(false);
    expect(gatherer.append({ id: 3, lines: [] }, lineage)).toBe(true);
    const rows = new GatheredRows(gatherer.columns).toRows();
    expect(rows.map((r) => [r.id, r.lines])).toEqual([
      [1n, [{ qty: 1 }]],
      [3n, []],
    ]);
  });
});
