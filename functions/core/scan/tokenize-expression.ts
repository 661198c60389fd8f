/** Tokens of the filter language (see parse-expression.ts), each with its 1-based column. */
import { ValidationError } from '../errors.js';

export type TokenKind =
  | 'identifier'
  | 'keyword'
  | 'number'
  | 'string'
  | 'operator'
  | 'lparen'
  | 'rparen'
  | 'comma'
  | 'eof';

export interface Token {
  kind: TokenKind;
  /** Identifier: the dotted name with quotes removed; string: the unescaped value; else the source text. */
  text: string;
  /** 1-based column of the token's first character (for eof: one past the end). */
  column: number;
}

const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'is', 'null', 'nan', 'true', 'false', 'between']);
const OPERATORS = ['<=', '>=', '<>', '!=', '==', '=', '<', '>'];
const NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/;
const NAME = /^[A-Za-z_][A-Za-z0-9_$]*/;

/**
 * Splits a filter into tokens. Columns are counted in UTF-16 code units, like a terminal cursor
 * for the text people type.
 * @throws ValidationError for an unterminated string or quoted name, or a character outside the language
 */
export function tokenize(text: string, label: string): Token[] {
  const tokens: Token[] = [];
  const fail = (message: string, at: number): never => {
    throw new ValidationError(`${label}: ${message} at column ${at + 1}`);
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const start = i;
    if (ch === '(' || ch === ')' || ch === ',') {
      tokens.push({ kind: ch === '(' ? 'lparen' : ch === ')' ? 'rparen' : 'comma', text: ch, column: i + 1 });
      i++;
      continue;
    }
    if (ch === "'") {
      const { value, end } = readQuoted(text, i, "'");
      if (end < 0) fail('unterminated string (a closing quote is missing) starting', start);
      tokens.push({ kind: 'string', text: value, column: start + 1 });
      i = end;
      continue;
    }
    const operator = OPERATORS.find((op) => text.startsWith(op, i));
    const number = NUMBER.exec(text.slice(i));
    if (number && (ch !== '-' || /[\d.]/.test(text[i + 1] ?? ''))) {
      const after = text[i + number[0].length];
      if (after !== undefined && /[A-Za-z_"'.]/.test(after)) {
        fail(`malformed number '${number[0]}${after}'`, start);
      }
      tokens.push({ kind: 'number', text: number[0], column: start + 1 });
      i += number[0].length;
      continue;
    }
    if (operator) {
      tokens.push({ kind: 'operator', text: operator, column: start + 1 });
      i += operator.length;
      continue;
    }
    if (ch === '"' || NAME.test(text.slice(i))) {
      const { parts, end, quotedAny } = readName(text, i, fail);
      const single = parts.length === 1 && !quotedAny;
      const isKeyword = single && KEYWORDS.has(parts[0].toLowerCase());
      tokens.push({
        kind: isKeyword ? 'keyword' : 'identifier',
        text: parts.join('.'),
        column: start + 1,
      });
      i = end;
      continue;
    }
    fail(`unexpected character '${ch}'`, start);
  }
  tokens.push({ kind: 'eof', text: '', column: text.length + 1 });
  return tokens;
}

/** Reads a quoted run starting at `start` (the opening quote); a doubled quote is one quote. */
function readQuoted(text: string, start: number, quote: string): { value: string; end: number } {
  let value = '';
  let i = start + 1;
  while (i < text.length) {
    if (text[i] === quote) {
      if (text[i + 1] === quote) {
        value += quote;
        i += 2;
        continue;
      }
      return { value, end: i + 1 };
    }
    value += text[i];
    i++;
  }
  return { value, end: -1 };
}

/** Reads `a.b."c d"`: name parts separated by dots, each bare or double-quoted. */
function readName(
  text: string,
  start: number,
  fail: (message: string, at: number) => never,
): { parts: string[]; end: number; quotedAny: boolean } {
  const parts: string[] = [];
  let quotedAny = false;
  let i = start;
  for (;;) {
    if (text[i] === '"') {
      const { value, end } = readQuoted(text, i, '"');
      if (end < 0) fail('unterminated quoted column name starting', i);
      if (value.length === 0) fail('empty quoted column name', i);
      parts.push(value);
      quotedAny = true;
      i = end;
    } else {
      const match = NAME.exec(text.slice(i));
      if (!match) fail("expected a name after '.'", i);
      parts.push(match[0]);
      i += match[0].length;
    }
    if (text[i] !== '.') return { parts, end: i, quotedAny };
    i++;
  }
}
