import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatReplayValue } from '../../../functions/cli/commands/replay.js';
import { main } from '../../../functions/cli/main.js';
import type { StructType } from '../../../functions/core/spec/types.js';

describe('floe replay value', () => {
  it('is the row without _kafka as exact JSON: longs past 2^53, decimals, bytes, timestamps', () => {
    // Prepare
    const schema: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'amount', required: false, type: 'decimal(38,10)' },
        { id: 3, name: 'raw', required: false, type: 'binary' },
        { id: 4, name: 'at', required: false, type: 'timestamptz' },
        { id: 5, name: '_kafka', required: false, type: { type: 'struct', fields: [] } },
      ],
    };
    // Act
    const value = formatReplayValue(schema)({
      id: 9_223_372_036_854_775_807n,
      amount: 12_345_678_901_234_567_890_123n,
      raw: new Uint8Array([0, 255]),
      at: 1_767_323_045_000_001n,
      _kafka: {},
    });
    // Assess
    expect(Buffer.from(value).toString()).toBe(
      '{"id":9223372036854775807,"amount":"1234567890123.4567890123","raw":"AP8=","at":"2026-01-02T03:04:05.000001Z"}',
    );
  });

  it("is the record's original bytes when the table kept them (_kafka.value), else the JSON", () => {
    // Prepare
    const schema: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        {
          id: 2,
          name: '_kafka',
          required: false,
          type: { type: 'struct', fields: [{ id: 3, name: 'value', required: false, type: 'binary' }] },
        },
      ],
    };
    const format = formatReplayValue(schema);
    // Act
    const kept = format({ id: 1n, _kafka: { value: new Uint8Array([0xff, 0x00, 0x7b]) } });
    const before = format({ id: 2n, _kafka: { value: null } });
    // Assess
    expect(Buffer.from(kept)).toEqual(Buffer.from([0xff, 0x00, 0x7b]));
    expect(Buffer.from(before).toString()).toBe('{"id":2}');
  });
});

describe('floe replay flags', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each([
    [['--table', 'a.b', '--to-topic', 'out'], /--bootstrap-servers is required/],
    [['--bootstrap-servers', 'h:1', '--table', 'a.b'], /--to-topic is required/],
    [
      ['--bootstrap-servers', 'h:1', '--table', 'a.b', '--to-topic', 'o', '--partitioning', 'round'],
      /same or key/,
    ],
    [
      [
        '--bootstrap-servers',
        'h:1',
        '--table',
        'a.b',
        '--to-topic',
        'o',
        '--from-offsets',
        '0:1',
        '--from-time',
        '2026-01-01T00:00:00Z',
      ],
      /not both/,
    ],
    [
      ['--bootstrap-servers', 'h:1', '--table', 'a.b', '--to-topic', 'o', '--from-offsets', '0=1'],
      /PARTITION:OFFSET/,
    ],
    [
      ['--bootstrap-servers', 'h:1', '--table', 'a.b', '--to-topic', 'o', '--follow', '--where', 'id > 1'],
      /--follow/,
    ],
    [
      ['--bootstrap-servers', 'h:1', '--table', 'a.b', '--to-topic', 'o', '--to-time', 'yesterday'],
      /ISO-8601/,
    ],
  ])('%j is a usage error', async (args, message) => {
    // Prepare
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    // Act
    const code = await main(['replay', '--warehouse', '/nonexistent', ...args]);
    // Assess
    expect(code).toBe(2);
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toMatch(message);
  });
});
