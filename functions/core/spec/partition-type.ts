import { ValidationError } from '../errors.js';
import type { IcebergType, PartitionSpec, Schema, StructType, Transform } from './types.js';
import { findField } from './schema-index.js';

/** The type a transform produces from a source type (Iceberg spec, "Partition Transforms"). */
export function transformResultType(transform: Transform, source: IcebergType): IcebergType {
  if (transform === 'identity' || transform.startsWith('truncate[')) return source;
  if (transform.startsWith('bucket[')) return 'int';
  if (transform === 'day') return 'date';
  if (transform === 'year' || transform === 'month' || transform === 'hour') return 'int';
  if (transform === 'void') return source;
  throw new ValidationError(`unknown partition transform '${transform}'`);
}

/** The partition tuple's struct type, with the partition field ids (1000+) as field ids. */
export function partitionType(spec: PartitionSpec, schema: Schema): StructType {
  return {
    type: 'struct',
    fields: spec.fields.map((f) => {
      const source = findField(schema, f['source-id']);
      if (!source) {
        throw new ValidationError(
          `partition field '${f.name}' has source-id ${f['source-id']}, not in schema ${schema['schema-id']}`,
        );
      }
      return {
        id: f['field-id'],
        name: f.name,
        required: false,
        type: transformResultType(f.transform, source.type),
      };
    }),
  };
}
