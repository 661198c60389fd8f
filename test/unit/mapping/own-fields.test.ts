/**
 * Columns named like Object.prototype properties (`constructor`, `toString`): a record without one
 * has it missing (null), on every path — the fast paths, the general conversion, the conversion with
 * a mapping's type rules, and schema reconciliation. Before, they read the inherited function and
 * dead-lettered the record ("function Object() … cannot go into the string column").
 */
import { describe, expect, it } from 'vitest';
import { mapBatch } from '../../../functions/core/mapping/map-batch.js';
import { DEFAULT_MAPPING, parseMappingConfig } from '../../../functions/core/mapping/mapping-config.js';
import type { Schema } from '../../../functions/core/spec/types.js';
import { decoded, metadataOf } from './support.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'constructor', required: false, type: 'string' },
    {
      id: 3,
      name: 's',
      required: false,
      type: { type: 'struct', fields: [{ id: 4, name: 'toString', required: false, type: 'int' }] },
    },
  ],
};

describe('fields named like Object.prototype properties', () => {
  const records = [
    decoded({ id: 1 }),
    decoded({ id: 2, s: {} }),
    decoded({ id: 3, constructor: 'x', s: { toString: 5 } }),
  ];
  const expected = [
    { id: 1n, constructor: null, s: null },
    { id: 2n, constructor: null, s: { toString: null } },
    { id: 3n, constructor: 'x', s: { toString: 5 } },
  ];

  it.each([
    ['the fast path', DEFAULT_MAPPING, true],
    ['the general conversion', DEFAULT_MAPPING, false],
    ['a mapping with a type rule', parseMappingConfig({ columns: { id: { type: 'long' } } }), true],
  ])('read as missing when absent: %s', (_what, mapping, fastPath) => {
    const mapped = mapBatch(records, { mapping, metadata: metadataOf(SCHEMA), fastPath });
    expect(mapped.deadLetters).toEqual([]);
    expect(mapped.gathered?.toRows() ?? mapped.rows).toEqual(expected);
  });

  it('leave the schema as it is when absent, and evolve it for a new field beside them', () => {
    const mapped = mapBatch([decoded({ id: 1, extra: true })], {
      mapping: DEFAULT_MAPPING,
      metadata: metadataOf(SCHEMA),
    });
    expect(mapped.deadLetters).toEqual([]);
    expect(mapped.reconciliation.changes.map((c) => c.kind)).toEqual(['add-column']);
    expect(mapped.rows).toEqual([{ id: 1n, constructor: null, s: null, extra: true }]);
  });
});
