/**
 * The JSON scan's appenders of primitive values (fitting-json.ts): each reads the token at the cursor
 * and appends its value to a leaf column, in typed storage where it can (strings byte for byte,
 * numbers, decimals and canonical timestamps as exact doubles), else through compilePrimitive's
 * conversion of the value JSON.parse gives; false when the value does not fit the column as it is.
 */
import type { LeafColumn } from '../../data/gathered-rows.js';
import { utf8Text } from '../../data/leaf-column.js';
import { decimalParams } from '../../spec/conversions.js';
import type { PrimitiveType } from '../../spec/types.js';
import { isoTimestampBytes, plainDecimalBytes } from './byte-values.js';
import { compilePrimitive, NOT_FITTING } from './fitting-row.js';
import {
  BACKSLASH,
  cursor,
  at,
  INT_MAX,
  INT_MIN,
  isDigit,
  type JsonAppend,
  MINUS,
  NOT_SCALAR,
  numberToken,
  QUOTE,
  scalar,
  stringToken,
  tokenString,
} from './json-cursor.js';

/** A primitive through compilePrimitive's conversion of the JS value (the general fast path). */
function viaValue(type: PrimitiveType): JsonAppend {
  const convert = compilePrimitive(type);
  const appendViaValue: JsonAppend = (column) => {
    const v = scalar();
    if (v === NOT_SCALAR) return false;
    return pushConverted(column as LeafColumn, convert(v));
  };
  return appendViaValue;
}

function compileString(): JsonAppend {
  const appendString: JsonAppend = (column) => {
    const leaf = column as LeafColumn;
    if (plainAsciiString(leaf)) return true;
    if (at(cursor.pos) !== QUOTE || !stringToken()) return false;
    if (cursor.escaped === undefined) leaf.pushBytes(cursor.buf, cursor.strStart, cursor.strEnd);
    else if (cursor.escaped.isWellFormed()) leaf.pushString(cursor.escaped);
    else return false; // a lone surrogate cannot be stored as UTF-8: the general path refuses it
    return true;
  };
  return appendString;
}

/**
 * The common string, quoted printable ASCII with no escape, scanned and copied into the column's bytes
 * in one pass; false (nothing appended, the cursor where it was) for anything else, which the token
 * path then reads. Room is reserved for the rest of the text: the string cannot be longer.
 */
function plainAsciiString(leaf: LeafColumn): boolean {
  const ends = leaf.ends;
  const { buf, end } = cursor;
  let i = cursor.pos;
  if (ends === undefined || leaf.values !== undefined || leaf.binary || i >= end || buf[i] !== QUOTE)
    return false;
  const start = ends[leaf.length];
  let bytes = leaf.bytes as Uint8Array;
  if (start + (end - i) > bytes.length) bytes = leaf.reserveBytes(end - i);
  let w = start;
  for (i++; i < end; i++) {
    const c = buf[i];
    if (c === QUOTE) {
      cursor.pos = i + 1;
      leaf.commitBytes(w);
      return true;
    }
    if (c < 32 || c >= 0x80 || c === BACKSLASH) return false;
    bytes[w++] = c;
  }
  return false;
}

function compileNumber(type: 'int' | 'long' | 'double' | 'float'): JsonAppend {
  const appendNumber: JsonAppend = (column) => {
    const c = at(cursor.pos);
    if (c !== MINUS && !isDigit(c)) return false;
    const v = numberToken();
    if (v === NOT_SCALAR) return false;
    let n: number;
    if (type === 'int') {
      // -0 becomes 0, as the general path's number → text → integer conversion makes it.
      if (!Number.isInteger(v) || v < INT_MIN || v > INT_MAX) return false;
      n = v + 0;
    } else if (type === 'long') {
      if (!Number.isSafeInteger(v)) return false;
      n = v + 0;
    } else if (type === 'double') n = v;
    else {
      n = Math.fround(v);
      // Beyond a float's range the column would be promoted to double.
      if (!Number.isFinite(n)) return false;
    }
    (column as LeafColumn).pushNumber(n);
    return true;
  };
  return appendNumber;
}

function compileTimestamp(type: 'timestamp' | 'timestamptz'): JsonAppend {
  const local = type === 'timestamp';
  const convert = compilePrimitive(type);
  const appendTimestamp: JsonAppend = (column) => {
    const leaf = column as LeafColumn;
    if (at(cursor.pos) === QUOTE) {
      if (!stringToken()) return false;
      const micros =
        cursor.escaped === undefined
          ? isoTimestampBytes(cursor.buf, cursor.strStart, cursor.strEnd, local)
          : undefined;
      if (micros !== undefined) {
        leaf.pushNumber(micros);
        return true;
      }
      return pushConverted(leaf, convert(tokenString()));
    }
    const v = scalar();
    if (typeof v !== 'number') return false;
    // Epoch milliseconds; every safe integer × 1000 is within the long range.
    if (!Number.isSafeInteger(v)) return false;
    const micros = v * 1000;
    if (Number.isSafeInteger(micros)) leaf.pushNumber(micros + 0);
    else leaf.pushValue(BigInt(v) * 1000n);
    return true;
  };
  return appendTimestamp;
}

function pushConverted(leaf: LeafColumn, value: unknown): boolean {
  if (value === NOT_FITTING) return false;
  leaf.pushValue(value);
  return true;
}

function compileDecimal(type: PrimitiveType, precision: number, scale: number): JsonAppend {
  const convert = compilePrimitive(type);
  const appendDecimal: JsonAppend = (column) => {
    const leaf = column as LeafColumn;
    let from = cursor.pos;
    let to: number;
    if (at(cursor.pos) === QUOTE) {
      if (!stringToken()) return false;
      if (cursor.escaped !== undefined) return pushConverted(leaf, convert(cursor.escaped));
      from = cursor.strStart;
      to = cursor.strEnd;
    } else {
      const c = at(cursor.pos);
      if (c !== MINUS && !isDigit(c)) return false;
      // A number token's own text instead of String() of its double: the same value (a token under
      // 16 characters that neither under- nor overflows has at most 15 significant digits, which a
      // double keeps), parsed exactly, without formatting the double; exponents included.
      if (numberToken() === NOT_SCALAR) return false;
      to = cursor.pos;
    }
    const unscaled = plainDecimalBytes(cursor.buf, from, to, precision, scale);
    if (unscaled === undefined) return pushConverted(leaf, convert(utf8Text(cursor.buf, from, to)));
    leaf.pushNumber(unscaled);
    return true;
  };
  return appendDecimal;
}

export function compilePrimitiveAppend(type: PrimitiveType): JsonAppend {
  switch (type) {
    case 'string':
      return compileString();
    case 'int':
    case 'long':
    case 'double':
    case 'float':
      return compileNumber(type);
    case 'timestamp':
    case 'timestamptz':
      return compileTimestamp(type);
  }
  const decimal = decimalParams(type);
  if (decimal) return compileDecimal(type, decimal.precision, decimal.scale);
  return viaValue(type);
}
