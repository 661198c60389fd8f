/**
 * Header decoding in esm-event.ts copies each byte array in one pass; this checks it against the former
 * two-pass code (`every`, then `Uint8Array.from`), copied below, on generated headers.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { decodeEsmEvent, type KafkaHeader } from '../../../functions/core/records/esm-event.js';

/**
 * The former decodeHeaders of esm-event.ts, unchanged but for a null value, which is null now (it
 * was an empty byte string; Kafka keeps a null header value distinct from an empty one).
 */
function oldDecodeHeaders(raw: unknown): KafkaHeader[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new ValidationError('headers must be an array');
  const out: KafkaHeader[] = [];
  for (const h of raw) {
    if (h === null || typeof h !== 'object' || Array.isArray(h)) {
      throw new ValidationError('each header must be an object { name: [bytes] }');
    }
    for (const [key, value] of Object.entries(h as Record<string, unknown>)) {
      if (value === null) {
        out.push({ key, value: null });
        continue;
      }
      if (!Array.isArray(value) || !value.every((b) => Number.isInteger(b) && b >= -128 && b <= 255)) {
        throw new ValidationError(`header '${key}' is not an array of bytes`);
      }
      out.push({ key, value: Uint8Array.from(value as number[], (b) => b & 0xff) });
    }
  }
  return out;
}

/** [a, <hole>, b] */
function sparse(a: number, b: number): number[] {
  const out = new Array<number>(3);
  out[0] = a;
  out[2] = b;
  return out;
}

/** The headers and decodeError decodeEsmEvent gives one record carrying `headers`. */
function decodeWith(headers: unknown): { headers: KafkaHeader[]; decodeError?: string } {
  const record = { topic: 't', partition: 0, offset: 1, timestamp: 1, timestampType: 'CREATE_TIME', headers };
  const [r] = decodeEsmEvent({ eventSource: 'aws:kafka', records: { 't-0': [record] } }).records;
  return { headers: r.headers, decodeError: r.decodeError };
}

function expected(headers: unknown): { headers: KafkaHeader[]; decodeError?: string } {
  try {
    return { headers: oldDecodeHeaders(headers), decodeError: undefined };
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return { headers: [], decodeError: (error as Error).message };
  }
}

const byteLike = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: -128, max: 255 }) },
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(-129, 256, -0, 0.5, -1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53),
  fc.double(),
  fc.constantFrom<unknown>('1', null, undefined, true, [1], {}, 1n),
);

const headerValue = fc.oneof(
  { weight: 6, arbitrary: fc.array(fc.integer({ min: -128, max: 255 }), { maxLength: 40 }) },
  { weight: 3, arbitrary: fc.array(byteLike, { maxLength: 12 }) },
  fc.sparseArray(fc.integer({ min: -128, max: 255 }), { maxLength: 12 }),
  fc.sparseArray(byteLike, { maxLength: 12 }),
  fc.constantFrom<unknown>(null, 'bytes', 7, {}, undefined),
);

const headerList = fc.oneof(
  { weight: 8, arbitrary: fc.array(fc.dictionary(fc.string({ maxLength: 6 }), headerValue, { maxKeys: 3 })) },
  fc.array(
    fc.oneof(fc.dictionary(fc.string({ maxLength: 4 }), headerValue), fc.constantFrom<unknown>(null, [], 3)),
  ),
  fc.constantFrom<unknown>(undefined, null, 'nope', {}, 5),
);

describe('decodeEsmEvent headers', () => {
  it('decode exactly as the former two-pass code, errors included', () => {
    fc.assert(
      fc.property(headerList, (headers) => {
        expect(decodeWith(headers)).toEqual(expected(headers));
      }),
      { numRuns: 3000 },
    );
  });

  it.each<[string, unknown, Uint8Array | string | null]>([
    [
      'signed and unsigned bytes',
      [{ h: [-128, -1, 0, 127, 128, 255] }],
      Uint8Array.of(128, 255, 0, 127, 128, 255),
    ],
    ['null as null, not empty', [{ h: null }], null],
    ['empty as empty', [{ h: [] }], new Uint8Array(0)],
    ['-0 as 0', [{ h: [-0] }], Uint8Array.of(0)],
    ['holes of a sparse array as 0', [{ h: sparse(1, 3) }], Uint8Array.of(1, 0, 3)],
    ['an explicit undefined', [{ h: [1, undefined] }], "header 'h' is not an array of bytes"],
    ['256', [{ h: [256] }], "header 'h' is not an array of bytes"],
    ['-129', [{ h: [-129] }], "header 'h' is not an array of bytes"],
    ['1.5', [{ h: [1.5] }], "header 'h' is not an array of bytes"],
    ['a numeric string', [{ h: ['1'] }], "header 'h' is not an array of bytes"],
    ['a header that is an array', [[1, 2]], 'each header must be an object { name: [bytes] }'],
  ])('%s', (_, headers, want) => {
    const got = decodeWith(headers);
    expect(got).toEqual(expected(headers));
    if (typeof want === 'string') expect(got.decodeError).toBe(want);
    else expect(got.headers[0].value).toEqual(want);
  });
});
