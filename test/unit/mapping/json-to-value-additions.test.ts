/** What mapping needed from json-to-value: typed decoder values, and refusals that used to slip through. */
import { describe, expect, it } from 'vitest';
import { RecordDecodeError } from '../../../functions/core/errors.js';
import { jsonToValue } from '../../../functions/core/records/json-to-value.js';
import { parseJsonBytes } from '../../../functions/core/records/parse-json.js';

describe('jsonToValue additions', () => {
  it('takes bigints and bytes as decoders of typed formats hand them over', () => {
    expect(jsonToValue('long', 2n ** 62n, 'x')).toBe(2n ** 62n);
    expect(jsonToValue('int', 5n, 'x')).toBe(5);
    expect(jsonToValue('decimal(20, 2)', 12n, 'x')).toBe(1200n);
    expect(jsonToValue('timestamptz', 1000n, 'x')).toBe(1_000_000n);
    expect(jsonToValue('binary', Uint8Array.of(1, 2), 'x')).toEqual(Uint8Array.of(1, 2));
    expect(jsonToValue('fixed[2]', Uint8Array.of(1, 2), 'x')).toEqual(Uint8Array.of(1, 2));
  });

  it.each([
    ['long', 1e21, 'x: 1e+21 is out of range for a long'],
    ['long', 2n ** 63n, 'out of range for a long'],
    ['timestamptz', '+999999-01-01T00:00:00Z', "'+999999-01-01T00:00:00Z' is out of the timestamp range"],
    ['string', JSON.parse('"a\\ud800b"'), 'unpaired UTF-16 surrogate'],
    ['fixed[3]', Uint8Array.of(1), 'expected 3 bytes'],
  ] as const)('refuses %s from %s', (type, value, message) => {
    expect(() => jsonToValue(type, value, 'x')).toThrow(RecordDecodeError);
    expect(() => jsonToValue(type, value, 'x')).toThrow(message);
  });

  it('keeps well-formed text with astral characters', () => {
    const v = parseJsonBytes(new TextEncoder().encode('"😀 \\ud83d\\ude00"'));
    expect(jsonToValue('string', v, 'x')).toBe('😀 😀');
  });
});
