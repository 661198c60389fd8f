/**
 * The fast path must be invisible: for a value it takes, the row is the one the general conversion
 * gives and reconciliation would change nothing; and mapBatch with the fast path gives exactly what it
 * gives without it (rows, dead letters and their reasons, schema changes), on generated schemas and
 * values built to sit on every boundary (ranges, -0, scales, precisions, nulls, unknown keys).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileFittingRow, NOT_FITTING } from '../../../functions/core/mapping/fast/fitting-row.js';
import { reconcileSchema } from '../../../functions/core/mapping/evolution/reconcile-schema.js';
import { jsonToRow } from '../../../functions/core/records/json-to-value.js';
import { withKafkaLineage } from '../../../functions/core/records/kafka-lineage.js';
import { mapBatch } from '../../../functions/core/mapping/map-batch.js';
import { DEFAULT_MAPPING } from '../../../functions/core/mapping/mapping-config.js';
import { parseIsoTimestamp } from '../../../functions/core/records/parse-temporal.js';
import { decoded, metadataOf } from '../mapping/support.js';
import { numbered, plain, schemaAndValues } from './fitting-arbitraries.js';

describe('fitting-row fast path', () => {
  it('takes a value only when the general conversion gives the same row and reconciliation changes nothing', () => {
    let taken = 0;
    fc.assert(
      fc.property(schemaAndValues, ([schema, values]) => {
        const convert = compileFittingRow(schema);
        const md = metadataOf(schema);
        for (const value of values) {
          const row = convert(value);
          if (row === NOT_FITTING) continue;
          taken++;
          expect(plain(row)).toEqual(plain(jsonToRow(schema, value)));
          const rec = reconcileSchema(md, [value]);
          expect(rec.changed).toBe(false);
          expect(rec.rejected.size).toBe(0);
        }
      }),
      { seed: 20261205, numRuns: 1500 },
    );
    // The generators must exercise the fast path, not only the refusals.
    expect(taken).toBeGreaterThan(200);
  });

  it('leaves mapBatch exactly as it is without the fast path (rows, dead letters, schema changes)', () => {
    fc.assert(
      fc.property(
        schemaAndValues,
        fc.constantFrom('evolve', 'dlq') as fc.Arbitrary<'evolve' | 'dlq'>,
        ([schema, values], policy) => {
          const md = metadataOf(withKafkaLineage(schema));
          const records = values.map((v, i) => decoded(v, { offset: BigInt(i) }));
          const fast = mapBatch(records, { mapping: DEFAULT_MAPPING, metadata: md, policy });
          const reference = mapBatch(records, {
            mapping: DEFAULT_MAPPING,
            metadata: md,
            policy,
            fastPath: false,
          });
          expect(plain(fast.rows)).toEqual(plain(reference.rows));
          expect(fast.used).toEqual(reference.used);
          expect(fast.deadLetters).toEqual(reference.deadLetters);
          expect(fast.reconciliation.changes).toEqual(reference.reconciliation.changes);
          expect(plain(fast.reconciliation.schema)).toEqual(plain(reference.reconciliation.schema));
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('refuses what needs a change or a refusal, and takes the common record', () => {
    const schema = numbered({
      type: 'struct',
      fields: [
        { id: 0, name: 'id', required: true, type: 'long' },
        { id: 0, name: 'n', required: false, type: 'int' },
        { id: 0, name: 'amount', required: false, type: 'decimal(9, 2)' },
        { id: 0, name: 'ts', required: false, type: 'timestamptz' },
      ],
    });
    const convert = compileFittingRow(schema);
    expect(plain(convert({ id: 1, n: -0, amount: 12.5, ts: '2026-11-23T14:05:09.123Z' }))).toEqual(
      plain({ id: 1n, n: 0, amount: 1250n, ts: parseIsoTimestamp('2026-11-23T14:05:09.123Z') }),
    );
    expect(convert({ id: 1, channel: 'web' })).toBe(NOT_FITTING); // new column
    expect(convert({ id: 1, n: 2 ** 31 })).toBe(NOT_FITTING); // int → long
    expect(convert({ id: 1, amount: '12.345' })).toBe(NOT_FITTING); // scale
    expect(convert({ id: 1, amount: '12345678.90' })).toBe(NOT_FITTING); // precision 10
    expect(convert({ n: 1 })).toBe(NOT_FITTING); // required id missing
    expect(convert({ id: 1.5 })).toBe(NOT_FITTING);
    expect(convert({ id: 1, ts: 'yesterday' })).toBe(NOT_FITTING);
    expect(convert([1])).toBe(NOT_FITTING);
  });
});
