/**
 * Parser for the SQL-ish filter a CLI user types:
 *   order_ts >= '2024-05-01T00:00:00Z' and country in ('DE', 'FR') or not (amount < 10.5) and note is null
 *
 * Grammar (keywords case-insensitive; precedence NOT > AND > OR; AND/OR left-associative):
 *   expr      := and ('or' and)*
 *   and       := unary ('and' unary)*
 *   unary     := 'not' unary | '(' expr ')' | 'true' | 'false' | predicate
 *   predicate := column ( cmp literal
 *                       | 'is' ['not'] ('null' | 'nan')
 *                       | ['not'] 'in' '(' literal (',' literal)* ')'
 *                       | ['not'] 'between' literal 'and' literal )
 *   cmp       := '=' | '==' | '!=' | '<>' | '<' | '<=' | '>' | '>='
 *   column    := name ('.' name)*      name := [A-Za-z_][A-Za-z0-9_$]* | "double-quoted, "" escapes"
 *   literal   := number | 'single-quoted, '' escapes' | 'true' | 'false'
 * Numbers keep their text (bound later against the column type). A keyword used as a column name
 * must be double-quoted.
 *
 * Hand-written: it is small, and no parser library gives the positioned messages a CLI wants.
 */
import { ValidationError } from '../errors.js';
import type { ComparisonOp, Expression, Literal } from './expression.js';
import { makeAnd } from './expression-helpers.js';
import { type Token, tokenize } from './tokenize-expression.js';

const COMPARISONS: Record<string, ComparisonOp> = {
  '=': 'eq',
  '==': 'eq',
  '!=': 'not-eq',
  '<>': 'not-eq',
  '<': 'lt',
  '<=': 'lt-eq',
  '>': 'gt',
  '>=': 'gt-eq',
};

export interface ParseExpressionOptions {
  /** Prefix of error messages, naming where the text came from. @default '--where' */
  label?: string;
}

/**
 * Parses a filter string into an unbound Expression.
 * @throws ValidationError naming the 1-based column of the problem, e.g.
 *   `--where: expected a value after '>=' at column 13`
 */
export function parseExpression(text: string, options: ParseExpressionOptions = {}): Expression {
  const label = options.label ?? '--where';
  const parser = new Parser(tokenize(text, label), label);
  if (parser.peek().kind === 'eof') throw new ValidationError(`${label}: the filter is empty`);
  const expr = parser.parseOr();
  const rest = parser.peek();
  if (rest.kind !== 'eof') {
    const hint = rest.kind === 'rparen' ? " (no matching '(')" : '';
    parser.fail(`unexpected ${describe(rest)}${hint}`, rest);
  }
  return expr;
}

function describe(token: Token): string {
  if (token.kind === 'eof') return 'end of input';
  if (token.kind === 'string') return `string '${token.text}'`;
  return `'${token.text}'`;
}

