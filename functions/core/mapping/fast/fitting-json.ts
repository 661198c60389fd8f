/**
 * The fitting decision of fitting-columns.ts made on the JSON text itself: one pass over a record's
 * text appends its values to gathered columns, with no JSON.parse, no object per record or nested
 * struct, and no projection copy. A text it takes gives exactly what `JSON.parse` followed by
 * compileFittingColumns' append would give; for anything else (invalid JSON, a key that is not a
 * field, a repeated key, an escaped key, a number of 16+ characters, a value of the wrong kind) it
 * answers false and the record takes the general path, which decides and explains.
 *
 * Why by hand: the JSON parsers on npm build objects (what this avoids) or are native add-ons; none
 * reads text straight into schema-shaped columns with JSON.parse's exact semantics. The scanner
 * validates everything it accepts (grammar, string control characters, escapes through JSON.parse of
 * that one string), so a text it takes is a text JSON.parse takes. The per-value conversions are
 * fitting-row.ts' own (compilePrimitive), applied to the same JS values JSON.parse would give:
 * strings, booleans, and numbers rounded as V8 rounds them (test/unit/evolution/fitting-json.test.ts
 * holds the two equal on generated schemas and texts).
 */
import {
  appendAbsent,
  type GatheredColumn,
  type LeafColumn,
  type ListColumn,
  type StructColumn,
} from '../../data/gathered-rows.js';
import { decimalParams } from '../../spec/conversions.js';
import type { IcebergType, StructType } from '../../spec/types.js';
import { compilePrimitive, NOT_FITTING } from './fitting-row.js';

/** Appends the (non-null) value at the cursor to a column; false when it does not fit. */
type JsonAppend = (column: GatheredColumn) => boolean;

// The cursor: the text being scanned and the position in it. One scan runs at a time (synchronous),
// so module state is safe and keeps the hot loop free of an extra object.
let text = '';
let pos = 0;

const NOT_SCALAR: unique symbol = Symbol('not a scalar');
/** 10^k for k ≤ 22 is exact in a double (what the exact-division path below relies on). */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);
/** Numbers this long may lose digits as a double: parse-json.ts keeps their text, the general path decides. */
const LONG_NUMBER_CHARS = 16;

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const MINUS = 45;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const LOWER_N = 110;
const LOWER_T = 116;
const LOWER_F = 102;

/** Skips JSON whitespace; the code unit at the cursor after it (NaN at the end). */
function skipSpace(): number {
  let c = text.charCodeAt(pos);
  while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++pos);
  return c;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/** A string token whose opening quote is at the cursor. */
function stringToken(): string | typeof NOT_SCALAR {
  const open = pos;
  let i = pos + 1;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) break;
    if (c === BACKSLASH) return escapedString(open);
    // A raw control character is invalid JSON; NaN is the end of the text.
    if (!(c >= 32)) return NOT_SCALAR;
    i++;
  }
  pos = i + 1;
  return text.slice(open + 1, i);
}

/** A string with escapes: its end found here, its meaning (and validity) decided by JSON.parse. */
function escapedString(open: number): string | typeof NOT_SCALAR {
  let i = open + 1;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) break;
    if (!(c >= 32)) return NOT_SCALAR;
    i += c === BACKSLASH ? 2 : 1;
  }
  try {
    const value = JSON.parse(text.slice(open, i + 1)) as string;
    pos = i + 1;
    return value;
  } catch {
    return NOT_SCALAR;
  }
}

/**
 * A number token at the cursor, as JSON.parse reads it. Without an exponent the digits (at most 15:
 * tokens of 16+ characters are refused) are an exact integer and 10^scale is exact, so one division
 * gives the correctly rounded double, the one V8's parser gives. With an exponent, Number() does it.
 */
