import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { DEFAULT_MAPPING, parseMappingConfig } from '../../../functions/core/mapping/mapping-config.js';

describe('parseMappingConfig', () => {
  it('reads a full mapping', () => {
    const config = parseMappingConfig({
      flatten: { separator: '__' },
      exclude: ['debug'],
      key: { column: 'order_key', as: 'long', required: true },
      headers: [{ header: 'entity' }, { header: 'trace', column: 'trace_id', as: 'binary' }],
      timestamp: 'kafka_ts',
      columns: {
        order_ts: { from: 'created', type: 'timestamptz', format: 'dd/MM/yyyy HH:mm:ss', zone: '+01:00' },
        paid_at: { type: 'timestamptz', epoch: 'seconds' },
        amount: { type: 'decimal(12,2)' },
        status: { default: 'NEW' },
      },
    });
    expect(config.flatten).toEqual({ separator: '__', maxDepth: 16 });
    expect(config.key).toEqual({ kind: 'column', column: 'order_key', as: 'long', required: true });
    expect(config.headers).toEqual([
      { header: 'entity', column: 'entity', as: 'string', required: false },
      { header: 'trace', column: 'trace_id', as: 'binary', required: false },
    ]);
    expect(config.timestamp).toEqual({ column: 'kafka_ts' });
    const orderTs = config.columns.find((c) => c.column === 'order_ts')!;
    expect(orderTs.from).toBe('created');
    expect(orderTs.zoneMinutes).toBe(60);
    expect(orderTs.format?.pattern).toBe('dd/MM/yyyy HH:mm:ss');
    expect(config.columns.find((c) => c.column === 'paid_at')!.epoch).toBe('seconds');
    expect(config.columns.find((c) => c.column === 'amount')!.type).toBe('decimal(12,2)');
    expect(config.columns.find((c) => c.column === 'status')!.default).toBe('NEW');
  });

  it('gives the default mapping for nothing', () => {
    expect(parseMappingConfig(undefined)).toBe(DEFAULT_MAPPING);
    expect(parseMappingConfig({})).toEqual(DEFAULT_MAPPING);
  });

  it.each([
    [{ colums: {} }, 'mapping.colums: unknown setting'],
    [
      { key: { column: 'k', as: 'int' } },
      'mapping.key.as: expected one of string, binary, long, json, got "int"',
    ],
    [{ key: { fields: 'yes' } }, 'mapping.key.fields: expected true, got "yes"'],
    [
      { headers: { entity: 'string' } },
      'mapping.headers: expected an array, each an object { header, column, as, required }, got {"entity":"string"}',
    ],
    [
      { headers: [{ header: 'e', as: 'text' }] },
      'mapping.headers[0].as: expected one of string, binary, got "text"',
    ],
    [{ timestamp: { column: 'a.b' } }, "mapping.timestamp.column: 'a.b' must not contain '.'"],
    [
      { columns: { ts: { type: 'timestamptz', format: 'yyyy-QQ' } } },
      'mapping.columns.ts.format: timestamp format',
    ],
    [
      { columns: { ts: { type: 'string', format: 'yyyy-MM-dd' } } },
      'mapping.columns.ts.format: needs "type" to be timestamp',
    ],
    [
      { columns: { ts: { type: 'timestamp', format: "yyyy-MM-dd'T'HH:mmXXX" } } },
      'needs "type": "timestamptz"',
    ],
    [{ columns: { ts: { type: 'timestamptz', zone: 'Europe/Berlin' } } }, 'mapping.columns.ts.zone: zone'],
    [
      { columns: { ts: { type: 'timestamptz', epoch: 'hours' } } },
      'mapping.columns.ts.epoch: expected one of days, seconds, millis, micros, nanos, got "hours"',
    ],
    [{ columns: { ts: { type: 'date', epoch: 'millis', format: 'yyyy-MM-dd' } } }, 'either "format"'],
    [
      { columns: { t: { type: 'time', epoch: 'days' } } },
      'mapping.columns.t.epoch: must be one of seconds, millis, micros, nanos (since midnight, for a time)',
    ],
    [
      { columns: { n: { type: 'long', epoch: 'millis' } } },
      'needs "type" to be timestamp, timestamptz, date or time',
    ],
    [{ columns: { x: { type: 'strin' } } }, "mapping.columns.x.type: unknown type 'strin'"],
    [{ columns: { x: { type: 'decimal(40, 2)' } } }, 'decimal precision must be 1–38'],
    [{ columns: { x: { type: { type: 'list' } } } }, 'mapping.columns.x.type'],
    [{ columns: { x: { default: null } } }, 'mapping.columns.x.default: must not be null'],
    [{ columns: { x: { default: 2 ** 60 } } }, 'write them as a string'],
    [{ columns: { 'a..b': {} } }, 'mapping.columns.a..b: must be a dotted field path'],
    [{ flatten: true, columns: { 'a.b': {} } }, 'with "flatten", columns are top-level names'],
    [{ flatten: { separator: '.' } }, 'mapping.flatten.separator'],
    [{ value: { column: 'payload' }, flatten: true }, 'mapping.flatten: needs "value": "fields"'],
    [
      { key: { column: 'k' }, headers: [{ header: 'k' }] },
      "mapping.headers[0].column: column 'k' is already filled by mapping.key.column",
    ],
    [
      { timestamp: 'ts', columns: { ts: { type: 'long' } } },
      "mapping.columns.ts: column 'ts' is filled by mapping.timestamp.column",
    ],
    [
      { columns: { a: { from: 'x' }, b: { from: 'x' } } },
      "mapping.columns.b.from: 'x' is already moved to column 'a'",
    ],
    [{ exclude: ['meta'], columns: { a: { from: 'meta.id' } } }, "'meta.id' is excluded by mapping.exclude"],
  ])('refuses %j naming the path', (json, message) => {
    expect(() => parseMappingConfig(json)).toThrow(ValidationError);
    expect(() => parseMappingConfig(json)).toThrow(message);
  });
});
