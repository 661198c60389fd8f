/**
 * Type guards over node-sql-parser's AST. Its published types describe every dialect at once and are
 * loose where floe needs to be strict, so the AST is read as `unknown` and narrowed here node by node:
 * a shape this file does not know is refused by the caller, never cast.
 */

/** A plain JSON-ish object node. */
export type Node = { readonly [key: string]: unknown };

export function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A node's `type` tag (`column_ref`, `aggr_func`, `function`, `binary_expr`, ...), '' when it has none. */
export function nodeType(value: unknown): string {
  return isNode(value) && typeof value.type === 'string' ? value.type : '';
}

/** A column reference: its name and the table qualifier, if any. */
export interface ColumnRef {
  column: string;
  table: string | null;
}

export function asColumnRef(value: unknown): ColumnRef | undefined {
  if (nodeType(value) !== 'column_ref' || !isNode(value)) return undefined;
  const column = value.column;
  // Some dialects wrap the name: { expr: { type: 'default', value: 'x' } }.
  const name =
    typeof column === 'string'
      ? column
      : isNode(column) && isNode(column.expr) && typeof column.expr.value === 'string'
        ? column.expr.value
        : undefined;
  if (name === undefined) return undefined;
  return { column: name, table: typeof value.table === 'string' ? value.table : null };
}

/** A function call's upper-case name and argument nodes (`TUMBLE(ts, INTERVAL '1' MINUTE)`). */
export interface FunctionCall {
  name: string;
  args: unknown[];
}

export function asFunctionCall(value: unknown): FunctionCall | undefined {
  if (nodeType(value) !== 'function' || !isNode(value)) return undefined;
  const name = value.name;
  let text: string | undefined;
  if (typeof name === 'string') text = name;
  else if (isNode(name) && Array.isArray(name.name)) {
    const parts = name.name.map((p: unknown) => (isNode(p) && typeof p.value === 'string' ? p.value : ''));
    text = parts.join('.');
  }
  if (!text) return undefined;
  const args = isNode(value.args) && Array.isArray(value.args.value) ? value.args.value : [];
  return { name: text.toUpperCase(), args };
}

/** An aggregate call: upper-case name, its argument (a `star` node for COUNT(*)), DISTINCT or not. */
export interface AggregateCall {
  name: string;
  arg: unknown;
  distinct: boolean;
}

export function asAggregateCall(value: unknown): AggregateCall | undefined {
  if (nodeType(value) !== 'aggr_func' || !isNode(value) || typeof value.name !== 'string') return undefined;
  const args = isNode(value.args) ? value.args : {};
  return { name: value.name.toUpperCase(), arg: args.expr, distinct: typeof args.distinct === 'string' };
}

/** An `INTERVAL 'n' UNIT` node: its amount text and lower-case unit. */
export function asInterval(value: unknown): { amount: string; unit: string } | undefined {
  if (nodeType(value) !== 'interval' || !isNode(value) || !isNode(value.expr)) return undefined;
  const amount = value.expr.value;
  if (typeof amount !== 'string' && typeof amount !== 'number') return undefined;
  return { amount: String(amount), unit: typeof value.unit === 'string' ? value.unit.toLowerCase() : '' };
}

/** A short description of a node for error messages: `COUNT(...)`, `column x`, `a + ...`. */
export function describeNode(value: unknown): string {
  const ref = asColumnRef(value);
  if (ref) return `column ${ref.table ? `${ref.table}.` : ''}${ref.column}`;
  const call = asFunctionCall(value);
  if (call) return `${call.name}(...)`;
  const aggregate = asAggregateCall(value);
  if (aggregate) return `${aggregate.name}(...)`;
  if (isNode(value) && typeof value.operator === 'string') return `an expression with ${value.operator}`;
  return nodeType(value) ? `a ${nodeType(value).replaceAll('_', ' ')}` : 'an expression';
}