function numberToken(): number | typeof NOT_SCALAR {
  const start = pos;
  let c = text.charCodeAt(pos);
  const negative = c === MINUS;
  if (negative) c = text.charCodeAt(++pos);
  let mantissa = 0;
  if (c === ZERO) c = text.charCodeAt(++pos);
  else if (c > ZERO && c <= NINE) {
    do {
      mantissa = mantissa * 10 + (c - ZERO);
      c = text.charCodeAt(++pos);
    } while (isDigit(c));
  } else return NOT_SCALAR;
  let scale = 0;
  if (c === DOT) {
    c = text.charCodeAt(++pos);
    if (!isDigit(c)) return NOT_SCALAR;
    do {
      mantissa = mantissa * 10 + (c - ZERO);
      scale++;
      c = text.charCodeAt(++pos);
    } while (isDigit(c));
  }
  let exponent = false;
  if (c === 101 || c === 69) {
    exponent = true;
    c = text.charCodeAt(++pos);
    if (c === 43 || c === MINUS) c = text.charCodeAt(++pos);
    if (!isDigit(c)) return NOT_SCALAR;
    do c = text.charCodeAt(++pos);
    while (isDigit(c));
  }
  if (pos - start >= LONG_NUMBER_CHARS) return NOT_SCALAR;
  if (exponent) {
    const n = Number(text.slice(start, pos));
    // Under- or overflowed (`123e-400` → 0, `1e400` → Infinity): parse-json.ts keeps such a token's
    // text, so the general path decides (a decimal refuses it; it is never stored as 0 or Infinity).
    if ((n === 0 && mantissa !== 0) || !Number.isFinite(n)) return NOT_SCALAR;
    return n;
  }
  const magnitude = scale === 0 ? mantissa : mantissa / POW10[scale];
  return negative ? -magnitude : magnitude;
}

/** `word` at the cursor (true, false, null), consumed. */
function literal(word: string): boolean {
  if (!text.startsWith(word, pos)) return false;
  pos += word.length;
  return true;
}

/** The scalar at the cursor as JSON.parse gives it; NOT_SCALAR for objects, arrays, null, bad JSON. */
function scalar(): string | number | boolean | typeof NOT_SCALAR {
  const c = text.charCodeAt(pos);
  if (c === QUOTE) return stringToken();
  if (c === MINUS || isDigit(c)) return numberToken();
  if (c === LOWER_T) return literal('true') ? true : NOT_SCALAR;
  if (c === LOWER_F) return literal('false') ? false : NOT_SCALAR;
  return NOT_SCALAR;
}

/** A null (only where `nullable`) or a value at the cursor, appended to `column`. */
function valueOrNull(append: JsonAppend, column: GatheredColumn, nullable: boolean): boolean {
  if (text.charCodeAt(pos) !== LOWER_N) return append(column);
  if (!nullable || !literal('null')) return false;
  appendAbsent(column, false);
  return true;
}

const MORE = 1;
const DONE = 0;
const BAD = -1;

/** After an array element or object member: MORE (past a comma, at the next one), DONE (at `close`), or BAD. */
function afterItem(close: number): number {
  const c = skipSpace();
  if (c === COMMA) {
    pos++;
    skipSpace();
    return MORE;
  }
  return c === close ? DONE : BAD;
}

function compileType(type: IcebergType): JsonAppend {
  if (typeof type === 'string' && decimalParams(type)) {
    const convert = compilePrimitive(type);
    return (column) => {
      const start = pos;
      const v = scalar();
      if (v === NOT_SCALAR) return false;
      // A number token's own text instead of String() of its double: the same value (a token under
      // 16 characters that neither under- nor overflows has at most 15 significant digits, which a
      // double keeps), parsed exactly, without formatting the double; exponents included.
      const value = convert(typeof v === 'number' ? text.slice(start, pos) : v);
      if (value === NOT_FITTING) return false;
      (column as LeafColumn).values.push(value);
      return true;
    };
  }
  if (typeof type === 'string') {
    const convert = compilePrimitive(type);
    return (column) => {
      const v = scalar();
      if (v === NOT_SCALAR) return false;
      const value = convert(v);
      if (value === NOT_FITTING) return false;
      (column as LeafColumn).values.push(value);
      return true;
    };
  }
  if (type.type === 'struct') return compileFields(type) as JsonAppend;
  if (type.type === 'list') return compileList(type.element, type['element-required']);
  return () => false; // maps take the general path
}

