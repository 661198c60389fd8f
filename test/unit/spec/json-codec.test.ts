import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parseJsonLossless,
  parseWithReviver,
  stringifyJson,
} from '../../../functions/core/spec/json-codec.js';

/** What parseJsonLossless has always given: the reviver with source text, integers past 2^53 as bigints. */
const reference = parseWithReviver;

const bigId = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
/** Strings that look like the numbers around them: digits, quotes, backslashes, delimiters. */
const trickyString = fc
  .array(
    fc.oneof(
      fc.constantFrom('"', '\\', ',', ':', ' ', '[', ']', '{', '}', '-', '.', 'e', '\\"'),
      bigId.map(String),
      fc.string({ maxLength: 4 }),
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join(''));

const leaf = fc.oneof(
  bigId,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(1e19, -1.5e300, 2 ** 60, 2 ** 53 + 2),
  trickyString,
  fc.boolean(),
  fc.constant(null),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(fc.oneof(trickyString, fc.constantFrom('0', '10', '__proto__')), tie('value'), {
    maxKeys: 5,
  }),
})).value;

const parsesLikeTheReviver = (text: string) => expect(parseJsonLossless(text)).toEqual(reference(text));

describe('parseJsonLossless', () => {
  it('gives what the source-text reviver gives, on documents of ids, numbers and look-alike strings', () => {
    fc.assert(
      fc.property(json, fc.constantFrom(undefined, 2), (value, space) => {
        parsesLikeTheReviver(stringifyJson(value, space));
      }),
      { numRuns: 400 },
    );
  });

  it('keeps 64-bit ids exact wherever they stand', () => {
    const text =
      '{"snapshot-id":3211351389039909707,"ids":[-9223372036854775808, 9223372036854775807 ],' +
      '"nested":{"a":{"b":[[2860938565224700221]]}},"path":"snap-3211351389039909707-1.avro"}';
    expect(parseJsonLossless(text)).toEqual({
      'snapshot-id': 3211351389039909707n,
      ids: [-(2n ** 63n), 2n ** 63n - 1n],
      nested: { a: { b: [[2860938565224700221n]] } },
      path: 'snap-3211351389039909707-1.avro',
    });
  });

  it('tells ids apart that round to the same double, and keeps a fraction or exponent a number', () => {
    for (const text of [
      '[9007199254740993, 9007199254740992]', // both round to 2^53
      '{"a": 9007199254740993, "b": 9007199254740993.0}',
      '{"a": 10000000000000000000, "b": 1e19}',
      '{"a": 12345678901234567890, "a": 12345678901234567891}', // a duplicate key: the last wins
      '["x\\" 12345678901234567890 ", 12345678901234567891]', // an escaped quote before the digits
      '["x\\\\", 12345678901234567890]', // an escaped backslash, then the string ends
      '[0.12345678901234567, 12345678901234567890]', // 17 digits after a decimal point
      '[12345678901234567890.5, 12345678901234567890]', // a huge number with a fraction
      '[1e19, 10000000000000000000, -2.5E+30]',
      '{"uuid": "5e7 12345678901234567890", "id": 12345678901234567891}',
    ]) {
      parsesLikeTheReviver(text);
    }
    expect(parseJsonLossless('[9007199254740993, 9007199254740992]')).toEqual([2n ** 53n + 1n, 2n ** 53n]);
  });

  it('throws the runtime SyntaxError on malformed text', () => {
    for (const text of ['{"a": 12345678901234567890', '[012345678901234567890]', '"abc', '']) {
      expect(() => parseJsonLossless(text)).toThrow(SyntaxError);
    }
  });
});
