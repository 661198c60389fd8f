/**
 * What kind of value a decoded value is, as schema evolution judges it: which column types it can go
 * into at all (its content is checked by the row conversion), and how many digits a decimal needs.
 */
import { decimalParams } from '../../spec/conversions.js';
import type { PrimitiveType } from '../../spec/types.js';
import { doubleOf, JsonNumberText } from '../../records/json-to-value.js';
import { isFieldObject } from '../value-paths.js';
import { numericTextOf } from './infer-type.js';

const DECIMAL_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** How a value reads in a message: `text`, `a number`, `an object`, ... */
export function kindOf(v: unknown): string {
  if (typeof v === 'string') return 'text';
  if (typeof v === 'boolean') return 'a boolean';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v)) return 'a list';
  if (numericTextOf(v) !== undefined || typeof v === 'number') return 'a number';
  if (isFieldObject(v)) return 'an object';
  return 'a value';
}

export function isNumeric(v: unknown): boolean {
  return typeof v === 'number' || typeof v === 'bigint' || v instanceof JsonNumberText;
}

/** Whether a value of this kind can become a value of `type` at all (its content is checked later). */
export function acceptsKind(type: PrimitiveType, v: unknown): boolean {
  switch (type) {
    case 'boolean':
      return typeof v === 'boolean';
    case 'int':
    case 'long':
      return isNumeric(v);
    case 'float':
    case 'double':
      // A string that spells a number (NaN and ±Infinity included), as json-to-value's doubleOf reads it.
      return isNumeric(v) || (typeof v === 'string' && doubleOf(v) !== undefined);
    case 'date':
    case 'timestamp':
    case 'timestamptz':
      return typeof v === 'string' || isNumeric(v);
    case 'time':
    case 'string':
    case 'uuid':
      return typeof v === 'string';
    case 'binary':
      return typeof v === 'string' || v instanceof Uint8Array;
    default:
      if (decimalParams(type)) return typeof v === 'string' || isNumeric(v);
      return typeof v === 'string' || v instanceof Uint8Array; // fixed[L]
  }
}

/**
 * Digits a decimal number text needs at `scale`: `{ precision }`, or `{ scaleNeeded }` when it has
 * more fraction digits than the scale holds; undefined when the text is not a number (the row
 * conversion reports that).
 */
export function decimalDigits(
  text: string,
  scale: number,
): { precision: number; scaleNeeded?: undefined } | { scaleNeeded: number } | undefined {
  const m = DECIMAL_TEXT.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  let digits = `${m[2]}${m[3] ?? ''}`.replace(/^0+/, '');
  let exponent = Number(m[4] ?? 0) - (m[3] ?? '').length;
  if (!Number.isSafeInteger(exponent)) return { scaleNeeded: Number.MAX_SAFE_INTEGER };
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exponent++;
  }
  if (digits === '') return { precision: 1 };
  if (-exponent > scale) return { scaleNeeded: -exponent };
  return { precision: Math.max(1, digits.length + exponent + scale) };
}