function compileList(elementType: IcebergType, required: boolean): JsonAppend {
  const element = compileType(elementType);
  return (column) => {
    if (text.charCodeAt(pos) !== OPEN_BRACKET) return false;
    pos++;
    const list = column as ListColumn;
    let count = 0;
    if (skipSpace() !== CLOSE_BRACKET) {
      for (;;) {
        if (!valueOrNull(element, list.element, !required)) return false;
        count++;
        const after = afterItem(CLOSE_BRACKET);
        if (after === DONE) break;
        if (after === BAD) return false;
      }
    }
    pos++;
    list.valid.push(true);
    list.offsets.push(list.offsets[list.offsets.length - 1] + count);
    return true;
  };
}

/**
 * An object's fields appended to a struct column. Keys are matched as they are written (a key with
 * an escape, or a field name that would need one, never matches: the general path decides those);
 * the field after the last one matched is tried first, as producers write fields in one order.
 * Children are appended in the text's key order; each gets exactly one value per row, and the
 * fields the text does not have get null afterwards.
 */
function compileFields(type: StructType): (column: StructColumn) => boolean {
  const names = type.fields.map((f) => f.name);
  // A name JSON writes with an escape never matches the text as written.
  const matchable = names.map((name) => JSON.stringify(name) === `"${name}"`);
  const required = type.fields.map((f) => f.required);
  const appends = type.fields.map((f) => compileType(f.type));
  const n = names.length;
  // seen[i] === the current row's mark: field i was in this object (a second time is a repeated key).
  const seen = new Array<number>(n).fill(0);
  let mark = 0;
  const codes = names.map((name) => Array.from(name, (_, k) => name.charCodeAt(k)));
  // Whether the key at the cursor is field i's name, written as it is: compared code unit by code
  // unit (names are short; cheaper than a startsWith call per key).
  const keyIs = (i: number): boolean => {
    const name = codes[i];
    const len = name.length;
    if (!matchable[i] || text.charCodeAt(pos + len) !== QUOTE) return false;
    for (let k = 0; k < len; k++) if (text.charCodeAt(pos + k) !== name[k]) return false;
    return true;
  };
  return (column) => {
    if (text.charCodeAt(pos) !== OPEN_BRACE) return false;
    pos++;
    const row = ++mark;
    let found = 0;
    let next = 0;
    if (skipSpace() !== CLOSE_BRACE) {
      for (;;) {
        if (text.charCodeAt(pos) !== QUOTE) return false;
        pos++;
        let i = next < n && keyIs(next) ? next : -1;
        if (i < 0) {
          for (let j = 0; j < n; j++) {
            if (j !== next && keyIs(j)) {
              i = j;
              break;
            }
          }
        }
        if (i < 0 || seen[i] === row) return false;
        seen[i] = row;
        found++;
        pos += names[i].length + 1;
        if (skipSpace() !== COLON) return false;
        pos++;
        skipSpace();
        if (!valueOrNull(appends[i], column.children[i], !required[i])) return false;
        next = i + 1;
        const after = afterItem(CLOSE_BRACE);
        if (after === DONE) break;
        if (after === BAD) return false;
      }
    }
    pos++;
    if (found < n) {
      for (let i = 0; i < n; i++) {
        if (seen[i] === row) continue;
        if (required[i]) return false;
        appendAbsent(column.children[i], false);
      }
    }
    column.valid.push(true);
    return true;
  };
}

/**
 * Compiles the scan of a JSON object's text into a struct column (whose children are the struct's
 * fields, in order). The returned function appends one row, or answers false; on false the columns
 * may be partly written (the caller truncates them, as for fitting-columns.ts).
 */
export function compileJsonFields(type: StructType): (column: StructColumn, json: string) => boolean {
  const fields = compileFields(type);
  return (column, json) => {
    text = json;
    pos = 0;
    try {
      if (skipSpace() !== OPEN_BRACE || !fields(column)) return false;
      skipSpace();
      return pos === text.length;
    } finally {
      text = ''; // keep no record alive
    }
  };
}
