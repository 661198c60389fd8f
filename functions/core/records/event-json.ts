/**
 * Parsing of ESM events that floe reads as text itself (`floe ingest` of event files, `redrive-failed`'s
 * on-failure records). JSON.parse makes every number a double, which rounds an offset past 2^53 before
 * it can be checked (2^63−1 would read as 9223372036854776000). Here a number that is not a safe integer
 * is kept as its own text, as a `JSON.rawJSON` value (Node 22): esm-event.ts reads an offset exactly
 * from it, and `JSON.stringify` writes it back as given (a dead letter's `original`). Events whose text
 * holds no such number (every real one) take one plain native parse and one regex scan.
 * The Lambda runtime parses the events it hands the handler itself: there, such a number arrives
 * rounded, and esm-event.ts dead-letters it as unreadable.
 */

/** A `JSON.rawJSON` value: a number's JSON text, written back as is by JSON.stringify. */
export interface RawJson {
  readonly rawJSON: string;
}

/** Node 22's JSON source text access (not in TypeScript's ES2024 lib); absent before. */
interface JsonSourceAccess {
  rawJSON?(text: string): RawJson;
  isRawJSON?(value: unknown): boolean;
}

const access = JSON as JSON & JsonSourceAccess;

/** Whether a value is a number kept as its text by parseEventJson. */
export function isRawJson(value: unknown): value is RawJson {
  return typeof value === 'object' && value !== null && access.isRawJSON?.(value) === true;
}

/**
 * A number token that may not be a safe integer: a fraction, an exponent, or 16+ digits. Anchored on
 * what may precede a value; text inside strings may match too, which only costs the slower parse.
 */
const INEXACT_NUMBER = /(?:^|[:,[])\s*-?(?:\d{16}|\d+[.eE])/;

interface ReviverContext {
  source?: string;
}

function keepInexactNumbers(_key: string, value: unknown, context?: ReviverContext): unknown {
  if (typeof value !== 'number' || Number.isSafeInteger(value)) return value;
  const source = context?.source;
  return source === undefined || access.rawJSON === undefined ? value : access.rawJSON(source);
}

/**
 * Parses the JSON text of an ESM event (or of a document holding one), keeping every number that is
 * not a safe integer as its exact text (see the file comment).
 * @throws SyntaxError as JSON.parse, for text that is not JSON
 */
export function parseEventJson(text: string): unknown {
  if (!INEXACT_NUMBER.test(text)) return JSON.parse(text);
  return JSON.parse(text, keepInexactNumbers as (key: string, value: unknown) => unknown);
}
