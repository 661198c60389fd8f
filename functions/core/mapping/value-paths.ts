/**
 * Dotted paths (`shipping.city`) into decoded values. Paths go through objects only: list elements
 * are not addressed by a source path (a rule on a field inside list elements is a type rule, applied
 * by the row conversion, which walks lists itself).
 */
import { JsonNumberText } from '../records/json-to-value.js';

export type ValueObject = Record<string, unknown>;

/** True for an object holding named fields (what JSON objects and decoded records are). */
export function isFieldObject(v: unknown): v is ValueObject {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof JsonNumberText) &&
    !(v instanceof Uint8Array) &&
    !(v instanceof Map) &&
    !(v instanceof Set) &&
    !(v instanceof Date)
  );
}

export function splitPath(path: string): string[] {
  return path.split('.');
}

/** The value at a path, or undefined when any step is missing or not an object. */
export function getAt(root: ValueObject, path: readonly string[]): unknown {
  let current: unknown = root;
  for (const step of path) {
    if (!isFieldObject(current) || !Object.hasOwn(current, step)) return undefined;
    current = current[step];
  }
  return current;
}

/**
 * Removes the value at a path and returns it. Objects along the path are copied first, so the
 * decoded value the caller holds is never changed (it is still needed for routing and dead letters).
 */
export function takeAt(root: ValueObject, path: readonly string[]): unknown {
  let current: ValueObject = root;
  for (let i = 0; i < path.length - 1; i++) {
    const next = current[path[i]];
    if (!isFieldObject(next)) return undefined;
    const copy = { ...next };
    current[path[i]] = copy;
    current = copy;
  }
  const last = path[path.length - 1];
  if (!Object.hasOwn(current, last)) return undefined;
  const value = current[last];
  delete current[last];
  return value;
}

/**
 * Sets a value at a path, creating (or copying) objects along it.
 * @returns false when a step is occupied by something that is not an object
 */
export function putAt(root: ValueObject, path: readonly string[], value: unknown): boolean {
  let current: ValueObject = root;
  for (let i = 0; i < path.length - 1; i++) {
    const next = current[path[i]];
    if (next === undefined || next === null) {
      const created: ValueObject = {};
      current[path[i]] = created;
      current = created;
    } else if (isFieldObject(next)) {
      const copy = { ...next };
      current[path[i]] = copy;
      current = copy;
    } else {
      return false;
    }
  }
  current[path[path.length - 1]] = value;
  return true;
}

/**
 * Sets a field whose name comes from data. A plain assignment of `__proto__` (JSON.parse makes it an
 * ordinary own key) would replace the object's prototype instead, and the field would vanish.
 */
export function setOwn(target: ValueObject, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** A field's own value (never one inherited from Object.prototype). */
export function ownValue(target: ValueObject, key: string): unknown {
  return Object.hasOwn(target, key) ? target[key] : undefined;
}
