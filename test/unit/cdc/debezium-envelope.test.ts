import { describe, expect, it } from 'vitest';
import { parseDebeziumValue } from '../../../functions/core/cdc/debezium-envelope.js';
import { RecordDecodeError } from '../../../functions/core/errors.js';

describe('parseDebeziumValue', () => {
  it('reads the four row ops with their images and source block', () => {
    // Prepare
    const after = { id: 1, name: 'a' };
    const before = { id: 1, name: 'z' };
    const source = { connector: 'postgresql', lsn: 42 };

    // Act
    const c = parseDebeziumValue({ op: 'c', before: null, after, source });
    const u = parseDebeziumValue({ op: 'u', before, after });
    const d = parseDebeziumValue({ op: 'd', before, after: null });
    const r = parseDebeziumValue({ op: 'r', after });

    // Assess
    expect(c).toEqual({ kind: 'change', op: 'c', before: null, after, source });
    expect(u).toMatchObject({ kind: 'change', op: 'u', before, after, source: null });
    expect(d).toMatchObject({ kind: 'change', op: 'd', before, after: null });
    expect(r).toMatchObject({ kind: 'change', op: 'r', before: null, after });
  });

  it("unwraps Kafka Connect's { schema, payload } envelope", () => {
    const value = { schema: { type: 'struct' }, payload: { op: 'c', after: { id: 7 } } };
    expect(parseDebeziumValue(value)).toMatchObject({ kind: 'change', op: 'c', after: { id: 7 } });
  });

  it('recognises what else a Debezium topic carries and ignores it by kind', () => {
    expect(parseDebeziumValue(null)).toEqual({ kind: 'ignored', reason: 'tombstone' });
    expect(parseDebeziumValue({ schema: {}, payload: null })).toEqual({
      kind: 'ignored',
      reason: 'tombstone',
    });
    expect(parseDebeziumValue({ ts_ms: 1795000000000 })).toEqual({ kind: 'ignored', reason: 'heartbeat' });
    expect(parseDebeziumValue({ status: 'BEGIN', id: '571:53195829', event_count: null, ts_ms: 1 })).toEqual({
      kind: 'ignored',
      reason: 'transaction',
    });
    expect(
      parseDebeziumValue({
        source: {},
        databaseName: 'shop',
        ddl: 'ALTER TABLE x ADD y INT',
        tableChanges: [],
      }),
    ).toEqual({ kind: 'ignored', reason: 'schema-change' });
    expect(parseDebeziumValue({ op: 'm', message: { prefix: 'p' } })).toEqual({
      kind: 'ignored',
      reason: 'message',
    });
  });

  it('refuses, with a reason, what it cannot apply or does not recognise', () => {
    const refuse = (value: unknown) => {
      try {
        parseDebeziumValue(value);
      } catch (error) {
        expect(error).toBeInstanceOf(RecordDecodeError);
        return (error as Error).message;
      }
      throw new Error('expected a refusal');
    };
    expect(refuse({ id: 1, name: 'flattened row' })).toMatch(/no 'op' field .*upsert/);
    expect(refuse({ op: 't', source: {} })).toMatch(/truncate/);
    expect(refuse({ op: 'x', after: {} })).toMatch(/unknown Debezium op "x"/);
    expect(refuse({ op: 'u', before: { id: 1 }, after: null })).toMatch(/op 'u' has no 'after' row/);
    expect(refuse({ op: 'c', after: [1] })).toMatch(/'after' is not an object/);
    expect(refuse([1, 2])).toMatch(/not a JSON object/);
  });
});
