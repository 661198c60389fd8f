/**
 * The JSON form of a route's `format` (format-config.ts reads it and documents each setting). Part of
 * the one route schema (routing/route-schema.ts); what a schema cannot say (a URL that parses, one way
 * of naming credentials, a registry when a side is `confluent`) format-config.ts checks after it.
 */
import { type Static, Type } from '@sinclair/typebox';
import { NonEmptyString, OneOf, Settings } from '../check-settings.js';

export const PAYLOAD_FORMATS = ['json', 'string', 'confluent', 'glue', 'auto'] as const;

/** Not only spaces: a blank secret name or region would fail far from where it was written. */
const Text = () => Type.String({ pattern: '\\S', expected: 'a non-empty string' });

export const RegistrySettingsSchema = Settings({
  url: NonEmptyString({ expected: 'the registry URL (http:// or https://)' }),
  basicAuth: Type.Optional(Text()),
  bearerToken: Type.Optional(Text()),
  credentialsSecretArn: Type.Optional(Text()),
  credentialsSecretArnEnv: Type.Optional(Text()),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 120_000 })),
});

/** A route's `format`: how record values and keys are decoded. */
export const FormatSettingsSchema = Settings(
  {
    value: Type.Optional(OneOf(PAYLOAD_FORMATS)),
    key: Type.Optional(OneOf(PAYLOAD_FORMATS)),
    registry: Type.Optional(RegistrySettingsSchema),
    glue: Type.Optional(Settings({ registryName: Type.Optional(Text()), region: Type.Optional(Text()) })),
  },
  { description: 'How value (and key) bytes are decoded: JSON, Confluent or Glue registry formats.' },
);

/** A `format` as written (before format-config.ts reads it into a FormatConfig). */
export type FormatSettings = Static<typeof FormatSettingsSchema>;
