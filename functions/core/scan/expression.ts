/**
 * Row filters as plain data: an unbound `Expression` names columns by (dotted) name and carries
 * literals as written; `bindExpression` (bind-expression.ts) turns it into a `BoundExpression` whose
 * terms carry the field id and type and whose literals are in the column type's `Value`
 * representation. Evaluators (rows, partitions, manifests, file metrics) work on the bound form.
 *
 * Semantics are SQL's three-valued logic: a comparison with a null value is unknown (so `x != 3`
 * does not match a null `x`), `not unknown` is unknown, and a row matches only when the filter is
 * true. `is-null`/`not-null`/`is-nan`/`not-nan` are never unknown (`not-nan` holds for null, as in
 * Iceberg). NaN compares false with everything (IEEE), so only `not-eq`/`not-in` match a NaN.
 */
import type { PrimitiveType, Value } from '../spec/types.js';

export type ComparisonOp = 'eq' | 'not-eq' | 'lt' | 'lt-eq' | 'gt' | 'gt-eq';
export type SetOp = 'in' | 'not-in';
export type UnaryOp = 'is-null' | 'not-null' | 'is-nan' | 'not-nan';

/** A numeric literal kept as its text until it is bound, so decimals and longs stay exact. */
export interface NumberLiteral {
  type: 'number';
  text: string;
}

/**
 * A literal before binding: as parsed (number text, string, boolean), or as given by code
 * (a number, a bigint — micros for time/timestamp columns —, bytes for binary/fixed).
 */
export type Literal = NumberLiteral | string | number | bigint | boolean | Uint8Array;

export type Expression =
  | { op: 'true' }
  | { op: 'false' }
  | { op: 'and'; left: Expression; right: Expression }
  | { op: 'or'; left: Expression; right: Expression }
  | { op: 'not'; child: Expression }
  | { op: ComparisonOp; term: string; value: Literal }
  | { op: SetOp; term: string; values: Literal[] }
  | { op: UnaryOp; term: string };

/** A column resolved against a schema: its id, its type, and the names leading to it in a row. */
export interface BoundReference {
  fieldId: number;
  /** The dotted name, as the schema spells it. */
  name: string;
  /** Row keys from the top-level struct down to the field (through structs only). */
  path: string[];
  type: PrimitiveType;
  required: boolean;
}

export type BoundExpression =
  | { op: 'true' }
  | { op: 'false' }
  | { op: 'and'; left: BoundExpression; right: BoundExpression }
  | { op: 'or'; left: BoundExpression; right: BoundExpression }
  | { op: 'not'; child: BoundExpression }
  | { op: ComparisonOp; term: BoundReference; value: Value }
  | { op: SetOp; term: BoundReference; values: Value[] }
  | { op: UnaryOp; term: BoundReference };

export type BoundPredicate = Extract<BoundExpression, { term: BoundReference }>;
