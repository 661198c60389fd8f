/**
 * One Iceberg primitive type → its Parquet leaf as Iceberg Java writes it: physical type, type length,
 * logical type with the matching converted type (for older readers), decimal scale and precision, and
 * how levels.ts and the value encoders find its values in the Arrow data.
 */
import { ValidationError } from '../../../errors.js';
import { decimalParams, fixedLength } from '../../../spec/conversions.js';
import type { PrimitiveType } from '../../../spec/types.js';
import type { LeafColumn, SchemaElement, ValueKind } from './parquet-schema.js';

/** Parquet physical types (parquet.thrift `Type`). */
export const Physical = {
  BOOLEAN: 0,
  INT32: 1,
  INT64: 2,
  FLOAT: 4,
  DOUBLE: 5,
  BYTE_ARRAY: 6,
  FIXED_LEN_BYTE_ARRAY: 7,
} as const;

/** parquet.thrift `ConvertedType`, the annotations older readers understand. */
export const Converted = {
  UTF8: 0,
  MAP: 1,
  LIST: 3,
  DECIMAL: 5,
  DATE: 6,
  TIME_MICROS: 8,
  TIMESTAMP_MICROS: 10,
} as const;

/** Fills the element's type and annotations; returns the leaf's descriptor. */
export function primitiveLeaf(
  type: PrimitiveType,
  element: SchemaElement,
  at: { path: string[]; names: string[]; def: number; rep: number },
  id: number | undefined,
): LeafColumn {
  if (id === undefined) throw new ValidationError(`field '${at.names.join('.')}' has no field id`);
  const leaf: LeafColumn = {
    path: at.path,
    name: at.names.join('.'),
    id,
    physical: Physical.INT32,
    kind: 'int32',
    typeLength: 0,
    maxDef: at.def,
    maxRep: at.rep,
    isString: false,
  };
  const set = (physical: number, kind: ValueKind) => {
    leaf.physical = physical;
    leaf.kind = kind;
    element.type = physical;
  };
  switch (type) {
    case 'boolean':
      set(Physical.BOOLEAN, 'boolean');
      return leaf;
    case 'int':
      set(Physical.INT32, 'int32');
      return leaf;
    case 'long':
      set(Physical.INT64, 'int64');
      return leaf;
    case 'float':
      set(Physical.FLOAT, 'float');
      return leaf;
    case 'double':
      set(Physical.DOUBLE, 'double');
      return leaf;
    case 'date':
      set(Physical.INT32, 'int32');
      element.convertedType = Converted.DATE;
      element.logicalType = { kind: 'DATE' };
      return leaf;
    case 'time':
      set(Physical.INT64, 'int64');
      element.convertedType = Converted.TIME_MICROS;
      element.logicalType = { kind: 'TIME', adjustedToUtc: false };
      return leaf;
    case 'timestamp':
    case 'timestamptz':
      set(Physical.INT64, 'int64');
      // The spec asks for TIMESTAMP_MICROS on local timestamps too, as parquet-mr writes it.
      element.convertedType = Converted.TIMESTAMP_MICROS;
      element.logicalType = { kind: 'TIMESTAMP', adjustedToUtc: type === 'timestamptz' };
      return leaf;
    case 'string':
      set(Physical.BYTE_ARRAY, 'bytes');
      element.convertedType = Converted.UTF8;
      element.logicalType = { kind: 'STRING' };
      leaf.isString = true;
      return leaf;
    case 'binary':
      set(Physical.BYTE_ARRAY, 'bytes');
      return leaf;
    case 'uuid':
      set(Physical.FIXED_LEN_BYTE_ARRAY, 'fixed');
      leaf.typeLength = 16;
      element.typeLength = 16;
      element.logicalType = { kind: 'UUID' };
      return leaf;
  }
  const decimal = decimalParams(type);
  if (decimal) {
    const { precision, scale } = decimal;
    if (precision < 1 || precision > 38 || scale > precision) {
      throw new ValidationError(`unsupported decimal type '${type}' (precision 1..38, scale ≤ precision)`);
    }
    if (precision <= 9) set(Physical.INT32, 'decimal32');
    else if (precision <= 18) set(Physical.INT64, 'decimal64');
    else {
      set(Physical.FIXED_LEN_BYTE_ARRAY, 'decimalFixed');
      leaf.typeLength = decimalBytes(precision);
      element.typeLength = leaf.typeLength;
    }
    element.convertedType = Converted.DECIMAL;
    element.scale = scale;
    element.precision = precision;
    element.logicalType = { kind: 'DECIMAL', scale, precision };
    return leaf;
  }
  const length = fixedLength(type);
  if (length !== undefined) {
    if (length < 1) throw new ValidationError(`unsupported fixed type '${type}'`);
    set(Physical.FIXED_LEN_BYTE_ARRAY, 'fixed');
    leaf.typeLength = length;
    element.typeLength = length;
    return leaf;
  }
  throw new ValidationError(`unknown Iceberg type '${String(type)}'`);
}

/** Fewest bytes whose two's complement holds every unscaled value of `precision` digits (Iceberg's rule). */
export function decimalBytes(precision: number): number {
  const limit = 10n ** BigInt(precision);
  let bytes = 1;
  while (2n ** BigInt(8 * bytes - 1) - 1n < limit) bytes++;
  return bytes;
}
