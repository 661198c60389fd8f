import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { JsonNumberText } from '../../../functions/core/records/json-to-value.js';
import { parseRouteCondition, routeMatches } from '../../../functions/core/mapping/route-condition.js';
import { decoded, header } from './support.js';

const when = (json: unknown) => parseRouteCondition(json);

describe('routeMatches', () => {
  it('routes one topic to several tables by a field value', () => {
    const orders = when({ field: 'type', equals: 'order' });
    const refunds = when({ field: 'type', in: ['refund', 'chargeback'] });
    const records = [
      decoded({ type: 'order', id: 1 }),
      decoded({ type: 'refund', id: 2 }),
      decoded({ type: 'chargeback', id: 3 }),
      decoded({ type: 'other', id: 4 }),
    ];
    expect(records.filter((r) => routeMatches(orders, r)).map((r) => (r.value as { id: number }).id)).toEqual(
      [1],
    );
    expect(
      records.filter((r) => routeMatches(refunds, r)).map((r) => (r.value as { id: number }).id),
    ).toEqual([2, 3]);
    expect(routeMatches(undefined, records[3])).toBe(true);
  });

  it('routes by a header, compared as UTF-8 text (the last of repeated headers)', () => {
    const c = when({ header: 'entity', equals: 'order' });
    expect(routeMatches(c, decoded({}, { headers: [header('entity', 'order')] }))).toBe(true);
    expect(
      routeMatches(c, decoded({}, { headers: [header('entity', 'order'), header('entity', 'x')] })),
    ).toBe(false);
    expect(routeMatches(c, decoded({}, { headers: [header('entity', Uint8Array.of(0xff))] }))).toBe(false);
    expect(routeMatches(c, decoded(undefined, { headers: [header('entity', 'order')] }))).toBe(true);
    expect(routeMatches(when({ header: 'entity', exists: false }), decoded({}))).toBe(true);
    // A header sent with a null value has no value, as a null field: not the empty string.
    const nullHeader = decoded({}, { headers: [{ key: 'entity', value: null }] });
    expect(routeMatches(when({ header: 'entity', exists: true }), nullHeader)).toBe(false);
    expect(routeMatches(when({ header: 'entity', equals: '' }), nullHeader)).toBe(false);
    const emptyHeader = decoded({}, { headers: [header('entity', '')] });
    expect(routeMatches(when({ header: 'entity', exists: true }), emptyHeader)).toBe(true);
    expect(routeMatches(when({ header: 'entity', equals: '' }), emptyHeader)).toBe(true);
  });

  it('compares nested fields, numbers by value (exact past 2^53), null as missing', () => {
    expect(routeMatches(when({ field: 'meta.kind', equals: 'a' }), decoded({ meta: { kind: 'a' } }))).toBe(
      true,
    );
    expect(routeMatches(when({ field: 'meta.kind', equals: 'a' }), decoded({ meta: 'a' }))).toBe(false);
    expect(routeMatches(when({ field: 'v', equals: 2 }), decoded({ v: 2.0 }))).toBe(true);
    expect(routeMatches(when({ field: 'v', equals: 2 }), decoded({ v: '2' }))).toBe(false);
    expect(routeMatches(when({ field: 'v', equals: 2 }), decoded({ v: 2n }))).toBe(true);
    expect(
      routeMatches(
        when({ field: 'v', equals: 9007199254740992 }),
        decoded({ v: new JsonNumberText('9007199254740993') }),
      ),
    ).toBe(false);
    expect(routeMatches(when({ field: 'v', equals: null }), decoded({}))).toBe(true);
    expect(routeMatches(when({ field: 'v', exists: true }), decoded({ v: null }))).toBe(false);
    expect(routeMatches(when({ field: 'v', equals: true }), decoded({ v: true }))).toBe(true);
    expect(routeMatches(when({ field: 'v', equals: 'a' }), decoded([1]))).toBe(false);
  });

  it('combines conditions with all / any / not', () => {
    const c = when({
      all: [{ field: 'type', equals: 'order' }, { not: { header: 'test', exists: true } }],
    });
    expect(routeMatches(c, decoded({ type: 'order' }))).toBe(true);
    expect(routeMatches(c, decoded({ type: 'order' }, { headers: [header('test', '1')] }))).toBe(false);
    expect(
      routeMatches(
        when({
          any: [
            { field: 'a', equals: 1 },
            { field: 'b', equals: 1 },
          ],
        }),
        decoded({ b: 1 }),
      ),
    ).toBe(true);
  });

  it.each([
    [[], 'when: must be an object'],
    [{}, 'when: needs "field" or "header"'],
    [{ field: 'type' }, 'when: needs exactly one of "equals", "in", "exists"'],
    [{ field: 'type', equals: 'a', in: ['b'] }, 'when: needs exactly one of'],
    [{ field: 'a..b', equals: 1 }, 'when.field: must be a dotted field path'],
    [{ field: 'type', equals: { a: 1 } }, 'when.equals: must be a string, number, boolean or null'],
    [{ header: 'h', equals: 1 }, 'when.equals: header values compare as text'],
    [{ field: 'type', in: [] }, 'when.in: must be a non-empty array'],
    [{ field: 'type', exists: 'yes' }, 'when.exists: must be true or false'],
    [{ field: 'type', equals: 'a', extra: 1 }, 'when.extra: unexpected here'],
    [{ all: [] }, 'when.all: must be a non-empty array'],
    [{ any: [{ field: 'x' }] }, 'when.any[0]: needs exactly one of'],
    [{ not: { header: '', equals: 'a' } }, 'when.not.header: must be a header name'],
  ])('refuses %j naming the path', (json, message) => {
    expect(() => when(json)).toThrow(ValidationError);
    expect(() => when(json)).toThrow(message);
  });
});
