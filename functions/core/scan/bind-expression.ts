/** Binds an unbound Expression to a schema: resolves columns to field ids and converts literals. */
import { ValidationError } from '../errors.js';
import type { IcebergType, PrimitiveType, StructField, StructType, Value } from '../spec/types.js';
import { compareValues } from '../spec/conversions.js';
import type { BoundExpression, BoundReference, Expression } from './expression.js';
import { ALWAYS_FALSE, ALWAYS_TRUE } from './expression-helpers.js';
import { convertLiteral } from './bind-literal.js';

/**
 * Binds `expr` against `schema` (a table schema, or any struct of fields).
 * Columns are found by exact dotted name first, then case-insensitively when that match is unique.
 * Predicates that the schema already decides are folded: `is null` on a required column is false,
 * `not null` true; `in ()` is false, `not in ()` true; a one-value `in` becomes `eq`.
 * @throws ValidationError for an unknown column (listing the available ones), a nested column
 *   (struct/list/map), a literal that does not fit the column's type, or is-nan on a non-float column
 */
export function bindExpression(expr: Expression, schema: StructType): BoundExpression {
  switch (expr.op) {
    case 'true':
    case 'false':
      return expr;
    case 'and':
    case 'or':
      return {
        op: expr.op,
        left: bindExpression(expr.left, schema),
        right: bindExpression(expr.right, schema),
      };
    case 'not':
      return { op: 'not', child: bindExpression(expr.child, schema) };
    case 'is-null':
    case 'not-null': {
      const term = bindReference(expr.term, schema);
      if (term.required) return expr.op === 'is-null' ? ALWAYS_FALSE : ALWAYS_TRUE;
      return { op: expr.op, term };
    }
    case 'is-nan':
    case 'not-nan': {
      const term = bindReference(expr.term, schema);
      if (term.type !== 'float' && term.type !== 'double') {
        throw new ValidationError(`'is nan' needs a float or double column; '${term.name}' is ${term.type}`);
      }
      return { op: expr.op, term };
    }
    case 'in':
    case 'not-in': {
      const term = bindReference(expr.term, schema);
      const values = dedupe(expr.values.map((v) => convertLiteral(v, term.type, term.name)));
      if (values.length === 0) return expr.op === 'in' ? ALWAYS_FALSE : ALWAYS_TRUE;
      if (values.length === 1) return { op: expr.op === 'in' ? 'eq' : 'not-eq', term, value: values[0] };
      return { op: expr.op, term, values };
    }
    default: {
      const term = bindReference(expr.term, schema);
      return { op: expr.op, term, value: convertLiteral(expr.value, term.type, term.name) };
    }
  }
}

function dedupe(values: Value[]): Value[] {
  const out: Value[] = [];
  for (const v of values) if (!out.some((o) => compareValues(o, v) === 0)) out.push(v);
  return out;
}

/**
 * Resolves a (dotted) column name to a primitive field.
 * @throws ValidationError for an unknown or nested column
 */
export function bindReference(name: string, schema: StructType): BoundReference {
  const found = resolvePath(schema, name, false) ?? resolvePath(schema, name, true);
  if (!found) {
    const available = listColumns(schema);
    throw new ValidationError(
      `unknown column '${name}'; available columns: ${available.length > 0 ? available.join(', ') : '(none)'}`,
    );
  }
  const { field, path } = found;
  if (typeof field.type !== 'string') {
    const leaves =
      field.type.type === 'struct'
        ? `; filter on its fields, e.g. '${path.join('.')}.${field.type.fields[0]?.name}'`
        : '';
    throw new ValidationError(
      `column '${path.join('.')}' is a ${field.type.type}, which cannot be filtered on${leaves}`,
    );
  }
  return {
    fieldId: field.id,
    name: path.join('.'),
    path,
    type: field.type as PrimitiveType,
    required: found.required,
  };
}

/** The field at a dotted path (through structs only), with the real names along the way. */
function resolvePath(
  schema: StructType,
  name: string,
  ignoreCase: boolean,
): { field: StructField; path: string[]; required: boolean } | undefined {
  // A top-level name that itself contains dots wins over a nested path.
  const whole = pick(schema.fields, name, ignoreCase);
  if (whole === 'ambiguous') return undefined;
  if (whole) return { field: whole, path: [whole.name], required: whole.required };
  const parts = name.split('.');
  let current: StructType = schema;
  const path: string[] = [];
  let required = true;
  for (let i = 0; i < parts.length; i++) {
    const field = pick(current.fields, parts[i], ignoreCase);
    if (!field || field === 'ambiguous') return undefined;
    path.push(field.name);
    // A field under an optional struct can be null even if it is itself required.
    required &&= field.required;
    if (i === parts.length - 1) return { field, path, required };
    if (!isStruct(field.type)) return undefined;
    current = field.type;
  }
  return undefined;
}

function pick(
  fields: StructField[],
  name: string,
  ignoreCase: boolean,
): StructField | 'ambiguous' | undefined {
  if (!ignoreCase) return fields.find((f) => f.name === name);
  const lower = name.toLowerCase();
  const matches = fields.filter((f) => f.name.toLowerCase() === lower);
  if (matches.length > 1) return 'ambiguous';
  return matches[0];
}

function isStruct(type: IcebergType): type is StructType {
  return typeof type !== 'string' && type.type === 'struct';
}

/** Every filterable column as a dotted name (primitive fields, through structs). Never throws. */
export function listColumns(schema: StructType, prefix = ''): string[] {
  const out: string[] = [];
  for (const field of schema.fields) {
    const name = `${prefix}${field.name}`;
    if (typeof field.type === 'string') out.push(name);
    else if (field.type.type === 'struct') out.push(...listColumns(field.type, `${name}.`));
  }
  return out;
}
