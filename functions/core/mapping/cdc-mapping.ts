/**
 * What a CDC route's `mapping` may say. A change event's row image is the row, so projection
 * (a value column, flattening, exclusions, renames, defaults, the key, headers, the record timestamp)
 * has nothing to apply to; what does apply is how a column's values are written: type rules
 * (`columns.<col>.type` with `format`, `zone` or `epoch`), e.g. Debezium's epoch numbers when its
 * JsonConverter sends no Connect schema (`"updated_at": { "type": "timestamptz", "epoch": "micros" }`,
 * `"birth_date": { "type": "date", "epoch": "days" }`). Anything else is refused with the reason,
 * never silently ignored.
 */
import { ValidationError } from '../errors.js';
import { canPromote, samePrimitive } from './evolution/promotions.js';
import type { Coercion } from './coercions.js';
import type { MappingConfig } from './mapping-config.js';
import { fieldAtPath } from './record-mapper.js';
import type { Schema } from '../spec/types.js';

const WHY = "a change event's row image is the row; only columns.<column> type rules apply to a CDC table";

/**
 * @throws ValidationError naming the first part of `mapping` a CDC table cannot apply (`path` prefixes it)
 */
export function checkCdcMapping(mapping: MappingConfig | undefined, path: string): void {
  if (!mapping) return;
  const refuse = (part: string): never => {
    throw new ValidationError(`${path}.${part}: not applied to debezium/upsert tables (${WHY})`);
  };
  if (mapping.value.kind !== 'fields') refuse('value');
  if (mapping.flatten) refuse('flatten');
  if (mapping.exclude.length > 0) refuse('exclude');
  if (mapping.key) refuse('key');
  if (mapping.headers.length > 0) refuse('headers');
  if (mapping.timestamp) refuse('timestamp');
  for (const rule of mapping.columns) {
    const at = `columns.${rule.column}`;
    if (rule.from !== undefined) refuse(`${at}.from`);
    if (rule.default !== undefined) refuse(`${at}.default`);
    if (!rule.type) refuse(`${at} (a rule without "type")`);
  }
}

/**
 * The coercions of a CDC route's type rules by column path, checked against the table: a column it
 * has is a primitive and holds the rule's type (the same, or one that widens into it); one it does
 * not have yet gets the rule's type when its field first arrives (schema evolution).
 * @throws ValidationError for a part CDC cannot apply (checkCdcMapping) or a rule that does not fit
 */
export function cdcCoercions(
  mapping: MappingConfig | undefined,
  schema: Schema,
  path = 'mapping',
): Map<string, Coercion> {
  checkCdcMapping(mapping, path);
  const out = new Map<string, Coercion>();
  for (const rule of mapping?.columns ?? []) {
    const at = `${path}.columns.${rule.column}`;
    const { type } = rule;
    if (!type) continue; // refused by checkCdcMapping
    const field = fieldAtPath(schema, rule.column.split('.'));
    // A column the table does not have yet: when the field appears, evolution adds it with the rule's type.
    if (!field) {
      out.set(rule.column, { ...rule, type });
      continue;
    }
    if (typeof field.type !== 'string') {
      throw new ValidationError(
        `${at}: column '${rule.column}' is a ${field.type.type}; a type rule needs a primitive column`,
      );
    }
    if (!samePrimitive(type, field.type) && !canPromote(type, field.type)) {
      throw new ValidationError(
        `${at}.type: the rule reads ${type} values, which the ${field.type} column '${rule.column}' cannot hold`,
      );
    }
    out.set(rule.column, { ...rule, type });
  }
  return out;
}
