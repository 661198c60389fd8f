import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import {
  isPrimitive,
  parseSchema,
  parseType,
  schemaFieldPaths,
  typeToString,
} from '../../../functions/core/spec/schema.js';
import { deleteAt, setAt } from './json-edit.js';

/** A fresh copy of a schema JSON exercising every kind of type, for tests to break one piece of. */
function sampleSchemaJson(): Record<string, unknown> {
  return {
    type: 'struct',
    'schema-id': 3,
    'identifier-field-ids': [1, 10],
    'x-vendor': { keep: true },
    fields: [
      { id: 1, name: 'id', required: true, type: 'long', doc: 'the key' },
      { id: 2, name: 'price', required: false, type: 'decimal(38, 10)' },
      { id: 3, name: 'hash', required: false, type: 'fixed[16]', 'x-extra': 'kept' },
      {
        id: 4,
        name: 'tags',
        required: false,
        type: { type: 'list', 'element-id': 5, element: 'string', 'element-required': true },
      },
      {
        id: 6,
        name: 'attrs',
        required: false,
        type: {
          type: 'map',
          'key-id': 7,
          key: 'string',
          'value-id': 8,
          value: 'double',
          'value-required': false,
        },
      },
      {
        id: 9,
        name: 'nested',
        required: true,
        type: {
          type: 'struct',
          fields: [
            { id: 10, name: 'code', required: true, type: 'string' },
            { id: 11, name: 'at', required: false, type: 'timestamptz', 'initial-default': null },
          ],
        },
      },
      ...['boolean', 'int', 'float', 'date', 'time', 'timestamp', 'uuid', 'binary'].map((type, i) => ({
        id: 20 + i,
        name: `p_${type}`,
        required: false,
        type,
      })),
    ],
  };
}

describe('parseSchema', () => {
  it('accepts every type and keeps unknown keys, deep-equal to its input', () => {
    // Prepare
    const json = sampleSchemaJson();

    // Act
    const schema = parseSchema(json);

    // Assess
    expect(schema).toEqual(json);
    expect(schema['x-vendor']).toEqual({ keep: true });
    expect(JSON.parse(JSON.stringify(schema))).toEqual(json);
  });

  it('names the JSON path of an unknown type', () => {
    // Prepare
    const json = sampleSchemaJson();
    setAt(json, 'fields.2.type', 'strin');

    // Act / Assess
    expect(() => parseSchema(json)).toThrow(new ValidationError("fields[2].type: unknown type 'strin'"));
  });

  it('names nested paths too', () => {
    const json = sampleSchemaJson();
    setAt(json, 'fields.5.type.fields.1.type', {
      type: 'list',
      'element-id': 30,
      element: 'strnig',
      'element-required': false,
    });
    expect(() => parseSchema(json)).toThrow("fields[5].type.fields[1].type.element: unknown type 'strnig'");
  });

  it.each([
    ['decimal(39, 2)', /precision must be 1–38/],
    ['decimal(0,0)', /precision must be 1–38/],
    ['decimal(5, 6)', /scale 6 exceeds precision 5/],
    ['fixed[0]', /fixed length must be at least 1/],
    ['fixed[ 4 ]', /unknown type/],
    ['Long', /unknown type 'Long'/],
  ])('rejects the primitive %s', (type, message) => {
    const json = sampleSchemaJson();
    setAt(json, 'fields.1.type', type);
    expect(() => parseSchema(json)).toThrow(message);
  });

  it('rejects a field id used twice anywhere in the tree', () => {
    const json = sampleSchemaJson();
    setAt(json, 'fields.4.type.value-id', 10);
    expect(() => parseSchema(json)).toThrow(/field id 10 is already used by fields\[4\]\.type\.value/);
  });

  it('rejects two fields of one struct with the same name, but not in different structs', () => {
    const json = sampleSchemaJson();
    setAt(json, 'fields.5.type.fields.1.name', 'id');
    expect(() => parseSchema(json)).not.toThrow();
    setAt(json, 'fields.5.type.fields.1.name', 'code');
    expect(() => parseSchema(json)).toThrow("fields[5].type.fields[1]: duplicate field name 'code'");
  });

  it.each([
    ['a missing name', 'fields.0.name', undefined, 'fields[0].name: is required'],
    ['a non-boolean required', 'fields.0.required', 'yes', 'fields[0].required: expected true or false'],
    ['a fractional id', 'fields.0.id', 1.5, 'fields[0].id: expected an integer'],
    ['a missing schema-id', 'schema-id', undefined, 'schema-id: is required'],
    ['a non-struct root', 'type', 'list', 'type: a schema must be a struct'],
    ['an unknown nested type', 'fields.3.type.type', 'set', "fields[3].type.type: unknown nested type 'set'"],
    [
      'a list without element-required',
      'fields.3.type.element-required',
      undefined,
      'fields[3].type.element-required: is required',
    ],
  ])('rejects %s', (_label, path, value, message) => {
    const json = sampleSchemaJson();
    if (value === undefined) deleteAt(json, path);
    else setAt(json, path, value);
    expect(() => parseSchema(json)).toThrow(message);
  });

  it.each([
    [[2], /must be required/],
    [[20 + 2], /must be required/], // p_float is optional too
    [[5], /not a field of this schema/], // a list element
    [[99], /not a field of this schema/],
  ])('rejects identifier-field-ids %j', (ids, message) => {
    const json = sampleSchemaJson();
    setAt(json, 'identifier-field-ids', ids);
    expect(() => parseSchema(json)).toThrow(message);
  });

  it('rejects float identifiers and identifiers inside optional structs', () => {
    const json = sampleSchemaJson();
    setAt(json, 'fields.8.required', true); // p_float
    setAt(json, 'identifier-field-ids', [22]);
    expect(() => parseSchema(json)).toThrow(/must not be a float or double/);
    setAt(json, 'identifier-field-ids', [10]);
    setAt(json, 'fields.5.required', false);
    expect(() => parseSchema(json)).toThrow(/must not be nested in the optional field 'nested'/);
  });
});

describe('parseType, typeToString, schemaFieldPaths', () => {
  it('reads a primitive name or a nested object', () => {
    expect(parseType('decimal(9,2)')).toBe('decimal(9,2)');
    expect(isPrimitive(parseType('uuid'))).toBe(true);
    const map = parseType({
      type: 'map',
      'key-id': 1,
      key: 'string',
      'value-id': 2,
      value: 'int',
      'value-required': true,
    });
    expect(isPrimitive(map)).toBe(false);
    expect(typeToString(map)).toBe('map<string, int>');
    expect(() => parseType(42)).toThrow('document: expected an object, got number 42');
  });

  it('prints nested types and indexes full dotted names as Iceberg Java does', () => {
    // Prepare
    const schema = parseSchema(sampleSchemaJson());

    // Act
    const paths = schemaFieldPaths(schema);

    // Assess
    expect(paths.get(5)).toBe('tags.element');
    expect(paths.get(7)).toBe('attrs.key');
    expect(paths.get(8)).toBe('attrs.value');
    expect(paths.get(11)).toBe('nested.at');
    expect(typeToString(schema.fields[5].type)).toBe('struct<code: string, at: timestamptz>');
    expect(typeToString(schema.fields[3].type)).toBe('list<string>');
  });
});
