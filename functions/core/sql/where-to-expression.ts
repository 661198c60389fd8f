/**
 * A parsed SQL WHERE clause → floe's filter expression (scan/expression.ts), the one `--where` and
 * scans use, so the aggregate's filter is evaluated by scan/evaluate-row.ts with the same three-valued
 * logic and literal binding as every other filter — no second evaluator. Only what that language has
 * is taken (comparisons, IN, BETWEEN, IS [NOT] NULL, AND/OR/NOT); anything else (LIKE, arithmetic,
 * functions, column-to-column comparisons) is refused with the clause it found.
 */
import { ValidationError } from '../errors.js';
import type { ComparisonOp, Expression, Literal } from '../scan/expression.js';
import { makeAnd } from '../scan/expression-helpers.js';
import { asColumnRef, asFunctionCall, describeNode, isNode, nodeType } from './sql-ast.js';

const COMPARISONS: Record<string, ComparisonOp> = {
  '=': 'eq',
  '!=': 'not-eq',
  '<>': 'not-eq',
  '<': 'lt',
  '<=': 'lt-eq',
  '>': 'gt',
  '>=': 'gt-eq',
};

/** The comparison read the other way round (`3 < x` is `x > 3`). */
const FLIPPED: Record<ComparisonOp, ComparisonOp> = {
  eq: 'eq',
  'not-eq': 'not-eq',
  lt: 'gt',
  'lt-eq': 'gt-eq',
  gt: 'lt',
  'gt-eq': 'lt-eq',
};

function refuse(label: string, message: string): never {
  throw new ValidationError(`${label} WHERE: ${message}`);
}

/** The column a WHERE term names (qualified only by the FROM topic). */
function columnOf(node: unknown, from: string, label: string): string | undefined {
  const ref = asColumnRef(node);
  if (!ref) return undefined;
  if (ref.table !== null && ref.table !== from) {
    refuse(label, `column ${ref.table}.${ref.column}: only the FROM topic's columns can be used`);
  }
  return ref.column;
}

function literalOf(node: unknown, label: string): Literal {
  const type = nodeType(node);
  if (!isNode(node)) refuse(label, `expected a value, found ${describeNode(node)}`);
  const value = node.value;
  switch (type) {
    case 'number':
      // The number's text, so a decimal or long binds exactly against the column type.
      if (typeof value === 'number' || typeof value === 'string')
        return { type: 'number', text: String(value) };
      break;
    case 'single_quote_string':
    case 'string':
    case 'timestamp':
    case 'date':
      if (typeof value === 'string') return value;
      break;
    case 'bool':
      if (typeof value === 'boolean') return value;
      break;
    case 'double_quote_string':
      refuse(
        label,
        `"${String(value)}" is a double-quoted string: quote text with '...', column names with \`...\``,
      );
  }
  if (type === 'null') refuse(label, 'compare with null using IS NULL / IS NOT NULL');
  return refuse(label, `expected a literal value, found ${describeNode(node)}`);
}

function listOf(node: unknown, label: string): unknown[] {
  if (nodeType(node) !== 'expr_list' || !isNode(node) || !Array.isArray(node.value)) {
    return refuse(label, `expected a list of values, found ${describeNode(node)}`);
  }
  return node.value;
}

/**
 * Translates a WHERE node.
 * @throws ValidationError naming the clause it cannot take (`aggregate.sql WHERE: LIKE is not supported`)
 */
export function whereToExpression(node: unknown, from: string, label: string): Expression {
  const call = asFunctionCall(node);
  if (call?.name === 'NOT' && call.args.length === 1) {
    return { op: 'not', child: whereToExpression(call.args[0], from, label) };
  }
  if (nodeType(node) === 'unary_expr' && isNode(node) && String(node.operator).toUpperCase() === 'NOT') {
    return { op: 'not', child: whereToExpression(node.expr, from, label) };
  }
  if (nodeType(node) === 'bool' && isNode(node) && typeof node.value === 'boolean') {
    return { op: node.value ? 'true' : 'false' };
  }
  if (nodeType(node) !== 'binary_expr' || !isNode(node) || typeof node.operator !== 'string') {
    return refuse(label, `${describeNode(node)} is not a condition floe can evaluate`);
  }
  const op = node.operator.toUpperCase();
  if (op === 'AND' || op === 'OR') {
    const left = whereToExpression(node.left, from, label);
    const right = whereToExpression(node.right, from, label);
    return op === 'AND' ? makeAnd(left, right) : { op: 'or', left, right };
  }
  const column = columnOf(node.left, from, label);
  if (op === 'IS' || op === 'IS NOT') {
    if (column === undefined || nodeType(node.right) !== 'null') {
      return refuse(label, `${op} takes a column and NULL (column ${op} NULL)`);
    }
    return { op: op === 'IS' ? 'is-null' : 'not-null', term: column };
  }
  if (op === 'IN' || op === 'NOT IN') {
    if (column === undefined) return refuse(label, `${op} needs a column on its left`);
    const values = listOf(node.right, label).map((v) => literalOf(v, label));
    return { op: op === 'IN' ? 'in' : 'not-in', term: column, values };
  }
  if (op === 'BETWEEN' || op === 'NOT BETWEEN') {
    if (column === undefined) return refuse(label, `${op} needs a column on its left`);
    const bounds = listOf(node.right, label);
    if (bounds.length !== 2) return refuse(label, `${op} takes two bounds`);
    const inside = makeAnd(
      { op: 'gt-eq', term: column, value: literalOf(bounds[0], label) },
      { op: 'lt-eq', term: column, value: literalOf(bounds[1], label) },
    );
    return op === 'BETWEEN' ? inside : { op: 'not', child: inside };
  }
  const comparison = COMPARISONS[op];
  if (!comparison)
    return refuse(label, `${op} is not supported (comparisons, IN, BETWEEN, IS NULL, AND, OR, NOT are)`);
  if (column !== undefined && asColumnRef(node.right) === undefined) {
    return { op: comparison, term: column, value: literalOf(node.right, label) };
  }
  const right = column === undefined ? columnOf(node.right, from, label) : undefined;
  if (right !== undefined)
    return { op: FLIPPED[comparison], term: right, value: literalOf(node.left, label) };
  return refuse(
    label,
    `${op} compares ${describeNode(node.left)} with ${describeNode(node.right)}: one side must be a column, the other a value`,
  );
}
