/**
 * The one place floe builds a Kafka client (kafkajs 2.2.4, which looks for maintainers): connection
 * options (brokers, SASL/PLAIN, SASL/SCRAM, MSK IAM, TLS and mTLS from PEM files) and the conversion of its
 * messages into client-neutral `ConsumedMessage`s. Swapping the client means rewriting this folder only.
 */
import { readFile } from 'node:fs/promises';
import {
  Kafka,
  type KafkaConfig,
  type KafkaMessage,
  type LogEntry,
  logLevel,
  type SASLOptions,
} from 'kafkajs';
import { ValidationError } from '../errors.js';
import { checkBrokers } from './broker-check.js';
import type { ConsumedMessage } from './esm-batch.js';
import { loadMskSigner, mskIamTokenProvider } from './msk-iam.js';

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512' | 'aws-msk-iam';
export const SASL_MECHANISMS: readonly SaslMechanism[] = [
  'plain',
  'scram-sha-256',
  'scram-sha-512',
  'aws-msk-iam',
];

/** SASL with a user and a password, or MSK IAM (a token signed from the AWS credentials for `region`). */
export type SaslOptions =
  | { mechanism: Exclude<SaslMechanism, 'aws-msk-iam'>; username: string; password: string }
  | { mechanism: 'aws-msk-iam'; region: string };

export interface KafkaConnectionOptions {
  /** `host:port` of one or more brokers. */
  brokers: string[];
  /** @default 'floe' */
  clientId?: string;
  sasl?: SaslOptions;
  /** TLS to the brokers; with `cert` and `key`, mutual TLS. Files are PEM. */
  tls?: { caFile?: string; certFile?: string; keyFile?: string; rejectUnauthorized?: boolean };
  /** Where the client's own warnings and errors go. @default stderr */
  log?: (line: string) => void;
}

/**
 * A connection to a Kafka cluster, made by createKafka and handed to kafka/'s functions. Code outside
 * kafka/ names this type, never the client library's: swapping the client changes this alias and the
 * functions of kafka/, not their callers.
 */
export type KafkaConnection = Kafka;

/** @throws ValidationError for a broker address that is not `host:port` */
export function parseBrokers(text: string): string[] {
  const brokers = text
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  if (brokers.length === 0) throw new ValidationError('bootstrap servers: give at least one HOST:PORT');
  for (const b of brokers) {
    const port = Number(b.slice(b.lastIndexOf(':') + 1));
    if (b.lastIndexOf(':') <= 0 || !Number.isInteger(port) || port < 1 || port > 65535) {
      throw new ValidationError(`bootstrap server '${b}' is not HOST:PORT`);
    }
  }
  return brokers;
}

