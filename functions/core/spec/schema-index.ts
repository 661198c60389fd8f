import type { IcebergType, Schema, StructField, StructType } from './types.js';

const indexCache = new WeakMap<StructType, Map<number, StructField>>();

/** Every field (nested too, list elements and map keys/values as synthetic fields) by id. */
export function indexById(schema: StructType): Map<number, StructField> {
  let index = indexCache.get(schema);
  if (index) return index;
  index = new Map();
  const visit = (type: IcebergType): void => {
    if (typeof type === 'string') return;
    if (type.type === 'struct') {
      for (const f of type.fields) {
        index!.set(f.id, f);
        visit(f.type);
      }
    } else if (type.type === 'list') {
      index!.set(type['element-id'], {
        id: type['element-id'],
        name: 'element',
        required: type['element-required'],
        type: type.element,
      });
      visit(type.element);
    } else {
      index!.set(type['key-id'], { id: type['key-id'], name: 'key', required: true, type: type.key });
      index!.set(type['value-id'], {
        id: type['value-id'],
        name: 'value',
        required: type['value-required'],
        type: type.value,
      });
      visit(type.key);
      visit(type.value);
    }
  };
  visit(schema);
  indexCache.set(schema, index);
  return index;
}

export function findField(schema: Schema | StructType, id: number): StructField | undefined {
  return indexById(schema).get(id);
}

/** Top-level or dotted (`a.b.c`, through structs only) field lookup by name. */
export function findFieldByName(schema: StructType, name: string): StructField | undefined {
  let current: StructType = schema;
  const parts = name.split('.');
  for (let i = 0; i < parts.length; i++) {
    const field = current.fields.find((f) => f.name === parts[i]);
    if (!field) return undefined;
    if (i === parts.length - 1) return field;
    if (typeof field.type === 'string' || field.type.type !== 'struct') return undefined;
    current = field.type;
  }
  return undefined;
}

/** Highest field id in a type tree (for last-column-id). */
export function maxFieldId(type: IcebergType): number {
  if (typeof type === 'string') return 0;
  if (type.type === 'struct') return type.fields.reduce((m, f) => Math.max(m, f.id, maxFieldId(f.type)), 0);
  if (type.type === 'list') return Math.max(type['element-id'], maxFieldId(type.element));
  return Math.max(type['key-id'], type['value-id'], maxFieldId(type.key), maxFieldId(type.value));
}
