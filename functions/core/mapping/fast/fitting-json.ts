/**
 * The fitting decision of fitting-columns.ts made on the JSON value's UTF-8 bytes themselves: one pass
 * over a record's bytes appends its values to gathered columns, with no JSON.parse, no string for the
 * text, no object per record or nested struct, and no projection copy. Strings are copied byte for
 * byte into the column's UTF-8 buffer; numbers, decimals and canonical timestamps become exact doubles
 * in its typed storage (data/leaf-column.ts). A text it takes gives exactly what decoding the bytes
 * (parse-json.ts) and compileFittingColumns' append would give; for anything else (invalid JSON or
 * UTF-8, a key that is not a field, a repeated key, an escaped key, a number of 16+ characters, a
 * value of the wrong kind) it answers false and the record takes the general path, which decides and
 * explains.
 *
 * Why by hand: the JSON parsers on npm build objects (what this avoids) or are native add-ons; none
 * reads bytes straight into schema-shaped columns with JSON.parse's exact semantics. The scanner
 * validates everything it accepts (grammar, string control characters, UTF-8 sequences, escapes
 * through JSON.parse of that one string), so a text it takes is a text JSON.parse takes. The
 * per-value conversions are fitting-row.ts' own (compilePrimitive) or byte ports of their fast paths
 * (byte-values.ts), applied to the same values JSON.parse would give: strings, booleans, and numbers
 * rounded as V8 rounds them (test/unit/evolution/fitting-json.test.ts holds the two equal on
 * generated schemas and texts).
 */
import {
  appendAbsent,
  type GatheredColumn,
  type LeafColumn,
  type ListColumn,
  type StructColumn,
} from '../../data/gathered-rows.js';
import { utf8Text } from '../../data/leaf-column.js';
import { decimalParams } from '../../spec/conversions.js';
import type { IcebergType, PrimitiveType, StructType } from '../../spec/types.js';
import { isoTimestampBytes, plainDecimalBytes, utf8SequenceLength } from './byte-values.js';
import { compilePrimitive, NOT_FITTING } from './fitting-row.js';

/** Appends the (non-null) value at the cursor to a column; false when it does not fit. */
type JsonAppend = (column: GatheredColumn) => boolean;

// The cursor: the bytes being scanned and the position in them. One scan runs at a time
// (synchronous), so module state is safe and keeps the hot loop free of an extra object. Reading past
// the end gives undefined, which every test below treats as "not this byte".
let buf: Uint8Array = new Uint8Array(0);
let end = 0;
let pos = 0;

/**
 * The byte at i, or -1 past the end. Never reading a typed array out of bounds keeps every byte a
 * small integer for the optimizer (an out-of-bounds read gives undefined and makes the loads generic).
 */
function at(i: number): number {
  return i < end ? buf[i] : -1;
}

const NOT_SCALAR: unique symbol = Symbol('not a scalar');
/** 10^k for k ≤ 22 is exact in a double (what the exact-division path below relies on). */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);
/** Numbers this long may lose digits as a double: parse-json.ts keeps their text, the general path decides. */
const LONG_NUMBER_CHARS = 16;
const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

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
const TRUE = [116, 114, 117, 101];
const FALSE = [102, 97, 108, 115, 101];
const NULL = [110, 117, 108, 108];

