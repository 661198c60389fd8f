/**
 * Prints an expression back in the filter language, so that `parseExpression(formatExpression(e))`
 * gives `e` again (for logs, `--explain` output and error messages).
 */
import { decimalParams } from '../spec/conversions.js';
import { formatDate, formatTimeOfDay, formatTimestamp } from '../spec/epoch-time.js';
import type { PrimitiveType, Value } from '../spec/types.js';
import type { BoundExpression, Expression, Literal } from './expression.js';

const SYMBOLS = { eq: '=', 'not-eq': '!=', lt: '<', 'lt-eq': '<=', gt: '>', 'gt-eq': '>=' } as const;
const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'is', 'null', 'nan', 'true', 'false', 'between']);

/** Text of an unbound or bound expression, parenthesised only where precedence needs it. Never throws. */
export function formatExpression(expr: Expression | BoundExpression): string {
  return format(expr, 0);
}

// Binding strength: or = 1, and = 2, not = 3, atoms = 4.
function format(expr: Expression | BoundExpression, parent: number): string {
  const wrap = (text: string, own: number) => (own < parent ? `(${text})` : text);
  switch (expr.op) {
    case 'true':
    case 'false':
      return expr.op;
    case 'or':
      return wrap(`${format(expr.left, 1)} or ${format(expr.right, 2)}`, 1);
    case 'and':
      return wrap(`${format(expr.left, 2)} and ${format(expr.right, 3)}`, 2);
    case 'not':
      return wrap(`not ${format(expr.child, 3)}`, 3);
    case 'is-null':
      return `${formatTerm(expr.term)} is null`;
    case 'not-null':
      return `${formatTerm(expr.term)} is not null`;
    case 'is-nan':
      return `${formatTerm(expr.term)} is nan`;
    case 'not-nan':
      return `${formatTerm(expr.term)} is not nan`;
    case 'in':
    case 'not-in': {
      const type = typeOf(expr.term);
      const values = (expr.values as (Literal | Value)[]).map((v) => formatLiteral(v, type)).join(', ');
      return `${formatTerm(expr.term)} ${expr.op === 'in' ? 'in' : 'not in'} (${values})`;
    }
    default:
      return `${formatTerm(expr.term)} ${SYMBOLS[expr.op]} ${formatLiteral(expr.value, typeOf(expr.term))}`;
  }
}

function formatTerm(term: string | { name: string }): string {
  const name = typeof term === 'string' ? term : term.name;
  const parts = name.split('.');
  const plain = parts.every((p) => /^[A-Za-z_][A-Za-z0-9_$]*$/.test(p));
  if (plain && !(parts.length === 1 && KEYWORDS.has(name.toLowerCase()))) return name;
  return parts.map((p) => `"${p.replaceAll('"', '""')}"`).join('.');
}

function typeOf(term: string | { type: PrimitiveType }): PrimitiveType | undefined {
  return typeof term === 'string' ? undefined : term.type;
}

/** A bound value is printed as the literal that binds back to it (ISO text for temporal types). */
function formatLiteral(value: Literal | Value, type: PrimitiveType | undefined): string {
  if (value === null) return 'null';
  if (type !== undefined && (typeof value === 'number' || typeof value === 'bigint')) {
    if (type === 'date') return `'${formatDate(Number(value))}'`;
    if (type === 'time') return `'${formatTimeOfDay(BigInt(value))}'`;
    if (type === 'timestamp') return `'${formatTimestamp(BigInt(value))}'`;
    if (type === 'timestamptz') return `'${formatTimestamp(BigInt(value))}Z'`;
    const decimal = decimalParams(type);
    if (decimal) return formatDecimal(BigInt(value), decimal.scale);
  }
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value);
  if (value instanceof Uint8Array) return `'${Buffer.from(value).toString('hex')}'`;
  if (!Array.isArray(value) && !(value instanceof Map) && value.type === 'number') return String(value.text);
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

function formatDecimal(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}
