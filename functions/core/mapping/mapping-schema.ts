/**
 * The JSON form of a route's `mapping` (mapping-config.ts reads it; its file comment shows an example).
 * Part of the one route schema (routing/route-schema.ts); what a schema cannot say (a column name
 * without dots, a known Iceberg type, a pattern that compiles, one source per column) mapping-config.ts
 * checks after it.
 */
import { type Static, Type } from '@sinclair/typebox';
import { NonEmptyString, OneOf, Settings } from '../check-settings.js';

export const KEY_FORMATS = ['string', 'binary', 'long', 'json'] as const;
/** Units of numbers: since the epoch (timestamps, dates), or since midnight (times; not `days`). */
export const EPOCH_UNITS = ['days', 'seconds', 'millis', 'micros', 'nanos'] as const;

const Name = NonEmptyString({ expected: 'a column name' });
const FieldPath = NonEmptyString({ expected: 'a dotted field path like "shipping.city"' });

const KeyColumnSettings = Settings(
  {
    column: Type.Optional(Name),
    as: Type.Optional(OneOf(KEY_FORMATS)),
    required: Type.Optional(Type.Boolean()),
  },
  { description: 'The key as one column (default column "key", as string).' },
);

const KeyFieldsSettings = Settings(
  {
    fields: Type.Literal(true),
    prefix: Type.Optional(Type.String()),
    required: Type.Optional(Type.Boolean()),
  },
  { description: "A JSON-object key's fields as columns." },
);

const HeaderSettings = Settings({
  header: NonEmptyString({ expected: 'a header name' }),
  column: Type.Optional(Name),
  as: Type.Optional(OneOf(['string', 'binary'] as const)),
  required: Type.Optional(Type.Boolean()),
});

const ColumnRuleSettings = Settings({
  from: Type.Optional(FieldPath),
  type: Type.Optional(NonEmptyString({ expected: 'an Iceberg primitive type like "long"' })),
  format: Type.Optional(NonEmptyString({ expected: 'a pattern like "yyyy-MM-dd HH:mm:ss"' })),
  zone: Type.Optional(NonEmptyString({ expected: 'UTC or an offset like +02:00' })),
  epoch: Type.Optional(OneOf(EPOCH_UNITS)),
  default: Type.Optional(Type.Unknown({ description: 'JSON value used when the field is missing' })),
});

/** A route's `mapping`: what becomes columns. Every key optional. */
export const MappingSettingsSchema = Settings(
  {
    value: Type.Optional(Type.Union([Type.Literal('fields'), Settings({ column: Name })])),
    flatten: Type.Optional(
      Type.Union([
        Type.Boolean(),
        Settings({
          separator: Type.Optional(NonEmptyString()),
          maxDepth: Type.Optional(Type.Integer({ minimum: 1 })),
        }),
      ]),
    ),
    exclude: Type.Optional(Type.Array(FieldPath)),
    key: Type.Optional(Type.Union([KeyColumnSettings, KeyFieldsSettings])),
    headers: Type.Optional(Type.Array(HeaderSettings)),
    timestamp: Type.Optional(Type.Union([Name, Settings({ column: Name })])),
    columns: Type.Optional(Type.Record(Type.String(), ColumnRuleSettings)),
  },
  {
    description: 'What becomes columns: value fields, key, headers, timestamp; renames, coercions, defaults.',
  },
);

/** A `mapping` as written (before mapping-config.ts reads it into a MappingConfig). */
export type MappingSettings = Static<typeof MappingSettingsSchema>;
