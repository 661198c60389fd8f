/**
 * The JSON form of a route's `aggregate` (aggregate-config.ts reads it and documents each setting).
 * Part of the one route schema (routing/route-schema.ts); what a schema cannot say (the SQL parses and
 * reads the route's topic and columns, brokers are host:port, no plain TCP with MSK IAM)
 * aggregate-config.ts checks after it.
 */
import { type Static, Type } from '@sinclair/typebox';
import { NonEmptyString, OneOf, Settings } from '../check-settings.js';

export const EMIT_AUTHS = ['none', 'aws-msk-iam'] as const;

const SAFE = Number.MAX_SAFE_INTEGER;

export const EmitSettingsSchema = Settings({
  topic: Type.String({ pattern: '^[A-Za-z0-9._-]{1,249}$', expected: 'a Kafka topic name' }),
  // Required: a Lambda has no other broker address to produce to, and an emit that silently never
  // happens would be worse than a start-up error.
  bootstrapServers: Type.Union([
    NonEmptyString({ expected: '"host:port[,host:port...]"' }),
    Type.Array(NonEmptyString({ expected: '"host:port"' }), { minItems: 1 }),
  ]),
  auth: Type.Optional(OneOf(EMIT_AUTHS)),
  tls: Type.Optional(Type.Boolean()),
});

/** A route's `aggregate`: a windowed SQL aggregation of its mapped records. */
export const AggregateSettingsSchema = Settings(
  {
    sql: Type.String({
      pattern: '\\S',
      expected: "a SELECT ... FROM <topic> GROUP BY ..., TUMBLE(<ts>, INTERVAL 'n' UNIT) query",
    }),
    allowedLatenessSeconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: SAFE, expected: 'a whole number of seconds, 0 or more' }),
    ),
    partitions: Type.Optional(
      Type.Integer({ minimum: 1, maximum: SAFE, expected: "the source topic's partition count (≥ 1)" }),
    ),
    emit: Type.Optional(EmitSettingsSchema),
  },
  { description: 'A windowed aggregation of the mapped records instead of the records themselves.' },
);

/** An `aggregate` as written (before aggregate-config.ts reads it into an AggregateConfig). */
export type AggregateSettings = Static<typeof AggregateSettingsSchema>;
