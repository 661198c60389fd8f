import { describe, expect, it } from 'vitest';
import {
  canPromote,
  promotionKeepsPartitionValues,
  samePrimitive,
} from '../../../functions/core/mapping/evolution/promotions.js';
import { reconcileSchema } from '../../../functions/core/mapping/evolution/reconcile-schema.js';
import { applyTransform, canTransform } from '../../../functions/core/spec/transforms.js';
import type {
  PrimitiveType,
  Schema,
  TableMetadata,
  Transform,
  Value,
} from '../../../functions/core/spec/types.js';
import { metadataOf } from '../mapping/support.js';

describe('type promotions', () => {
  it('allows exactly the v2 widenings', () => {
    expect(canPromote('int', 'long')).toBe(true);
    expect(canPromote('float', 'double')).toBe(true);
    expect(canPromote('decimal(10, 2)', 'decimal(12,2)')).toBe(true);
    expect(canPromote('long', 'int')).toBe(false);
    expect(canPromote('double', 'float')).toBe(false);
    expect(canPromote('int', 'double')).toBe(false);
    expect(canPromote('long', 'string')).toBe(false);
    expect(canPromote('decimal(10, 2)', 'decimal(12, 3)')).toBe(false);
    expect(canPromote('decimal(12, 2)', 'decimal(10, 2)')).toBe(false);
    expect(canPromote('date', 'timestamp')).toBe(false);
    expect(samePrimitive('decimal(10,2)', 'decimal(10, 2)')).toBe(true);
  });

  // Each promotion the rule allows for a transform must really give the same partition value: the
  // values before (old type) and after (new type) are compared through the transform code itself.
  const samples: [PrimitiveType, PrimitiveType, Value[], Value[]][] = [
    ['int', 'long', [0, 34, -1, 2 ** 31 - 1, -(2 ** 31)], [0n, 34n, -1n, 2n ** 31n - 1n, -(2n ** 31n)]],
    ['decimal(10, 2)', 'decimal(12, 2)', [0n, 1234n, -1n, 9999999999n], [0n, 1234n, -1n, 9999999999n]],
    ['float', 'double', [0, 1.5, -2.25], [0, 1.5, -2.25]],
  ];
  const transforms: Transform[] = [
    'identity',
    'bucket[16]',
    'bucket[1000]',
    'truncate[10]',
    'truncate[3]',
    'void',
  ];
  for (const [from, to, before, after] of samples) {
    for (const transform of transforms) {
      if (!canTransform(transform, from)) continue;
      it(`${transform} on ${from} → ${to}: the rule agrees with the transform`, () => {
        const same = before.every((v, i) => {
          const a = applyTransform(transform, from, v);
          const b = applyTransform(transform, to, after[i]);
          return a === null ? b === null : String(a) === String(b);
        });
        expect(same).toBe(true);
        expect(promotionKeepsPartitionValues(transform, from, to)).toBe(same);
      });
    }
  }

  it('never assumes a transform it does not know keeps its values', () => {
    expect(promotionKeepsPartitionValues('zorder' as Transform, 'int', 'long')).toBe(false);
    expect(promotionKeepsPartitionValues('day', 'int', 'long')).toBe(false);
  });

  it('rejects a promotion of a partition source whose transform it cannot vouch for', () => {
    const schema: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [{ id: 1, name: 'n', required: false, type: 'int' }],
    };
    const md: TableMetadata = metadataOf(schema);
    // A spec written by a newer engine, with a transform floe does not know.
    md['partition-specs'].push({
      'spec-id': 1,
      fields: [{ 'source-id': 1, 'field-id': 1000, name: 'n_z', transform: 'zorder' as Transform }],
    });
    const rec = reconcileSchema(md, [{ n: 1 }, { n: 2 ** 31 }]);
    expect(rec.rejected.get(1)).toBe(
      "n: int → long would change the values of partition field 'n_z' (zorder)",
    );
    expect(rec.changed).toBe(false);
    const fine = reconcileSchema(
      metadataOf(schema, {
        'spec-id': 0,
        fields: [{ 'source-id': 1, 'field-id': 1000, name: 'n_b', transform: 'bucket[8]' }],
      }),
      [{ n: 2 ** 31 }],
    );
    expect(fine.rejected.size).toBe(0);
    expect(fine.schema.fields[0].type).toBe('long');
  });
});
