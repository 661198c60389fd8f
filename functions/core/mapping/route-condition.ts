/**
 * Route conditions: one topic → several tables by a field of the value or a header. A route with a
 * `when` takes only the records it matches:
 *
 *   { "field": "type", "equals": "order" }          // dotted path into the decoded value
 *   { "field": "type", "in": ["order", "refund"] }
 *   { "field": "deleted_at", "exists": false }      // missing or null
 *   { "header": "entity", "equals": "order" }       // header value as UTF-8 text
 *   { "all": [c1, c2] } | { "any": [c1, c2] } | { "not": c }
 *
 * Numbers compare by value (5, 5.0 and an exact long text are equal); strings, booleans and null
 * compare exactly. A value that is not an object (or could not be decoded) has no fields: field
 * conditions are false for it, header conditions still work.
 */
import { refuseSetting as fail } from '../check-settings.js';
import { JsonNumberText } from '../records/json-to-value.js';
import type { DecodedRecord } from './decoded-record.js';
import { getAt, isFieldObject, splitPath } from './value-paths.js';

export type Scalar = string | number | boolean | null;

export type RouteCondition =
  | { field: string; equals: Scalar }
  | { field: string; in: Scalar[] }
  | { field: string; exists: boolean }
  | { header: string; equals: string }
  | { header: string; in: string[] }
  | { header: string; exists: boolean }
  | { all: RouteCondition[] }
  | { any: RouteCondition[] }
  | { not: RouteCondition };

function isScalar(v: unknown): v is Scalar {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

/**
 * Reads a condition from JSON (a route's `when`).
 * @throws RouteConfigError (a ValidationError) naming the path of the first problem
 */
export function parseRouteCondition(json: unknown, path = 'when'): RouteCondition {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) fail(path, 'must be an object');
  const c = json as Record<string, unknown>;
  const keys = Object.keys(c).sort();
  const only = (...allowed: string[]) => {
    for (const k of keys)
      if (!allowed.includes(k)) fail(`${path}.${k}`, `unexpected here (allowed: ${allowed.join(', ')})`);
  };
  if ('all' in c || 'any' in c) {
    const op = 'all' in c ? 'all' : 'any';
    only(op);
    const list = c[op];
    if (!Array.isArray(list) || list.length === 0)
      fail(`${path}.${op}`, 'must be a non-empty array of conditions');
    const parsed = list.map((x, i) => parseRouteCondition(x, `${path}.${op}[${i}]`));
    return op === 'all' ? { all: parsed } : { any: parsed };
  }
  if ('not' in c) {
    only('not');
    return { not: parseRouteCondition(c.not, `${path}.not`) };
  }
  const subject = 'field' in c ? 'field' : 'header' in c ? 'header' : undefined;
  if (!subject) fail(path, 'needs "field" or "header" (or all/any/not)');
  const name = c[subject];
  if (
    typeof name !== 'string' ||
    name === '' ||
    (subject === 'field' && name.split('.').some((s) => s === ''))
  ) {
    fail(`${path}.${subject}`, subject === 'field' ? 'must be a dotted field path' : 'must be a header name');
  }
  const tests = ['equals', 'in', 'exists'].filter((t) => t in c);
  if (tests.length !== 1) fail(path, 'needs exactly one of "equals", "in", "exists"');
  only(subject, tests[0]);
  const text = subject === 'header';
  const check = (v: unknown, p: string): Scalar => {
    if (text ? typeof v !== 'string' : !isScalar(v)) {
      fail(
        p,
        text ? 'header values compare as text: give a string' : 'must be a string, number, boolean or null',
      );
    }
    return v as Scalar;
  };
  if (tests[0] === 'exists') {
    if (typeof c.exists !== 'boolean') fail(`${path}.exists`, 'must be true or false');
    return subject === 'field' ? { field: name, exists: c.exists } : { header: name, exists: c.exists };
  }
  if (tests[0] === 'in') {
    if (!Array.isArray(c.in) || c.in.length === 0) fail(`${path}.in`, 'must be a non-empty array');
    const values = c.in.map((v, i) => check(v, `${path}.in[${i}]`));
    return subject === 'field' ? { field: name, in: values } : { header: name, in: values as string[] };
  }
  const value = check(c.equals, `${path}.equals`);
  return subject === 'field' ? { field: name, equals: value } : { header: name, equals: value as string };
}

function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof JsonNumberText) return Number(v.text);
  return undefined;
}

function scalarEquals(actual: unknown, expected: Scalar): boolean {
  if (typeof expected === 'number') {
    const n = numberOf(actual);
    if (n === undefined) return false;
    // Exact for integers beyond 2^53 too, when both sides are integers.
    if (Number.isInteger(expected) && (typeof actual === 'bigint' || actual instanceof JsonNumberText)) {
      const text = typeof actual === 'bigint' ? actual.toString() : actual.text;
      return /^-?\d+$/.test(text) && BigInt(text) === BigInt(expected);
    }
    return n === expected;
  }
  if (expected === null) return actual === null || actual === undefined;
  return actual === expected;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The last header's text; null for a null-valued header (as for a null field); undefined when absent. */
function headerText(decoded: DecodedRecord, name: string): string | null | undefined {
  let last: Uint8Array | null | undefined;
  for (const h of decoded.record.headers) if (h.key === name) last = h.value;
  if (last === undefined || last === null) return last;
  try {
    return utf8.decode(last);
  } catch {
    return undefined;
  }
}

/** Whether a record goes to a route with this condition (no condition: every record of its topics). */
export function routeMatches(condition: RouteCondition | undefined, decoded: DecodedRecord): boolean {
  if (condition === undefined) return true;
  if ('all' in condition) return condition.all.every((c) => routeMatches(c, decoded));
  if ('any' in condition) return condition.any.some((c) => routeMatches(c, decoded));
  if ('not' in condition) return !routeMatches(condition.not, decoded);
  let actual: unknown;
  if ('header' in condition) {
    actual = headerText(decoded, condition.header);
  } else {
    actual = isFieldObject(decoded.value) ? getAt(decoded.value, splitPath(condition.field)) : undefined;
  }
  if ('exists' in condition) return (actual !== undefined && actual !== null) === condition.exists;
  if ('in' in condition) return (condition.in as Scalar[]).some((e) => scalarEquals(actual, e));
  return scalarEquals(actual, condition.equals);
}