class Parser {
  private index = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly label: string,
  ) {}

  peek(): Token {
    return this.tokens[this.index];
  }

  private next(): Token {
    const token = this.tokens[this.index];
    if (token.kind !== 'eof') this.index++;
    return token;
  }

  private isKeyword(word: string, token: Token = this.peek()): boolean {
    return token.kind === 'keyword' && token.text.toLowerCase() === word;
  }

  fail(message: string, token: Token): never {
    throw new ValidationError(`${this.label}: ${message} at column ${token.column}`);
  }

  parseOr(): Expression {
    let left = this.parseAnd();
    while (this.isKeyword('or')) {
      const op = this.next();
      left = { op: 'or', left, right: this.parseAnd(op) };
    }
    return left;
  }

  private parseAnd(after?: Token): Expression {
    let left = this.parseUnary(after);
    while (this.isKeyword('and')) {
      const op = this.next();
      left = { op: 'and', left, right: this.parseUnary(op) };
    }
    return left;
  }

  private parseUnary(after?: Token): Expression {
    const token = this.peek();
    if (this.isKeyword('not')) {
      this.next();
      return { op: 'not', child: this.parseUnary(token) };
    }
    if (token.kind === 'lparen') {
      this.next();
      if (this.peek().kind === 'rparen') this.fail("expected an expression after '('", this.peek());
      const inner = this.parseOr();
      const close = this.peek();
      if (close.kind !== 'rparen') {
        this.fail(`expected ')' to close the '(' at column ${token.column}, found ${describe(close)}`, close);
      }
      this.next();
      return inner;
    }
    if (this.isKeyword('true') || this.isKeyword('false')) {
      this.next();
      return { op: token.text.toLowerCase() === 'true' ? 'true' : 'false' };
    }
    if (token.kind === 'identifier') return this.parsePredicate();
    const where = after ? ` after '${after.text}'` : '';
    if (token.kind === 'keyword') {
      this.fail(
        `expected a column name${where}, found keyword '${token.text}' (quote it as "${token.text}" if it is a column)`,
        token,
      );
    }
    this.fail(`expected a column name${where}, found ${describe(token)}`, token);
  }

  private parsePredicate(): Expression {
    const column = this.next();
    const term = column.text;
    const token = this.peek();
    if (token.kind === 'operator') {
      this.next();
      const op = COMPARISONS[token.text];
      const value = this.parseLiteral(token, `'${token.text}'`);
      return { op, term, value };
    }
    if (this.isKeyword('is')) {
      this.next();
      const negated = this.isKeyword('not');
      if (negated) this.next();
      const what = this.peek();
      if (this.isKeyword('null')) {
        this.next();
        return { op: negated ? 'not-null' : 'is-null', term };
      }
      if (this.isKeyword('nan')) {
        this.next();
        return { op: negated ? 'not-nan' : 'is-nan', term };
      }
      this.fail(
        `expected 'null' or 'nan' after '${negated ? 'is not' : 'is'}', found ${describe(what)}`,
        what,
      );
    }
    let negated = false;
    if (this.isKeyword('not')) {
      negated = true;
      this.next();
      if (!this.isKeyword('in') && !this.isKeyword('between')) {
        this.fail(`expected 'in' or 'between' after 'not', found ${describe(this.peek())}`, this.peek());
      }
    }
    if (this.isKeyword('in')) {
      const values = this.parseList(this.next());
      return { op: negated ? 'not-in' : 'in', term, values };
    }
    if (this.isKeyword('between')) {
      const between = this.next();
      const low = this.parseLiteral(between, "'between'");
      if (!this.isKeyword('and')) {
        this.fail(`expected 'and' in 'between ... and ...', found ${describe(this.peek())}`, this.peek());
      }
      const and = this.next();
      const high = this.parseLiteral(and, "'and'");
      const range = makeAnd<Expression>(
        { op: 'gt-eq', term, value: low },
        { op: 'lt-eq', term, value: high },
      );
      return negated ? { op: 'not', child: range } : range;
    }
    this.fail(`expected an operator after column '${term}', found ${describe(token)}`, token);
  }

  private parseList(open: Token): Literal[] {
    const paren = this.peek();
    if (paren.kind !== 'lparen')
      this.fail(`expected '(' after '${open.text}', found ${describe(paren)}`, paren);
    this.next();
    const values: Literal[] = [this.parseLiteral(paren, "'('")];
    while (this.peek().kind === 'comma') {
      const comma = this.next();
      values.push(this.parseLiteral(comma, "','"));
    }
    const close = this.peek();
    if (close.kind !== 'rparen') {
      this.fail(
        `expected ',' or ')' in the list opened at column ${paren.column}, found ${describe(close)}`,
        close,
      );
    }
    this.next();
    return values;
  }

  private parseLiteral(after: Token, afterText: string): Literal {
    const token = this.peek();
    if (token.kind === 'number') {
      this.next();
      return { type: 'number', text: token.text };
    }
    if (token.kind === 'string') {
      this.next();
      return token.text;
    }
    if (this.isKeyword('true') || this.isKeyword('false')) {
      this.next();
      return token.text.toLowerCase() === 'true';
    }
    if (this.isKeyword('null')) {
      const instead =
        after.kind === 'operator' && COMPARISONS[after.text] === 'not-eq' ? 'is not null' : 'is null';
      this.fail(`a comparison with null is never true; use '${instead}' instead`, token);
    }
    this.fail(
      `expected a value after ${afterText}${token.kind === 'eof' ? '' : `, found ${describe(token)}`}`,
      token,
    );
  }
}
