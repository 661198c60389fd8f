import { describe, expect, it } from 'vitest';
import { RecordDecodeError } from '../../../functions/core/errors.js';
import { parseDecimalText } from '../../../functions/core/records/decimal-text.js';
import { jsonToRow, jsonToValue } from '../../../functions/core/records/json-to-value.js';
import { parseJsonBytes } from '../../../functions/core/records/parse-json.js';
import {
  parseIsoDate,
  parseIsoTime,
  parseIsoTimestamp,
} from '../../../functions/core/records/parse-temporal.js';
import type { StructType } from '../../../functions/core/spec/types.js';

const enc = (s: string) => new TextEncoder().encode(s);

describe('parseIsoTimestamp', () => {
  it.each([
    ['1970-01-01T00:00:00Z', 0n],
    ['2026-11-20T10:00:00.123456Z', 1795168800123456n],
    ['2026-11-20T10:00:00.1234567Z', 1795168800123456n],
    ['2026-11-20T11:00:00+01:00', 1795168800000000n],
    ['2026-11-20T05:30:00-04:30', 1795168800000000n],
    ['2026-11-20 10:00:00', 1795168800000000n],
    ['2026-11-20', 1795132800000000n],
    ['1969-12-31T23:59:59.999999Z', -1n],
  ])('%s → %s µs', (text, micros) => {
    expect(parseIsoTimestamp(text)).toBe(micros);
  });

  it.each([
    '2026-02-30',
    '2026-13-01T00:00:00Z',
    '2026-11-20T25:00:00Z',
    'yesterday',
    '2026-11-20T10:00:00+5',
  ])('rejects %s', (text) => {
    expect(() => parseIsoTimestamp(text)).toThrow();
  });

  it('parses dates and times exactly', () => {
    expect(parseIsoDate('2017-11-16')).toBe(17486);
    expect(parseIsoDate('1969-12-31')).toBe(-1);
    expect(parseIsoTime('22:31:08')).toBe(81068000000n);
    expect(parseIsoTime('00:00:00.000001')).toBe(1n);
  });
});

describe('parseDecimalText', () => {
  it.each([
    ['12.30', 10, 2, 1230n],
    ['12.3', 10, 2, 1230n],
    ['-0.05', 10, 2, -5n],
    ['1e2', 10, 2, 10000n],
    ['1.50E-1', 10, 2, 15n],
    ['12.300', 10, 2, 1230n],
    ['99999999.99', 10, 2, 9999999999n],
  ])('%s as decimal(%d,%d) → %s', (text, p, s, unscaled) => {
    expect(parseDecimalText(text, p, s, 'x')).toBe(unscaled);
  });

  it('refuses to round or overflow', () => {
    expect(() => parseDecimalText('12.345', 10, 2, 'amount')).toThrow(
      'amount: 12.345 has more than 2 decimal places',
    );
    expect(() => parseDecimalText('100000000.00', 10, 2, 'amount')).toThrow('does not fit decimal(10, 2)');
    expect(() => parseDecimalText('1.2.3', 10, 2, 'amount')).toThrow('is not a decimal number');
  });
});

