/**
 * One JSON parse per record. JSON.parse rounds numbers to doubles; when the text holds a number
 * token long enough to be rounded (16+ characters) or with an exponent that may under- or overflow,
 * the record is parsed with a reviver that keeps the exact text (Node 22's `JSON.parse` source access), so longs and decimals stay exact.
 * The common case pays for one plain native parse and one regex scan.
 */
import { isUtf8 } from 'node:buffer';
import { RecordDecodeError } from '../errors.js';
import { JsonNumberText } from './json-to-value.js';

const LONG_NUMBER = /[\d.][\d.eE+-]{15,}/;
/**
 * A number token with an exponent of 3+ digits: the only short tokens whose double is not their value
 * (`123e-400` underflows to 0, `1e400` overflows to Infinity). Anchored on what may precede a value
 * so that hex text in strings (`"123e4567-…"`) does not send a record to the reviver.
 */
const EXTREME_EXPONENT = /(?:^|[:,[])\s*-?[\d.]+[eE][+-]?\d{3}/;
/** A nonzero digit before the exponent: the token is not zero, whatever its double says. */
const NONZERO_MANTISSA = /^-?[0.]*[1-9]/;

interface ReviverContext {
  source?: string;
}

function keepExactNumbers(this: unknown, _key: string, value: unknown, context?: ReviverContext): unknown {
  if (typeof value !== 'number' || context?.source === undefined) return value;
  const source = context.source;
  // Too long for a double, or under/overflowed by one: the text is the value (a decimal column then
  // refuses 123e-400 rather than store 0.00; a double column refuses 1e400 rather than store Infinity).
  if (source.length >= 16 || !Number.isFinite(value) || (value === 0 && NONZERO_MANTISSA.test(source))) {
    return new JsonNumberText(source);
  }
  return value;
}

/** The JSON text of UTF-8 bytes (without a byte-order mark), or undefined when they are not UTF-8. */
export function jsonTextOf(bytes: Uint8Array): string | undefined {
  // isUtf8 + toString: the same strictness as a fatal TextDecoder, at a fraction of its per-call cost.
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!isUtf8(buf)) return undefined;
  const text = buf.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text; // a byte-order mark, as TextDecoder drops it
}

/** @throws RecordDecodeError (stage decode) for invalid UTF-8 or JSON */
export function parseJsonBytes(bytes: Uint8Array, what = 'value'): unknown {
  const text = jsonTextOf(bytes);
  if (text === undefined) throw new RecordDecodeError(`${what} is not valid UTF-8`, 'decode');
  try {
    if (LONG_NUMBER.test(text) || EXTREME_EXPONENT.test(text))
      return JSON.parse(text, keepExactNumbers as (k: string, v: unknown) => unknown);
    return JSON.parse(text);
  } catch (error) {
    throw new RecordDecodeError(`${what} is not valid JSON: ${(error as Error).message}`, 'decode');
  }
}
