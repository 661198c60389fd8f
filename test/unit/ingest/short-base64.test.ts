/**
 * The JS decoding of short base64 (records/short-base64.ts) against the native fast path it stands in
 * for: canonical length, Node's decode coming out at exactly that length, one alphabet. Same bytes for
 * what that path takes, -1 for everything else, on near-base64 text of every kind.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalBase64Length, mixesAlphabets } from '../../../functions/core/records/esm-columns.js';
import { decodeShortBase64 } from '../../../functions/core/records/short-base64.js';

/** What the native fast path makes of a text: its bytes, or -1. */
function native(text: string): number[] | -1 {
  const expected = canonicalBase64Length(text);
  if (expected < 0) return -1;
  const out = Buffer.alloc(expected);
  if (out.write(text, 0, expected, 'base64') !== expected || mixesAlphabets(text)) return -1;
  return [...out];
}

function shortJs(text: string): number[] | -1 {
  const out = new Uint8Array(text.length + 8).fill(0xaa);
  const n = decodeShortBase64(text, out, 3);
  return n < 0 ? -1 : [...out.subarray(3, 3 + n)];
}

const chars = fc.constantFrom(
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_',
  '=',
  '=',
  ' ',
  '\n',
  '.',
  'é',
  '€',
  '\u0000',
);

const nearBase64 = fc.oneof(
  fc.array(chars, { maxLength: 60 }).map((cs) => cs.join('')),
  fc.uint8Array({ maxLength: 45 }).map((b) => Buffer.from(b).toString('base64')),
  fc.uint8Array({ maxLength: 45 }).map((b) => Buffer.from(b).toString('base64url')),
  // A canonical text with one character changed or one inserted.
  fc
    .tuple(fc.uint8Array({ minLength: 1, maxLength: 45 }), fc.nat(), chars, fc.boolean())
    .map(([b, at, c, insert]) => {
      const t = Buffer.from(b).toString('base64');
      const i = at % t.length;
      return t.slice(0, i) + c + t.slice(insert ? i : i + 1);
    }),
  fc.constantFrom('', 'QQ==', 'QR==', 'QUI=', 'QUJ=', 'A===', '====', 'QQ=A', '+-AA', '/_AA', 'Zg==Zg=='),
);

describe('decodeShortBase64', () => {
  it('takes what the native fast path takes, with the same bytes, and refuses the rest', () => {
    fc.assert(
      fc.property(nearBase64, (text) => {
        expect(shortJs(text)).toEqual(native(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('ignores trailing bits as Node does, and refuses mixed alphabets', () => {
    expect(shortJs('QR==')).toEqual([0x41]);
    expect(shortJs('QUJ=')).toEqual([0x41, 0x42]);
    expect(shortJs('a+b_')).toBe(-1);
    expect(shortJs('a-b_')).toEqual([...Buffer.from('a-b_', 'base64url')]);
  });
});
