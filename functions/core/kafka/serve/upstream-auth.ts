/**
 * How kafka-serve's own connections to the cluster are secured: TLS (and mTLS) and SASL PLAIN,
 * SCRAM-SHA-256/512 or MSK IAM, from the same KafkaConnectionOptions every other Kafka command takes
 * (kafka-client.ts turns them into kafkajs's `ssl` and `sasl`, signing MSK IAM tokens the same way).
 * The mechanisms' messages are kafkajs's own authenticators; only the transport (SaslHandshake v1 and
 * SaslAuthenticate v1 on the proxy's raw link) is written here, because the proxy's links are not
 * kafkajs connections.
 *
 * floe authenticates as itself: a client's SASL identity is checked at the listener and never
 * forwarded, so the cluster sees floe's principal on every proxied request and applies floe's ACLs.
 */
import type { ConnectionOptions } from 'node:tls';
import type { KafkaConfig } from 'kafkajs';
import { LakeError } from '../../errors.js';
import { type KafkaConnectionOptions, kafkaConfigOf } from '../kafka-client.js';
import { Decoder, Encoder, readArray, SASL_AUTHENTICATORS, type SaslRound } from './kafkajs-protocol.js';
import { ApiKey } from './wire.js';

/** The cluster refused floe's credentials or mechanism: a retry with the same ones cannot help. */
export class UpstreamAuthError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
  }
}

/** kafkajs's SASL configuration (its built-in mechanisms, or a custom one by name). */
export type UpstreamSasl = NonNullable<KafkaConfig['sasl']>;

export interface UpstreamSecurity {
  /** TLS options for node:tls (CA, client certificate and key as PEM). */
  tls?: ConnectionOptions;
  sasl?: UpstreamSasl;
}

/** What the proxy's links send during authentication (a request of its own, answered). */
export type LinkRequest = (apiKey: number, version: number, body: Buffer) => Promise<Buffer>;

/**
 * The TLS and SASL of the connection options, read once (PEM files, MSK IAM signer).
 * @throws ValidationError for unreadable PEM files, half an mTLS pair or MSK IAM without TLS
 * @throws MskIamAuthError when MSK IAM is asked for and its signer package cannot be loaded
 */
export async function upstreamSecurityOf(
  options: Pick<KafkaConnectionOptions, 'tls' | 'sasl'>,
): Promise<UpstreamSecurity> {
  const config = await kafkaConfigOf({ brokers: [], ...options, log: () => undefined });
  const tls =
    config.ssl === undefined || config.ssl === false ? undefined : config.ssl === true ? {} : config.ssl;
  return { tls: tls as ConnectionOptions | undefined, sasl: config.sasl };
}

const QUIET = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/**
 * Authenticates one fresh link: SaslHandshake v1, then the mechanism's SaslAuthenticate v1 rounds.
 * @throws UpstreamAuthError when the cluster does not offer the mechanism or refuses the credentials
 * @throws UpstreamError (from `send`) when the connection fails meanwhile
 */
export async function authenticateLink(
  send: LinkRequest,
  sasl: UpstreamSasl,
  broker: { host: string; port: number },
): Promise<void> {
  const mechanism = sasl.mechanism.toUpperCase();
  const provider = SASL_AUTHENTICATORS[mechanism];
  if (!provider)
    throw new UpstreamAuthError(`SASL mechanism ${mechanism} is not supported towards the cluster`);
  const where = `broker ${broker.host}:${broker.port}`;
  const handshake = new Decoder(
    await send(ApiKey.SaslHandshake, 1, new Encoder().writeString(mechanism).buffer),
  );
  const code = handshake.readInt16();
  const enabled = readArray(handshake, (d) => d.readString() ?? '');
  if (code !== 0 || !enabled.includes(mechanism))
    throw new UpstreamAuthError(
      `${where} does not take SASL ${mechanism} (error ${code}; it offers ${enabled.join(', ') || 'none'}): check --sasl-mechanism and the listener's port`,
    );
  const saslAuthenticate = async (round: SaslRound): Promise<unknown> => {
    // kafkajs's rounds encode their bytes already size-prefixed, as SaslAuthenticate's body wants them.
    const answer = new Decoder(await send(ApiKey.SaslAuthenticate, 1, await round.request.encode()));
    const errorCode = answer.readInt16();
    const message = answer.readString();
    const bytes = answer.readBytes() ?? Buffer.alloc(0);
    if (errorCode !== 0) throw new UpstreamAuthError(`error ${errorCode}${message ? `: ${message}` : ''}`);
    if (!round.response) return undefined;
    return round.response.parse(await round.response.decode(new Encoder().writeBytes(bytes).buffer));
  };
  try {
    await provider(sasl)({ ...broker, logger: QUIET, saslAuthenticate }).authenticate();
  } catch (cause) {
    // A broken connection is the link's retryable error, not a refusal.
    if (cause instanceof LakeError && cause.retryable) throw cause;
    throw new UpstreamAuthError(
      `${where} refused floe's SASL ${mechanism} authentication: ${(cause as Error).message} (check the user and password, FLOE_KAFKA_SASL_PASSWORD or the AWS credentials)`,
      { cause },
    );
  }
}
