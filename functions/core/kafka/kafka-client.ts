/**
 * The one place floe builds a Kafka client (kafkajs 2.2.4, which looks for maintainers): connection
 * options (brokers, SASL/PLAIN, SASL/SCRAM, TLS and mTLS from PEM files) and the conversion of its
 * messages into client-neutral `ConsumedMessage`s. Swapping the client means rewriting this folder only.
 */
import { readFile } from 'node:fs/promises';
import { Kafka, type KafkaMessage, type LogEntry, logLevel, type SASLOptions } from 'kafkajs';
import { ValidationError } from '../errors.js';
import type { ConsumedMessage } from './esm-batch.js';

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';
export const SASL_MECHANISMS: readonly SaslMechanism[] = ['plain', 'scram-sha-256', 'scram-sha-512'];

export interface KafkaConnectionOptions {
  /** `host:port` of one or more brokers. */
  brokers: string[];
  /** @default 'floe' */
  clientId?: string;
  sasl?: { mechanism: SaslMechanism; username: string; password: string };
  /** TLS to the brokers; with `cert` and `key`, mutual TLS. Files are PEM. */
  tls?: { caFile?: string; certFile?: string; keyFile?: string; rejectUnauthorized?: boolean };
  /** Where the client's own warnings and errors go. @default stderr */
  log?: (line: string) => void;
}

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
 * A kafkajs client for the options. Its log goes to `log` at WARN and above: kafkajs logs every
 * rebalance at INFO, which would drown floe's own lines.
 * @throws ValidationError for unreadable TLS files or half an mTLS pair
 */
export async function createKafka(options: KafkaConnectionOptions): Promise<Kafka> {
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
  const sasl: SASLOptions | undefined = options.sasl ? ({ ...options.sasl } as SASLOptions) : undefined;
  return new Kafka({
    brokers: options.brokers,
    clientId: options.clientId ?? 'floe',
    ssl,
    sasl,
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ namespace, level, log: entry }: LogEntry) => {
        const { message, error } = entry as { message?: string; error?: string };
        const label = level === logLevel.ERROR ? 'error' : 'warning';
        log(
          `kafka ${label}: ${namespace ? `${namespace}: ` : ''}${message ?? ''}${error ? ` (${error})` : ''}`,
        );
      },
  });
}

function bytesOf(value: Buffer | string | null | undefined): Uint8Array | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : new Uint8Array(value);
}

/** kafkajs keeps the record batch's timestamp type (0 create, 1 log append) on each message. */
function timestampTypeOf(message: KafkaMessage): ConsumedMessage['timestampType'] {
  const context = (message as { batchContext?: { timestampType?: number } }).batchContext;
  return context?.timestampType === 1 ? 'LOG_APPEND_TIME' : 'CREATE_TIME';
}

/** A kafkajs message as the batch former takes it. */
export function toConsumedMessage(topic: string, partition: number, message: KafkaMessage): ConsumedMessage {
  const headers: ConsumedMessage['headers'] = [];
  for (const [key, value] of Object.entries(message.headers ?? {})) {
    // kafkajs folds repeated header names into an array, in their order.
    for (const v of Array.isArray(value) ? value : [value]) {
      const bytes = bytesOf(v);
      headers.push({ key, value: bytes ?? new Uint8Array(0) });
    }
  }
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
