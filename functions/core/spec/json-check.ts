/**
 * Small checks for reading spec JSON (schemas, specs, metadata.json) from `unknown`. Every failure is a
 * ValidationError that starts with the JSON path of the offending value (`schemas[0].fields[2].type`), so
 * a bad document points at its own problem.
 */
import { ValidationError } from '../errors.js';

export type JsonObject = Record<string, unknown>;

/** `base` + `key` as a JSON path: `a.b`, `a[3]`, or just `key` at the root. */
export function joinPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  return base === '' ? key : `${base}.${key}`;
}

/** @throws ValidationError naming `path` (or `document` at the root) */
export function fail(path: string, problem: string): never {
  throw new ValidationError(`${path === '' ? 'document' : path}: ${problem}`);
}

export function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

/** @throws ValidationError when `value` is not a plain JSON object */
export function expectObject(value: unknown, path: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(path, `expected an object, got ${describeJson(value)}`);
  }
  return value as JsonObject;
}

/** @throws ValidationError when `value` is not an array */
export function expectArray(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) fail(path, `expected an array, got ${describeJson(value)}`);
  return value;
}

/** @throws ValidationError when `value` is not a safe integer (≥ `min` when given) */
export function expectInteger(value: unknown, path: string, min?: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    fail(path, `expected an integer, got ${describeJson(value)}`);
  }
  if (min !== undefined && value < min) fail(path, `must be ≥ ${min}, got ${value}`);
  return value;
}

/** @throws ValidationError when `value` is not a string (non-empty when `nonEmpty`) */
export function expectString(value: unknown, path: string, nonEmpty = false): string {
  if (typeof value !== 'string') fail(path, `expected a string, got ${describeJson(value)}`);
  if (nonEmpty && value.length === 0) fail(path, 'must not be empty');
  return value;
}

/** @throws ValidationError when `value` is not a boolean */
export function expectBoolean(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') fail(path, `expected true or false, got ${describeJson(value)}`);
  return value;
}

/** The member `key` of `obj`, which must be present (not undefined). @throws ValidationError */
export function requireKey(obj: JsonObject, key: string, path: string): unknown {
  if (!(key in obj) || obj[key] === undefined) fail(joinPath(path, key), 'is required');
  return obj[key];
}
