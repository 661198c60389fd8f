import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import {
  EVOLUTION_PROPERTY,
  evolutionPolicyOf,
  parseEvolutionPolicy,
} from '../../../functions/core/mapping/evolution/evolution-policy.js';
import { reconcileSchema } from '../../../functions/core/mapping/evolution/reconcile-schema.js';
import { withKafkaLineage } from '../../../functions/core/records/kafka-lineage.js';
import { parseSchema } from '../../../functions/core/spec/schema.js';
import { metadataOf } from '../mapping/support.js';

describe('evolution policy', () => {
  it('is evolve by default, then the table property, then an explicit override', () => {
    expect(evolutionPolicyOf(undefined)).toBe('evolve');
    expect(evolutionPolicyOf({})).toBe('evolve');
    expect(evolutionPolicyOf({ [EVOLUTION_PROPERTY]: 'block' })).toBe('block');
    expect(evolutionPolicyOf({ [EVOLUTION_PROPERTY]: 'block' }, 'dlq')).toBe('dlq');
  });

  it('refuses anything else, naming where it came from', () => {
    expect(() => evolutionPolicyOf({ [EVOLUTION_PROPERTY]: 'on' })).toThrow(ValidationError);
    expect(() => evolutionPolicyOf({ [EVOLUTION_PROPERTY]: 'on' })).toThrow(
      'table property floe.schema-evolution: must be one of evolve, dlq, block, got "on"',
    );
    expect(() => parseEvolutionPolicy('Evolve', 'routes[0].schemaEvolution')).toThrow(
      'routes[0].schemaEvolution',
    );
  });
});

describe('a table created without a declared schema', () => {
  it('gets every column from the first batch (only _kafka to start with)', () => {
    const md = metadataOf(withKafkaLineage({ type: 'struct', 'schema-id': 0, fields: [] }));
    const rec = reconcileSchema(md, [
      { order_id: 1, amount: 12.5, tags: ['a'], shipping: { city: 'Paris' } },
      { order_id: 2, note: 'x' },
    ]);
    const first = md['last-column-id'] + 1;
    expect(
      rec.schema.fields
        .slice(1)
        .map((f) => [f.name, f.id, typeof f.type === 'string' ? f.type : f.type.type]),
    ).toEqual([
      ['order_id', first, 'long'],
      ['amount', first + 1, 'double'],
      ['tags', first + 2, 'list'],
      ['shipping', first + 4, 'struct'],
      ['note', first + 6, 'string'],
    ]);
    expect(parseSchema(rec.schema)).toEqual(rec.schema);
  });
});
