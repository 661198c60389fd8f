/**
 * Settings (a route and its mapping, format and aggregate) are checked against their TypeBox schema,
 * which is JSON Schema itself (routing/routes.schema.json is generated from it). TypeBox finds every
 * problem with its JSON Pointer; what it does not do is say it in a user's words, so this file turns
 * each into `routes[0].partitionBy: expected a string, got 5`: the path as the user wrote it, what the
 * schema expects (read from the schema, so the text cannot drift from the check), and what came.
 */
import { type TLiteral, type TProperties, type TSchema, type TUnion, Type } from '@sinclair/typebox';
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import { RouteConfigError } from './errors.js';
import { redact } from './redact.js';

type Json = Record<string, unknown>;

/**
 * An object of settings: every key it may have is listed, any other is refused (a typo or a setting
 * floe does not have is never ignored).
 */
export function Settings<T extends TProperties>(
  properties: T,
  options: { description?: string; expected?: string } = {},
) {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/** One of a list of names (JSON Schema `anyOf` of `const`s, which editors offer as completions). */
export function OneOf<const T extends readonly string[]>(values: T): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(values.map((v) => Type.Literal(v)));
}

/**
 * A string with something in it (names, paths, URLs). `expected` (floe's own keyword, left out of
 * routes.schema.json) says in messages what the generated "a non-empty string" would not.
 */
export const NonEmptyString = (options: { description?: string; expected?: string } = {}) =>
  Type.String({ minLength: 1, ...options });

/** Settings whose value is a credential: a message names its type, never repeats it. */
const SECRET_SETTING = /basic|bearer|token|secret|password|credential/i;