/** Skips JSON whitespace; the byte at the cursor after it (undefined at the end). */
function skipSpace(): number {
  let c = at(pos);
  while (c === 32 || c === 10 || c === 13 || c === 9) c = at(++pos);
  return c;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

// The last string token scanned: its content is buf[strStart, strEnd) when it had no escape;
// otherwise `escaped` holds its value (decided by JSON.parse).
let strStart = 0;
let strEnd = 0;
let escaped: string | undefined;

/** Scans a string token whose opening quote is at the cursor; false when it is not valid JSON/UTF-8. */
function stringToken(): boolean {
  const open = pos;
  let i = pos + 1;
  let plain = true;
  for (;;) {
    const c = at(i);
    if (c === QUOTE) break;
    if (c === BACKSLASH) {
      plain = false;
      i += 2;
      continue;
    }
    // A raw control character is invalid JSON; undefined is the end of the bytes.
    if (!(c >= 32)) return false;
    if (c < 0x80) i++;
    else {
      const len = utf8SequenceLength(buf, i);
      if (len === 0) return false;
      i += len;
    }
  }
  pos = i + 1;
  if (plain) {
    strStart = open + 1;
    strEnd = i;
    escaped = undefined;
    return true;
  }
  try {
    escaped = JSON.parse(utf8Text(buf, open, i + 1)) as string;
    return true;
  } catch {
    return false;
  }
}

/** The last string token's value as a JS string. */
function tokenString(): string {
  return escaped ?? utf8Text(buf, strStart, strEnd);
}

/**
 * A number token at the cursor, as JSON.parse reads it. Without an exponent the digits (at most 15:
 * tokens of 16+ characters are refused) are an exact integer and 10^scale is exact, so one division
 * gives the correctly rounded double, the one V8's parser gives. With an exponent, Number() does it.
 */
function numberToken(): number | typeof NOT_SCALAR {
  const start = pos;
  let c = at(pos);
  const negative = c === MINUS;
  if (negative) c = at(++pos);
  let mantissa = 0;
  if (c === ZERO) c = at(++pos);
  else if (c > ZERO && c <= NINE) {
    do {
      mantissa = mantissa * 10 + (c - ZERO);
      c = at(++pos);
    } while (isDigit(c));
  } else return NOT_SCALAR;
  let scale = 0;
  if (c === DOT) {
    c = at(++pos);
    if (!isDigit(c)) return NOT_SCALAR;
    do {
      mantissa = mantissa * 10 + (c - ZERO);
      scale++;
      c = at(++pos);
    } while (isDigit(c));
  }
  let exponent = false;
  if (c === 101 || c === 69) {
    exponent = true;
    c = at(++pos);
    if (c === 43 || c === MINUS) c = at(++pos);
    if (!isDigit(c)) return NOT_SCALAR;
    do c = at(++pos);
    while (isDigit(c));
  }
  if (pos - start >= LONG_NUMBER_CHARS) return NOT_SCALAR;
  if (exponent) {
    const n = Number(utf8Text(buf, start, pos));
    // Under- or overflowed (`123e-400` → 0, `1e400` → Infinity): parse-json.ts keeps such a token's
    // text, so the general path decides (a decimal refuses it; it is never stored as 0 or Infinity).
    if ((n === 0 && mantissa !== 0) || !Number.isFinite(n)) return NOT_SCALAR;
    return n;
  }
  const magnitude = scale === 0 ? mantissa : mantissa / POW10[scale];
  return negative ? -magnitude : magnitude;
}

/** `word` (true, false, null) at the cursor, consumed. */
function literal(word: readonly number[]): boolean {
  for (let k = 0; k < word.length; k++) if (at(pos + k) !== word[k]) return false;
  pos += word.length;
  return true;
}

/** The scalar at the cursor as JSON.parse gives it; NOT_SCALAR for objects, arrays, null, bad JSON. */
function scalar(): string | number | boolean | typeof NOT_SCALAR {
  const c = at(pos);
  if (c === QUOTE) return stringToken() ? tokenString() : NOT_SCALAR;
  if (c === MINUS || isDigit(c)) return numberToken();
  if (c === LOWER_T) return literal(TRUE) ? true : NOT_SCALAR;
  if (c === LOWER_F) return literal(FALSE) ? false : NOT_SCALAR;
  return NOT_SCALAR;
}

/** A null (only where `nullable`) or a value at the cursor, appended to `column`. */
function valueOrNull(append: JsonAppend, column: GatheredColumn, nullable: boolean): boolean {
  if (at(pos) !== LOWER_N) return append(column);
  if (!nullable || !literal(NULL)) return false;
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
    if (at(pos) !== QUOTE || !stringToken()) return false;
    const leaf = column as LeafColumn;
    if (escaped === undefined) leaf.pushBytes(buf, strStart, strEnd);
    else if (escaped.isWellFormed()) leaf.pushString(escaped);
    else return false; // a lone surrogate cannot be stored as UTF-8: the general path refuses it
    return true;
  };
  return appendString;
}