async function readPem(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new ValidationError(
      `cannot read the ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
}

/**
 * The kafkajs SASL options. MSK IAM is kafkajs's `oauthbearer` with the signer's token as the value
 * (AWS's recipe); the signer is loaded only here, so clients without MSK IAM never load the AWS SDK.
 * @throws ValidationError for MSK IAM without TLS; MskIamAuthError when the signer cannot be loaded
 */
async function saslOf(options: KafkaConnectionOptions): Promise<SASLOptions | undefined> {
  const sasl = options.sasl;
  if (!sasl) return undefined;
  if (sasl.mechanism !== 'aws-msk-iam') return { ...sasl };
  if (!options.tls) {
    // MSK's IAM listeners (port 9098) are TLS only: without it the handshake never gets an answer.
    throw new ValidationError(
      'MSK IAM authentication needs TLS (MSK IAM listeners, port 9098, are TLS only)',
    );
  }
  if (!sasl.region) throw new ValidationError('MSK IAM authentication needs the AWS region of the cluster');
  return {
    mechanism: 'oauthbearer',
    oauthBearerProvider: mskIamTokenProvider(await loadMskSigner(), sasl.region),
  };
}

/**
 * kafkajs logs every failed attempt to connect (two lines per retry, a dozen before it gives up); the
 * error it finally throws says the same once, and broker-check.ts has said it better before.
 */
function isConnectionRetry(namespace: string, message: string | undefined): boolean {
  return (
    (namespace === 'Connection' || namespace === 'BrokerPool') &&
    /^(Connection error|Connection timeout|Failed to connect)/.test(message ?? '')
  );
}

/**
 * The kafkajs configuration for the options (createKafka's; apart so it can be checked without a client).
 * @throws as createKafka
 */
export async function kafkaConfigOf(options: KafkaConnectionOptions): Promise<KafkaConfig> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let ssl: boolean | { ca?: string[]; cert?: string; key?: string; rejectUnauthorized?: boolean } | undefined;
  if (options.tls) {
    const { caFile, certFile, keyFile, rejectUnauthorized } = options.tls;
    if ((certFile === undefined) !== (keyFile === undefined)) {
      throw new ValidationError('mutual TLS needs both a client certificate and its key (got only one)');
    }
    ssl = {
      ...(caFile ? { ca: [await readPem(caFile, 'CA certificate')] } : {}),
      ...(certFile ? { cert: await readPem(certFile, 'client certificate') } : {}),
      ...(keyFile ? { key: await readPem(keyFile, 'client key') } : {}),
      ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
    };
  }
  const sasl = await saslOf(options);
  return {
    brokers: options.brokers,
    clientId: options.clientId ?? 'floe',
    ssl,
    sasl,
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ namespace, level, log: entry }: LogEntry) => {
        const { message, error } = entry as { message?: string; error?: string };
        if (isConnectionRetry(namespace, message)) return;
        const label = level === logLevel.ERROR ? 'error' : 'warning';
        log(
          `kafka ${label}: ${namespace ? `${namespace}: ` : ''}${message ?? ''}${error ? ` (${error})` : ''}`,
        );
      },
  };
}

/**
 * A kafkajs client for the options. Its log goes to `log` at WARN and above: kafkajs logs every
 * rebalance at INFO, which would drown floe's own lines.
 * @throws ValidationError for unreadable TLS files, half an mTLS pair, or MSK IAM without TLS
 * @throws MskIamAuthError when MSK IAM is asked for and its signer package cannot be loaded
 */
export async function createKafka(options: KafkaConnectionOptions): Promise<KafkaConnection> {
  return new Kafka(await kafkaConfigOf(options));
}

/**
 * createKafka, after checking that a bootstrap server answers (broker-check.ts): what the command
 * line uses, so a dead broker or a TLS mismatch fails at once in one line. The Lambda functions, whose
 * brokers are the ESM's, call createKafka.
 * @throws as createKafka; KafkaUnreachableError, KafkaTlsError from checkBrokers
 */
export async function createCheckedKafka(
  options: KafkaConnectionOptions,
  timeoutMs?: number,
): Promise<KafkaConnection> {
  const config = await kafkaConfigOf(options);
  const tls =
    config.ssl === undefined || config.ssl === false ? undefined : config.ssl === true ? {} : config.ssl;
  await checkBrokers(options.brokers, tls, timeoutMs);
  return new Kafka(config);
}

/** A kafkajs key, value or header value as bytes (null stays null). */
export function bytesOf(value: Buffer | string | null | undefined): Uint8Array | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : new Uint8Array(value);
}

/** kafkajs keeps the record batch's timestamp type (0 create, 1 log append) on each message. */
export function timestampTypeOf(message: KafkaMessage): ConsumedMessage['timestampType'] {
  const context = (message as { batchContext?: { timestampType?: number } }).batchContext;
  return context?.timestampType === 1 ? 'LOG_APPEND_TIME' : 'CREATE_TIME';
}

/**
 * The offset a kafkajs fetch for the batch started at. kafkajs keeps it on the batch (`fetchedOffset`,
 * not in its types) and has already dropped the messages below it; undefined when it is not there.
 */
export function fetchStartOf(batch: object): bigint | undefined {
  const fetched = (batch as { fetchedOffset?: unknown }).fetchedOffset;
  const text = typeof fetched === 'string' || typeof fetched === 'number' ? String(fetched) : undefined;
  return text !== undefined && /^\d+$/.test(text) ? BigInt(text) : undefined;
}

/** A kafkajs message's headers in the order the broker holds them (a name may repeat; a null value stays null). */
export function headersOf(message: KafkaMessage): { key: string; value: Uint8Array | null }[] {
  const headers: { key: string; value: Uint8Array | null }[] = [];
  for (const [key, value] of Object.entries(message.headers ?? {})) {
    // kafkajs folds repeated header names into an array, in their order.
    for (const v of Array.isArray(value) ? value : [value]) headers.push({ key, value: bytesOf(v) });
  }
  return headers;
}

/** Headers as an ESM event carries them: a null value becomes empty bytes. */
export function esmHeaders(
  headers: readonly { key: string; value: Uint8Array | null }[],
): ConsumedMessage['headers'] {
  return headers.map(({ key, value }) => ({ key, value: value ?? new Uint8Array(0) }));
}

/** A kafkajs message as the batch former takes it (a null header value becomes empty bytes, as the ESM has it). */
export function toConsumedMessage(topic: string, partition: number, message: KafkaMessage): ConsumedMessage {
  const headers = esmHeaders(headersOf(message));
  return {
    topic,
    partition,
    offset: message.offset,
    timestamp: Number(message.timestamp),
    timestampType: timestampTypeOf(message),
    key: bytesOf(message.key),
    value: bytesOf(message.value),
    headers,
  };
}