describe('jsonToValue', () => {
  it('keeps longs and decimals exact beyond 2^53 through one parse', () => {
    const parsed = parseJsonBytes(
      enc('{"id": 9007199254740993, "amount": 12345678901234567.89, "small": 5}'),
    ) as Record<string, unknown>;
    expect(jsonToValue('long', parsed.id, 'id')).toBe(9007199254740993n);
    expect(jsonToValue('decimal(38, 2)', parsed.amount, 'amount')).toBe(1234567890123456789n);
    expect(jsonToValue('long', parsed.small, 'small')).toBe(5n);
  });

  it('converts every primitive type', () => {
    expect(jsonToValue('boolean', true, 'b')).toBe(true);
    expect(jsonToValue('int', 42, 'i')).toBe(42);
    expect(jsonToValue('float', 1.5, 'f')).toBe(1.5);
    expect(jsonToValue('double', 'NaN', 'd')).toBeNaN();
    expect(jsonToValue('date', '2017-11-16', 'd')).toBe(17486);
    expect(jsonToValue('date', 1510790400000, 'd')).toBe(17486);
    expect(jsonToValue('time', '22:31:08', 't')).toBe(81068000000n);
    expect(jsonToValue('timestamptz', 1510871468000, 't')).toBe(1510871468000000n);
    expect(jsonToValue('timestamp', '2017-11-16T22:31:08', 't')).toBe(1510871468000000n);
    expect(jsonToValue('string', 'x', 's')).toBe('x');
    expect(jsonToValue('uuid', 'F79C3E09-677C-4BBD-A479-3F349CB785E7', 'u')).toBe(
      'f79c3e09-677c-4bbd-a479-3f349cb785e7',
    );
    expect(jsonToValue('binary', 'AAEC', 'b')).toEqual(Uint8Array.of(0, 1, 2));
    expect(jsonToValue('fixed[3]', 'AAEC', 'b')).toEqual(Uint8Array.of(0, 1, 2));
  });

  it.each([
    ['int', 2 ** 31, 'out of range for an int'],
    ['int', 1.5, 'expected an integer'],
    ['long', '12', 'expected an integer'],
    ['long', 9.3e18, 'out of range for a long'],
    ['boolean', 'true', 'expected a boolean'],
    ['string', 5, 'expected a string'],
    ['float', 1e39, 'overflows a float'],
    ['uuid', 'nope', 'is not a uuid'],
    ['fixed[4]', 'AAEC', 'expected 4 bytes'],
    ['timestamptz', 'soon', 'is not an ISO-8601 timestamp'],
    ['date', '2026-02-30', 'is not a valid date'],
  ] as const)('refuses %s from %j', (type, value, message) => {
    expect(() => jsonToValue(type, value, 'f')).toThrow(RecordDecodeError);
    expect(() => jsonToValue(type, value, 'f')).toThrow(message);
  });

  it('maps nested structs, lists and maps, and names the failing path', () => {
    const type: StructType = {
      type: 'struct',
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
        {
          id: 5,
          name: 'tags',
          required: false,
          type: {
            type: 'map',
            'key-id': 6,
            key: 'string',
            'value-id': 7,
            value: 'long',
            'value-required': false,
          },
        },
      ],
    };
    expect(jsonToRow(type, { id: 1, lines: [{ qty: 2 }], tags: { a: 1 }, extra: 'ignored' })).toEqual({
      id: 1n,
      lines: [{ qty: 2 }],
      tags: new Map([['a', 1n]]),
    });
    expect(() => jsonToRow(type, { id: 1, lines: [{ qty: 2 }, { qty: 'x' }] })).toThrow(
      'lines[1].qty: expected an integer',
    );
    expect(() => jsonToRow(type, { lines: [] })).toThrow('id: is required but missing or null');
  });

  it('refuses values nested deeper than 64 levels', () => {
    let type: StructType = { type: 'struct', fields: [{ id: 1, name: 'x', required: false, type: 'int' }] };
    let value: Record<string, unknown> = { x: 1 };
    for (let i = 0; i < 70; i++) {
      type = { type: 'struct', fields: [{ id: i + 2, name: 'n', required: false, type }] };
      value = { n: value };
    }
    expect(() => jsonToRow(type, value)).toThrow('nested deeper than 64 levels');
  });
});

describe('parseJsonBytes', () => {
  it('reports invalid UTF-8 and invalid JSON as decode errors', () => {
    expect(() => parseJsonBytes(Uint8Array.of(0x7b, 0xff, 0x7d))).toThrow('value is not valid UTF-8');
    expect(() => parseJsonBytes(enc('{"a":'))).toThrow('value is not valid JSON');
  });
});
