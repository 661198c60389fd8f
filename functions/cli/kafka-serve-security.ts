/**
 * `floe kafka-serve`'s security flags. Towards the cluster: the flags every Kafka command takes
 * (`--tls`, `--tls-ca`, `--tls-cert`, `--tls-key`, `--sasl-mechanism`, `--sasl-username`,
 * FLOE_KAFKA_SASL_PASSWORD, `--aws-region`), read by kafka-options.ts's connectionFromOptions, so
 * there is one way to read connection options. Towards clients: `--listener-*` flags, because
 * `--tls-cert`/`--tls-key` already name floe's client certificate to the cluster (and `floe serve`'s
 * `--https-*` name an HTTP server's), and Kafka itself calls the client-facing side a listener.
 *
 * Users come from `--listener-sasl-users FILE` or FLOE_KAFKA_SERVE_USERS (`user:password` lines),
 * never from the command line where `ps` shows them. A listener reachable from other machines must be
 * encrypted and authenticate its clients (TLS with SASL or with required client certificates), or the
 * user says `--insecure`.
 */
import { readFile } from 'node:fs/promises';
import type { TlsOptions } from 'node:tls';
import { ValidationError } from '../core/errors.js';
import type { KafkaConnectionOptions } from '../core/kafka/kafka-client.js';
import {
  LISTENER_MECHANISMS,
  type ListenerMechanism,
  type ListenerSasl,
  SaslUsers,
} from '../core/kafka/serve/listener-sasl.js';
import { connectionFromOptions, KAFKA_CONNECTION_FLAGS } from './kafka-options.js';
import { UsageError } from './options.js';
import { isLoopbackHost } from './serve-security.js';

export const USERS_ENV = 'FLOE_KAFKA_SERVE_USERS';

export const KAFKA_SERVE_SECURITY_FLAGS = {
  ...KAFKA_CONNECTION_FLAGS,
  'listener-tls-cert': { type: 'string' },
  'listener-tls-key': { type: 'string' },
  'listener-tls-ca': { type: 'string' },
  'listener-tls-client-auth': { type: 'string' },
  'listener-sasl-users': { type: 'string' },
  'listener-sasl-mechanisms': { type: 'string' },
  insecure: { type: 'boolean' },
} as const;

export type KafkaServeSecurityValues = {
  [K in keyof typeof KAFKA_SERVE_SECURITY_FLAGS]?: (typeof KAFKA_SERVE_SECURITY_FLAGS)[K]['type'] extends 'boolean'
    ? boolean
    : string;
};

export interface KafkaServeSecurity {
  listener: { tls?: TlsOptions; sasl?: ListenerSasl };
  upstream: Pick<KafkaConnectionOptions, 'tls' | 'sasl'>;
  /** What the listener is open to, for the start-up line: `TLS, SASL SCRAM-SHA-256 (2 users)`. */
  listenerText: string;
  /** How floe reaches the cluster: `TLS, SASL scram-sha-512 as floe`. */
  upstreamText: string;
  /** The warning to print at start-up, if any. */
  warning?: string;
}

