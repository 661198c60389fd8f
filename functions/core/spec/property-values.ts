/**
 * How one table property's text becomes a value (table-properties.ts lists the properties). A value
 * that is not what the property takes is refused, never replaced by the default: a table that asks for
 * something floe cannot honour must be fixed where it was set, not quietly written otherwise.
 */
import { ValidationError } from '../errors.js';

/** One property: its name, what it takes (said in errors), and its value when unset. */
export interface PropertyDefinition<T> {
  readonly name: string;
  /** What the property accepts, completing "must be …". */
  readonly accepts: string;
  readonly unset: T;
  /** What an unset property means, when `unset` does not say it plainly (Infinity, undefined). */
  readonly unsetMeans?: string;
  /** The value of a raw text, or undefined when the text is not one the property takes. */
  readonly parse: (raw: string) => T | undefined;
}

/**
 * The property's value in `properties` (its `unset` value when absent).
 * @throws ValidationError naming the property, the value and what it accepts; not retryable: only
 *   changing the property (or removing it) helps
 */
export function readProperty<T>(
  properties: Readonly<Record<string, string>> | undefined,
  definition: PropertyDefinition<T>,
): T {
  const raw = properties?.[definition.name];
  if (raw === undefined) return definition.unset;
  const value = definition.parse(raw);
  if (value === undefined) {
    const unset = definition.unsetMeans ?? String(definition.unset);
    throw new ValidationError(
      `table property ${definition.name}: must be ${definition.accepts}, got ${JSON.stringify(raw)}; ` +
        `set it to an accepted value or remove it (unset means ${unset}), e.g. with your engine's ` +
        'ALTER TABLE … SET/UNSET TBLPROPERTIES',
    );
  }
  return value;
}

const DIGITS = /^[0-9]+$/;

/** A whole number ≥ `min` written in decimal digits, as Iceberg's integer and long properties. */
export function integerProperty<U extends number | undefined>(
  name: string,
  min: number,
  unset: U,
  unsetMeans?: string,
): PropertyDefinition<number | U> {
  return {
    name,
    accepts: `an integer ≥ ${min}`,
    unset,
    unsetMeans,
    parse: (raw) => (DIGITS.test(raw) && Number(raw) >= min ? Number(raw) : undefined),
  };
}

/**
 * `true` or `false`, in any case, as Iceberg Java reads them; anything else (which Java reads as false)
 * is refused: `yes` or `1` are meant as true.
 */
export function booleanProperty(name: string, unset: boolean): PropertyDefinition<boolean> {
  return {
    name,
    accepts: 'true or false',
    unset,
    parse: (raw) => {
      const v = raw.toLowerCase();
      return v === 'true' ? true : v === 'false' ? false : undefined;
    },
  };
}

/**
 * One of a set of names, each mapped to its value. Iceberg's own names (codecs) are read in any case,
 * floe's (`floe.*`) exactly as written.
 */
export function choiceProperty<T, U extends T | undefined>(
  name: string,
  choices: Readonly<Record<string, T>>,
  unset: U,
  options: { ignoreCase?: boolean; accepts?: string; unsetMeans?: string } = {},
): PropertyDefinition<T | U> {
  const names = Object.keys(choices);
  return {
    name,
    accepts: options.accepts ?? `one of ${names.join(', ')}`,
    unset,
    unsetMeans: options.unsetMeans,
    parse: (raw) => {
      const key = options.ignoreCase ? raw.toLowerCase() : raw;
      return Object.hasOwn(choices, key) ? choices[key] : undefined;
    },
  };
}

/** Any text but the empty one (a column name). */
export function textProperty(name: string, accepts: string): PropertyDefinition<string | undefined> {
  return {
    name,
    accepts,
    unset: undefined,
    unsetMeans: 'none',
    parse: (raw) => (raw === '' ? undefined : raw),
  };
}