function compileNumber(type: 'int' | 'long' | 'double' | 'float'): JsonAppend {
  const appendNumber: JsonAppend = (column) => {
    const c = at(pos);
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
    if (at(pos) === QUOTE) {
      if (!stringToken()) return false;
      const micros = escaped === undefined ? isoTimestampBytes(buf, strStart, strEnd, local) : undefined;
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
    let from = pos;
    let to: number;
    if (at(pos) === QUOTE) {
      if (!stringToken()) return false;
      if (escaped !== undefined) return pushConverted(leaf, convert(escaped));
      from = strStart;
      to = strEnd;
    } else {
      const c = at(pos);
      if (c !== MINUS && !isDigit(c)) return false;
      // A number token's own text instead of String() of its double: the same value (a token under
      // 16 characters that neither under- nor overflows has at most 15 significant digits, which a
      // double keeps), parsed exactly, without formatting the double; exponents included.
      if (numberToken() === NOT_SCALAR) return false;
      to = pos;
    }
    const unscaled = plainDecimalBytes(buf, from, to, precision, scale);
    if (unscaled === undefined) return pushConverted(leaf, convert(utf8Text(buf, from, to)));
    leaf.pushNumber(unscaled);
    return true;
  };
  return appendDecimal;
}

function compilePrimitiveAppend(type: PrimitiveType): JsonAppend {
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

function compileType(type: IcebergType): JsonAppend {
  if (typeof type === 'string') return compilePrimitiveAppend(type);
  if (type.type === 'struct') return compileFields(type) as JsonAppend;
  if (type.type === 'list') return compileList(type.element, type['element-required']);
  return () => false; // maps take the general path
}

function compileList(elementType: IcebergType, required: boolean): JsonAppend {
  const element = compileType(elementType);
  const appendList: JsonAppend = (column) => {
    if (at(pos) !== OPEN_BRACKET) return false;
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
  return appendList;
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
  // Names as the UTF-8 bytes a key written as it is has (a matchable name is well-formed).
  const codes = names.map((name) => [...Buffer.from(name, 'utf8')]);
  // Whether the key at the cursor is field i's name, written as it is: compared byte by byte (names
  // are short; cheaper than a call per key).
  const keyIs = (i: number): boolean => {
    const name = codes[i];
    const len = name.length;
    if (!matchable[i] || at(pos + len) !== QUOTE) return false;
    for (let k = 0; k < len; k++) if (at(pos + k) !== name[k]) return false;
    return true;
  };
  const appendStruct = (column: StructColumn): boolean => {
    if (at(pos) !== OPEN_BRACE) return false;
    pos++;
    const row = ++mark;
    let found = 0;
    let next = 0;
    if (skipSpace() !== CLOSE_BRACE) {
      for (;;) {
        if (at(pos) !== QUOTE) return false;
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
        pos += codes[i].length + 1;
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
  return appendStruct;
}

/**
 * Compiles the scan of a JSON object's UTF-8 bytes into a struct column (whose children are the
 * struct's fields, in order). The returned function appends one row, or answers false; on false the
 * columns may be partly written (the caller truncates them, as for fitting-columns.ts). A leading
 * byte-order mark is skipped, as the UTF-8 decoding of parse-json.ts drops it.
 */
export function compileJsonFields(type: StructType): (column: StructColumn, json: Uint8Array) => boolean {
  const fields = compileFields(type);
  return (column, json) => {
    buf = json;
    end = json.length;
    pos = json[0] === 0xef && json[1] === 0xbb && json[2] === 0xbf ? 3 : 0;
    try {
      if (skipSpace() !== OPEN_BRACE || !fields(column)) return false;
      skipSpace();
      return pos === end;
    } finally {
      buf = EMPTY; // keep no record alive
      end = 0;
      escaped = undefined;
    }
  };
}

const EMPTY = new Uint8Array(0);
