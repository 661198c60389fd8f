/**
 * The small text grammar shared by partition-spec and sort-order expressions:
 *
 *   terms  := term (',' term)*          (empty text → no terms)
 *   term   := (call | column) ['as' name] [asc|desc] [nulls (first|last)]
 *   call   := fn '(' arg (',' arg)* ')'  e.g. day(ts), bucket(16, id), truncate(id, 4)
 *   column := name ('.' name)*           names are identifiers or `back-quoted`
 *
 * This file only reads the text; partition-spec.ts gives it meaning against a schema.
 */
import { ValidationError } from '../errors.js';

export interface TransformTerm {
  /** Lower-cased function name, or undefined for a bare column (identity). */
  fn?: string;
  /** Integer literals among the arguments, in order. */
  numbers: number[];
  /** Column references among the arguments (each a list of name parts), in order. */
  columns: string[][];
  alias?: string;
  direction?: 'asc' | 'desc';
  nullOrder?: 'nulls-first' | 'nulls-last';
  /** The term's own text, for messages. */
  text: string;
}

interface Token {
  kind: 'name' | 'quoted' | 'number' | 'punct';
  text: string;
  start: number;
  end: number;
}

const TOKEN = /\s*(?:([A-Za-z_$][\w$]*)|`((?:[^`]|``)*)`|(\d+)|([(),.])|(\S))/y;

function tokenize(text: string, fail: (message: string) => never): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m !== null; m = TOKEN.exec(text)) {
    const end = TOKEN.lastIndex;
    const start = m.index + m[0].length - m[0].trimStart().length;
    if (m[1] !== undefined) tokens.push({ kind: 'name', text: m[1], start, end });
    else if (m[2] !== undefined) tokens.push({ kind: 'quoted', text: m[2].replace(/``/g, '`'), start, end });
    else if (m[3] !== undefined) tokens.push({ kind: 'number', text: m[3], start, end });
    else if (m[4] !== undefined) tokens.push({ kind: 'punct', text: m[4], start, end });
    else fail(`unexpected '${m[5]}' at position ${start + 1}`);
  }
  return tokens;
}

const keyword = (token: Token | undefined, word: string): boolean =>
  token?.kind === 'name' && token.text.toLowerCase() === word;

/**
 * Splits an expression into terms. `what` names the expression in messages ("partition expression").
 * @throws ValidationError on a syntax error, saying where
 */
export function parseTerms(text: string, what: string): TransformTerm[] {
  const fail = (message: string): never => {
    throw new ValidationError(`${what} '${text}': ${message}`);
  };
  const tokens = tokenize(text, fail);
  let pos = 0;
  const peek = (offset = 0): Token | undefined => tokens[pos + offset];
  const describe = (t: Token | undefined) => (t ? `'${t.text}' at position ${t.start + 1}` : 'the end');
  const expectPunct = (p: string): void => {
    if (peek()?.kind !== 'punct' || peek()!.text !== p) fail(`expected '${p}' but found ${describe(peek())}`);
    pos++;
  };
  const readName = (): string => {
    const t = peek();
    if (t?.kind !== 'name' && t?.kind !== 'quoted') fail(`expected a column name but found ${describe(t)}`);
    pos++;
    return t!.text;
  };
  const readColumn = (): string[] => {
    const parts = [readName()];
    while (peek()?.kind === 'punct' && peek()!.text === '.') {
      pos++;
      parts.push(readName());
    }
    return parts;
  };
  const readTerm = (): TransformTerm => {
    const first = peek();
    const term: TransformTerm = { numbers: [], columns: [], text: '' };
    if (first?.kind === 'name' && peek(1)?.kind === 'punct' && peek(1)!.text === '(') {
      term.fn = first.text.toLowerCase();
      pos += 2;
      for (;;) {
        if (peek()?.kind === 'number') term.numbers.push(Number(tokens[pos++].text));
        else term.columns.push(readColumn());
        if (peek()?.kind === 'punct' && peek()!.text === ',') pos++;
        else break;
      }
      expectPunct(')');
    } else {
      term.columns.push(readColumn());
    }
    if (keyword(peek(), 'as')) {
      pos++;
      term.alias = readName();
    }
    if (keyword(peek(), 'asc') || keyword(peek(), 'desc')) {
      term.direction = tokens[pos++].text.toLowerCase() as 'asc' | 'desc';
    }
    if (keyword(peek(), 'nulls')) {
      pos++;
      if (keyword(peek(), 'first')) term.nullOrder = 'nulls-first';
      else if (keyword(peek(), 'last')) term.nullOrder = 'nulls-last';
      else fail(`expected 'first' or 'last' after 'nulls' but found ${describe(peek())}`);
      pos++;
    }
    const last = tokens[pos - 1];
    term.text = text.slice(first?.start ?? 0, last?.end ?? 0).trim();
    return term;
  };

  const terms: TransformTerm[] = [];
  if (tokens.length === 0) return terms;
  for (;;) {
    terms.push(readTerm());
    if (pos >= tokens.length) return terms;
    expectPunct(',');
  }
}

/** A column path written back in this grammar: parts joined by '.', back-quoted where needed. */
export function formatColumn(parts: string[]): string {
  return parts.map((p) => (/^[A-Za-z_$][\w$]*$/.test(p) ? p : `\`${p.replace(/`/g, '``')}\``)).join('.');
}