async function readFlagFile(path: string, flag: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new UsageError(`${flag} ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
}

function mechanismsOf(text: string | undefined): ListenerMechanism[] {
  if (text === undefined) return [...LISTENER_MECHANISMS];
  const out: ListenerMechanism[] = [];
  for (const part of text.split(',').map((m) => m.trim().toUpperCase())) {
    if (!LISTENER_MECHANISMS.includes(part as ListenerMechanism))
      throw new UsageError(
        `--listener-sasl-mechanisms takes ${LISTENER_MECHANISMS.join(', ')} (comma-separated), got '${part}'`,
      );
    if (!out.includes(part as ListenerMechanism)) out.push(part as ListenerMechanism);
  }
  return out;
}

async function listenerSasl(
  values: KafkaServeSecurityValues,
  env: NodeJS.ProcessEnv,
): Promise<ListenerSasl | undefined> {
  const file = values['listener-sasl-users'];
  if (file === undefined && !env[USERS_ENV]) {
    if (values['listener-sasl-mechanisms'] !== undefined)
      throw new UsageError(
        `--listener-sasl-mechanisms needs users: --listener-sasl-users FILE or ${USERS_ENV}`,
      );
    return undefined;
  }
  const mechanisms = mechanismsOf(values['listener-sasl-mechanisms']);
  const text = file !== undefined ? (await readFlagFile(file, '--listener-sasl-users')).toString('utf8') : '';
  try {
    const users = SaslUsers.parse(`${text}\n${env[USERS_ENV] ?? ''}`, file ?? USERS_ENV, mechanisms);
    if (users.size === 0) throw new UsageError(`${file ?? USERS_ENV} names no user (user:password lines)`);
    return { mechanisms, users };
  } catch (error) {
    if (error instanceof ValidationError) throw new UsageError(error.message);
    throw error;
  }
}

async function listenerTls(values: KafkaServeSecurityValues): Promise<TlsOptions | undefined> {
  const cert = values['listener-tls-cert'];
  const key = values['listener-tls-key'];
  const ca = values['listener-tls-ca'];
  const clientAuth = values['listener-tls-client-auth'] ?? 'none';
  if (clientAuth !== 'none' && clientAuth !== 'required')
    throw new UsageError(`--listener-tls-client-auth takes required or none, got '${clientAuth}'`);
  if ((cert === undefined) !== (key === undefined))
    throw new UsageError('--listener-tls-cert and --listener-tls-key go together');
  if (cert === undefined || key === undefined) {
    if (ca !== undefined || clientAuth !== 'none')
      throw new UsageError(
        '--listener-tls-ca and --listener-tls-client-auth need --listener-tls-cert/--listener-tls-key',
      );
    return undefined;
  }
  if ((ca === undefined) !== (clientAuth === 'none'))
    throw new UsageError(
      '--listener-tls-ca (the CA of client certificates) and --listener-tls-client-auth required go together',
    );
  return {
    cert: await readFlagFile(cert, '--listener-tls-cert'),
    key: await readFlagFile(key, '--listener-tls-key'),
    ...(ca === undefined
      ? {}
      : { ca: await readFlagFile(ca, '--listener-tls-ca'), requestCert: true, rejectUnauthorized: true }),
  };
}

/**
 * Reads both sides' security flags and checks the binding rule.
 * @throws UsageError for half a TLS pair, unreadable files, a bad users file or mechanism, the
 *   upstream connection flags' errors, and a non-loopback host neither encrypted nor authenticating
 *   its clients without `--insecure`
 */
export async function kafkaServeSecurityFrom(
  values: KafkaServeSecurityValues,
  host: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<KafkaServeSecurity> {
  const tls = await listenerTls(values);
  const sasl = await listenerSasl(values, env);
  const mtls = tls?.requestCert === true;
  const { tls: upTls, sasl: upSasl } = connectionFromOptions(
    { ...values, 'bootstrap-servers': values['bootstrap-servers'] ?? '' },
    env,
  );
  const loopback = isLoopbackHost(host);
  const secure = tls !== undefined && (sasl !== undefined || mtls);
  if (!loopback && !secure && !values.insecure) {
    const missing =
      tls === undefined ? 'TLS (--listener-tls-cert/--listener-tls-key)' : 'client authentication';
    throw new UsageError(
      `--host ${host} is reachable from other machines and the listener has no ${missing}: give TLS and SASL users (--listener-sasl-users or ${USERS_ENV}) or client certificates (--listener-tls-ca), or add --insecure to accept that anyone who can connect reads the tables`,
    );
  }
  const parts = [tls ? (mtls ? 'TLS with client certificates' : 'TLS') : 'plaintext'];
  parts.push(
    sasl
      ? `SASL ${sasl.mechanisms.join(', ')} (${sasl.users.size} user${sasl.users.size === 1 ? '' : 's'})`
      : mtls
        ? ''
        : 'no authentication',
  );
  const listenerText = parts.filter(Boolean).join(', ');
  const upstreamText = [
    upTls ? 'TLS' : 'plaintext',
    upSasl
      ? `SASL ${upSasl.mechanism}${upSasl.mechanism === 'aws-msk-iam' ? '' : ` as ${upSasl.username}`}`
      : '',
  ]
    .filter(Boolean)
    .join(', ');
  let warning: string | undefined;
  if (!loopback && !secure)
    warning = `warning: kafka-serve listens on ${host} with ${listenerText} (--insecure): ${sasl && !tls ? 'passwords cross the network in clear' : 'anyone who can connect reads the tables'}`;
  return {
    listener: { tls, sasl },
    upstream: { tls: upTls, sasl: upSasl },
    listenerText,
    upstreamText,
    warning,
  };
}