/** A JSON value as a message shows it: short, `nothing` for a missing one, a credential by its type. */
function shown(value: unknown, pointer: string): string {
  if (value === undefined) return 'nothing';
  if (SECRET_SETTING.test(pointer.split('/').at(-1) ?? '')) return `a value of type ${jsonTypeOf(value)}`;
  const text = redact(JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function range(schema: Json, noun: string): string {
  const { minimum: min, maximum: max } = schema;
  const safe = max === Number.MAX_SAFE_INTEGER;
  if (min !== undefined && max !== undefined && !safe) return `${noun} from ${min} to ${max}`;
  if (min === 1 && noun === 'an integer') return 'a positive integer';
  if (min !== undefined) return `${noun} ≥ ${min}`;
  if (max !== undefined && !safe) return `${noun} ≤ ${max}`;
  return noun;
}

function objectKeys(schema: Json): string[] {
  return Object.keys((schema.properties as Json | undefined) ?? {});
}

/** What a schema accepts, in words (`one of append, debezium, upsert`, `a non-empty string`). */
export function describeSchema(schema: TSchema): string {
  const s = schema as Json;
  if (typeof s.expected === 'string') return s.expected;
  if (Array.isArray(s.anyOf)) {
    const variants = s.anyOf as Json[];
    if (variants.every((v) => v.const !== undefined && typeof v.const === 'string')) {
      return `one of ${variants.map((v) => v.const).join(', ')}`;
    }
    return variants.map((v) => describeSchema(v as TSchema)).join(' or ');
  }
  if (s.const !== undefined) return JSON.stringify(s.const);
  switch (s.type) {
    case 'string':
      if (s.pattern !== undefined) return `a string matching /${s.pattern}/`;
      return s.minLength === 1 ? 'a non-empty string' : 'a string';
    case 'integer':
      return range(s, 'an integer');
    case 'number':
      return range(s, 'a number');
    case 'boolean':
      return 'true or false';
    case 'array': {
      const each = describeSchema(s.items as TSchema);
      return `${s.minItems === 1 ? 'a non-empty array' : 'an array'}, each ${each}`;
    }
    case 'object': {
      const values = Object.values((s.patternProperties as Json | undefined) ?? {})[0];
      if (values !== undefined) return `an object whose values are each ${describeSchema(values as TSchema)}`;
      const keys = objectKeys(s);
      return keys.length === 0 ? 'an object' : `an object { ${keys.join(', ')} }`;
    }
    default:
      return 'a value';
  }
}

/**
 * The edit distance of two short names (for "did you mean"): a dozen lines over setting names of a few
 * letters, not worth a dependency.
 */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      const cost = a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + cost);
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The allowed name closest to a typo, when it is close enough to be the one meant. */
export function nearestName(name: string, allowed: readonly string[]): string | undefined {
  let best: string | undefined;
  // A short name is one edit from many; a longer one may lose a few letters and still be clear.
  let bestDistance = (name.length < 5 ? 1 : Math.max(3, Math.floor(name.length / 3))) + 1;
  for (const candidate of allowed) {
    const d = distance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/** `/0/mapping/columns/a.b` (a JSON Pointer into `root`) → `[0].mapping.columns.a.b`. */
function pathOf(pointer: string, root: unknown): string {
  let at: unknown = root;
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    out += Array.isArray(at) ? `[${key}]` : `.${key}`;
    at = at !== null && typeof at === 'object' ? (at as Json)[key] : undefined;
  }
  return out;
}

/** The user's path of a problem: `prefix` (where the value sits) and the way into it. */
function where(prefix: string, pointer: string, root: unknown): string {
  const path = `${prefix}${pathOf(pointer, root)}`;
  return path.startsWith('.') ? path.slice(1) : path;
}

interface Problem {
  pointer: string;
  text: string;
  /** How far the value is from this reading: picks the variant of a union the user meant. */
  weight: number;
}

function problemOf(error: ValueError, prefix: string, root: unknown): Problem[] {
  const at = where(prefix, error.path, root);
  switch (error.type) {
    case ValueErrorType.Union:
      return unionProblems(error, prefix, root);
    case ValueErrorType.ObjectAdditionalProperties: {
      const key = error.path.split('/').at(-1)!.replaceAll('~1', '/').replaceAll('~0', '~');
      const allowed = objectKeys(error.schema as Json);
      const near = nearestName(key, allowed);
      const hint = near === undefined ? '' : ` (did you mean '${near}'?)`;
      const text = `${at}: unknown setting${hint}; allowed: ${allowed.join(', ')}`;
      return [{ pointer: error.path, text, weight: 10 }];
    }
    case ValueErrorType.ObjectRequiredProperty:
      return [
        {
          pointer: error.path,
          text: `${at}: missing; expected ${describeSchema(error.schema)}`,
          weight: 10,
        },
      ];
    default: {
      const text = `${at}: expected ${describeSchema(error.schema)}, got ${shown(error.value, error.path)}`;
      return [{ pointer: error.path, text, weight: 1 }];
    }
  }
}

/** The type of a JSON value as JSON Schema names it. */
function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function accepts(variant: Json, value: unknown): boolean {
  const type = jsonTypeOf(value);
  // A wrong name is best told as the whole list ("one of ..."), not as the first name it is not.
  if (variant.const !== undefined) return false;
  return variant.type === type || (variant.type === 'number' && type === 'integer');
}

/**
 * A value none of a union's variants takes: the problems of the variant of the value's own type that
 * is nearest (`{ "column": "k", "as": "int" }` for a key is a column key with a bad `as`, not a fields
 * key with two unknown settings); a value of no variant's type is one problem naming all of them.
 */
function unionProblems(error: ValueError, prefix: string, root: unknown): Problem[] {
  const variants = ((error.schema as Json).anyOf as Json[]) ?? [];
  let best: Problem[] | undefined;
  let bestWeight = Number.POSITIVE_INFINITY;
  error.errors.forEach((iterator, i) => {
    if (!accepts(variants[i] ?? {}, error.value)) return;
    const problems = [...iterator].flatMap((e) => problemOf(e, prefix, root));
    const weight = problems.reduce((sum, p) => sum + p.weight, 0);
    if (weight < bestWeight) [best, bestWeight] = [problems, weight];
  });
  if (best !== undefined && best.length > 0) return best;
  const at = where(prefix, error.path, root);
  const text = `${at}: expected ${describeSchema(error.schema)}, got ${shown(error.value, error.path)}`;
  return [{ pointer: error.path, text, weight: 1 }];
}

/**
 * Every problem of `value` against `schema`, one per setting, each prefixed by `path` (where the value
 * sits, e.g. `routes` or `routes[0].mapping`).
 */
export function settingsProblems(schema: TSchema, value: unknown, path: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const error of Value.Errors(schema, value)) {
    for (const problem of problemOf(error, path, value)) {
      // One problem per setting: a string both too short and off-pattern is one mistake.
      if (seen.has(problem.pointer)) continue;
      seen.add(problem.pointer);
      out.push(problem.text);
    }
  }
  return out;
}

/** One error listing every problem (a single one on one line). */
export function settingsError(problems: readonly string[]): RouteConfigError {
  if (problems.length === 1) return new RouteConfigError(problems[0]!);
  return new RouteConfigError(`${problems.length} problems:\n  ${problems.join('\n  ')}`);
}

/**
 * Refuses a setting the schema let through but floe cannot use (a check no schema can say: a SQL
 * query that does not parse, a column filled twice).
 * @throws RouteConfigError `path: message`
 */
export function refuseSetting(path: string, message: string): never {
  throw new RouteConfigError(`${path}: ${message}`);
}

/**
 * Checks `value` against `schema`, so code after it can trust the types.
 * @throws RouteConfigError listing every problem, each with its path (not retryable)
 */
export function checkSettings<T extends TSchema>(schema: T, value: unknown, path: string): void {
  const problems = settingsProblems(schema, value, path);
  if (problems.length > 0) throw settingsError(problems);
}
