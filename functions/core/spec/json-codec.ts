/**
 * Lossless JSON for Iceberg metadata and REST payloads. Iceberg Java draws snapshot ids from 63
 * random bits; JSON.parse would round them to doubles and a rounded id written back corrupts the
 * table's lineage. Integers beyond 2^53 therefore parse as `bigint` (through the reviver's
 * source-text access, Node ≥ 21) and every `bigint` serialises as an exact JSON number
 * (`JSON.rawJSON`, Node ≥ 21).
 */

interface RawJsonApi {
  rawJSON(text: string): unknown;
}

const rawJSON = (JSON as unknown as RawJsonApi).rawJSON;

/**
 * JSON.parse, with integers beyond 2^53 as exact bigints.
 *
 * The runtime's JSON.parse without a reviver is several times faster than with one (which is called for
 * every value, with its source text), and a table's metadata holds thousands of values but few such
 * integers (its snapshot ids). So: parse without a reviver, find the integer tokens of 16+ digits in the
 * text (outside strings), and put each one's exact value where the parse left its rounded double. When
 * that cannot be done unambiguously — two tokens rounding to the same double, a fraction or exponent
 * token rounding to one, a count that does not add up (a duplicate key) — the reviver parses the text.
 * @throws SyntaxError
 */
export function parseJsonLossless(text: string): unknown {
  const parsed: unknown = JSON.parse(text);
  if (!/\d{16}/.test(text)) return parsed; // 15 digits are always below 2^53
  const exact = bigIntegerTokens(text);
  if (exact === undefined) return parseWithReviver(text);
  if (exact.size === 0) return parsed;
  const put = { left: exact.tokens };
  const result = restore(parsed, exact.byValue, put);
  return put.left === 0 ? result : parseWithReviver(text);
}

/**
 * JSON.parse with integers beyond 2^53 as exact bigints, through the reviver's source text: exact, but
 * called back for every value. What parseJsonLossless falls back to (and is checked against).
 * @throws SyntaxError
 */
export function parseWithReviver(text: string): unknown {
  return JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' &&
    !Number.isSafeInteger(value) &&
    context?.source !== undefined &&
    /^-?\d+$/.test(context.source)
      ? BigInt(context.source)
      : value,
  );
}

/**
 * Where an integer beyond 2^53 may stand: a run of 16+ digits, or an exponent (`1e19`). Matches inside
 * strings are told apart by the quotes before them. (Written digit by digit: irregexp scans that several
 * times faster than `\d{15,}`.)
 */
const CANDIDATES = /-?[1-9]\d\d\d\d\d\d\d\d\d\d\d\d\d\d\d+|\d[eE]/g;
/** What may stand before a JSON value. */
const BEFORE_VALUE = new Set([undefined, '[', ':', ',', ' ', '\n', '\r', '\t']);

interface BigTokens {
  /** Rounded double → the one integer token that rounds to it. */
  byValue: Map<number, bigint>;
  size: number;
  /** How many such tokens the text holds (each must be put back once). */
  tokens: number;
}

/**
 * The integer tokens beyond 2^53 outside strings of a text JSON.parse accepted; undefined when they
 * cannot be put back unambiguously (or a number with an exponent, or a huge one with a fraction, might
 * round like one of them).
 */
function bigIntegerTokens(text: string): BigTokens | undefined {
  const byValue = new Map<number, bigint>();
  let tokens = 0;
  let inString = false;
  let quote = text.indexOf('"');
  for (const match of text.matchAll(CANDIDATES)) {
    const at = match.index;
    // Every quote before the match opens or closes a string, but an escaped one inside a string.
    while (quote !== -1 && quote < at) {
      if (!inString || !escaped(text, quote)) inString = !inString;
      quote = text.indexOf('"', quote + 1);
    }
    if (inString) continue;
    const token = match[0];
    if (token.length === 2) return undefined; // an exponent
    if (!BEFORE_VALUE.has(text[at - 1])) continue; // the digits after a number's decimal point
    const after = text[at + token.length];
    if (after === '.' || after === 'e' || after === 'E') return undefined;
    const value = Number(token);
    if (Number.isSafeInteger(value)) continue;
    const exact = BigInt(token);
    const known = byValue.get(value);
    if (known !== undefined && known !== exact) return undefined;
    byValue.set(value, exact);
    tokens++;
  }
  return { byValue, size: byValue.size, tokens };
}

/** Whether the quote at `at` is escaped (an odd run of backslashes before it). */
function escaped(text: string, at: number): boolean {
  let n = 0;
  while (text.charCodeAt(at - 1 - n) === 0x5c) n++;
  return n % 2 === 1;
}

/** Replaces each rounded double of `byValue` with its exact bigint; `put.left` counts down. */
function restore(value: unknown, byValue: Map<number, bigint>, put: { left: number }): unknown {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) || !Number.isInteger(value)) return value;
    const exact = byValue.get(value);
    if (exact === undefined) return value;
    put.left--;
    return exact;
  }
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (typeof v === 'number' || typeof v === 'object') value[i] = restore(v, byValue, put);
    }
    return value;
  }
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    const v = obj[key];
    if (typeof v === 'number' || typeof v === 'object') {
      const r = restore(v, byValue, put);
      if (r !== v) obj[key] = r;
    }
  }
  return obj;
}

/** JSON.stringify writing bigints as exact JSON numbers. */
export function stringifyJson(value: unknown, space?: number): string {
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? rawJSON(v.toString()) : v), space);
}
