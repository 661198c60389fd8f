/**
 * Before a command reads or writes Kafka, one look at each bootstrap server: a TCP (or TLS) connection
 * and one ApiVersions request, answered or not within the connection timeout. What a user gets wrong —
 * a broker that is down, a wrong host or port, `--tls` against a plaintext listener or plaintext
 * against a TLS one — then fails at once with ONE line naming `--bootstrap-servers`, the addresses
 * tried and what happened, instead of kafkajs's retries (~10 s of log lines) and a socket error.
 *
 * By hand because no client says which of these it was: kafkajs reports a TLS handshake against a
 * plaintext listener as a connection timeout, and plaintext against TLS as a closed connection or a
 * garbled response, after its retries. ApiVersions is the request every broker answers before SASL.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import { LakeError } from '../errors.js';

/** What the check found at one address. */
export type BrokerOutcome =
  | { broker: string; kind: 'kafka' }
  | {
      broker: string;
      kind:
        | 'refused'
        | 'timeout'
        | 'dns'
        | 'tls-handshake'
        | 'tls-certificate'
        | 'tls-listener'
        | 'closed'
        | 'other';
      detail: string;
    };

/** No bootstrap server could be reached (down, wrong host or port, or a network in between). */
export class KafkaUnreachableError extends LakeError {
  constructor(message: string, retryable: boolean) {
    super(message, { retryable });
  }
}

/** The brokers speak TLS and the client does not, or the other way round, or the certificate is refused. */
export class KafkaTlsError extends LakeError {
  constructor(message: string) {
    super(message, { retryable: false });
  }
}

/** How long one address may take to connect and answer. @default as kafkajs's connection timeout × 5 */
export const BROKER_CHECK_TIMEOUT_MS = 5_000;

const API_VERSIONS_KEY = 18;
const CORRELATION_ID = 0x666c6f65; // "floe"

/** An ApiVersions v0 request: size, api key, version, correlation id, client id; no body. */
function apiVersionsRequest(clientId: string): Buffer {
  const id = Buffer.from(clientId, 'utf8');
  const out = Buffer.alloc(4 + 2 + 2 + 4 + 2 + id.length);
  out.writeInt32BE(out.length - 4, 0);
  out.writeInt16BE(API_VERSIONS_KEY, 4);
  out.writeInt16BE(0, 6);
  out.writeInt32BE(CORRELATION_ID, 8);
  out.writeInt16BE(id.length, 12);
  id.copy(out, 14);
  return out;
}

/** A TLS record starts with its content type (21 alert, 22 handshake) and major version 3. */
function looksLikeTls(bytes: Buffer): boolean {
  return bytes.length >= 2 && (bytes[0] === 0x15 || bytes[0] === 0x16) && bytes[1] === 0x03;
}

function splitAddress(broker: string): { host: string; port: number } {
  const colon = broker.lastIndexOf(':');
  return { host: broker.slice(0, colon).replace(/^\[|\]$/g, ''), port: Number(broker.slice(colon + 1)) };
}

const CERTIFICATE_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS_CERT|HOSTNAME/;

function outcomeOfSocketError(
  broker: string,
  error: NodeJS.ErrnoException,
  tls: boolean,
  secured: boolean,
): BrokerOutcome {
  const code = error.code ?? '';
  if (code === 'ECONNREFUSED') return { broker, kind: 'refused', detail: 'connection refused' };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return { broker, kind: 'dns', detail: `host name not found (${code})` };
  if (tls && CERTIFICATE_CODES.test(code))
    return { broker, kind: 'tls-certificate', detail: `${error.message} (${code})` };
  if (
    tls &&
    !secured &&
    (code === 'ECONNRESET' || /before secure TLS connection|wrong version/i.test(error.message))
  )
    return { broker, kind: 'tls-handshake', detail: 'the connection closed during the TLS handshake' };
  if (code === 'ECONNRESET' || code === 'EPIPE')
    return { broker, kind: 'closed', detail: 'the connection was closed without an answer' };
  return { broker, kind: 'other', detail: `${error.message}${code ? ` (${code})` : ''}` };
}

/**
 * Connects to `broker` and asks it for its API versions. Never throws: every failure is an outcome.
 * `tls`: the options of a TLS connection, or undefined for plaintext.
 */
export function checkBroker(
  broker: string,
  tls: ConnectionOptions | undefined,
  timeoutMs = BROKER_CHECK_TIMEOUT_MS,
  clientId = 'floe',
): Promise<BrokerOutcome> {
  const { host, port } = splitAddress(broker);
  return new Promise((resolve) => {
    let secured = false;
    let connected = false;
    let received = Buffer.alloc(0);
    let socket: Socket;
    const finish = (outcome: BrokerOutcome) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      const seconds = `${timeoutMs / 1000} s`;
      if (!connected) finish({ broker, kind: 'timeout', detail: `no connection within ${seconds}` });
      else if (tls && !secured)
        finish({ broker, kind: 'tls-handshake', detail: `no answer to the TLS handshake within ${seconds}` });
      else
        finish({
          broker,
          kind: 'timeout',
          detail: `connected, but no answer to a Kafka request within ${seconds}`,
        });
    }, timeoutMs);
    const send = () => {
      secured = true;
      socket.write(apiVersionsRequest(clientId));
    };
    if (tls) {
      const servername = /^[\d.]+$|:/.test(host) ? undefined : host;
      socket = connectTls({ ...tls, host, port, ...(servername ? { servername } : {}) }, send);
    } else {
      socket = connectTcp({ host, port }, send);
    }
    socket.once('connect', () => {
      connected = true;
    });
    socket.on('error', (error: NodeJS.ErrnoException) =>
      finish(outcomeOfSocketError(broker, error, !!tls, secured)),
    );
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (!tls && looksLikeTls(received)) {
        finish({ broker, kind: 'tls-listener', detail: 'it answered a Kafka request with a TLS record' });
      } else if (received.length >= 8) {
        const size = received.readInt32BE(0);
        const ok = size >= 4 && size < 1 << 24 && received.readInt32BE(4) === CORRELATION_ID;
        finish(
          ok
            ? { broker, kind: 'kafka' }
            : { broker, kind: 'other', detail: 'it answered, but not as a Kafka broker does' },
        );
      }
    });
    socket.on('end', () =>
      finish(
        !tls && secured && received.length === 0
          ? { broker, kind: 'closed', detail: 'it closed the connection on a plaintext Kafka request' }
          : tls && !secured
            ? { broker, kind: 'tls-handshake', detail: 'the connection closed during the TLS handshake' }
            : { broker, kind: 'closed', detail: 'the connection was closed without an answer' },
      ),
    );
  });
}

const TLS_PORTS_HINT = "the broker's TLS port (often 9093; Amazon MSK: 9094, with IAM 9098)";

/**
 * The one error for a failed check: what was tried, what happened at each address, what to do.
 * Undefined when some address answered as a Kafka broker (the client needs one).
 */
export function errorOfOutcomes(
  outcomes: readonly BrokerOutcome[],
  tls: boolean,
): KafkaUnreachableError | KafkaTlsError | undefined {
  if (outcomes.length === 0 || outcomes.some((o) => o.kind === 'kafka')) return undefined;
  const tried = `--bootstrap-servers ${outcomes.map((o) => o.broker).join(',')}`;
  const what = outcomes.map((o) => `${o.broker}: ${'detail' in o ? o.detail : 'answered'}`).join('; ');
  const kinds = new Set(outcomes.map((o) => o.kind));
  const only = (kind: BrokerOutcome['kind']) => kinds.size === 1 && kinds.has(kind);
  if (tls && only('tls-certificate'))
    return new KafkaTlsError(
      `--tls: the brokers' certificate was refused (${what}): give the CA that signed it with --tls-ca FILE, or --tls-insecure to skip the check (testing only)`,
    );
  if (
    tls &&
    (only('tls-handshake') || (kinds.has('tls-handshake') && !kinds.has('refused') && !kinds.has('dns')))
  )
    return new KafkaTlsError(
      `--tls: no TLS handshake with ${tried} (${what}): the listener looks plaintext; leave out --tls, or use ${TLS_PORTS_HINT}`,
    );
  if (!tls && (kinds.has('tls-listener') || only('closed')))
    return new KafkaTlsError(
      `no Kafka answer over plaintext from ${tried} (${what}): the listener looks like TLS; add --tls (and --tls-ca FILE for a private CA)`,
    );
  const advice = only('dns')
    ? 'check the host names'
    : only('refused')
      ? 'is the broker running, and is this its port?'
      : 'check the addresses, that the brokers are running and that this machine can reach them (VPC, security group, VPN)';
  return new KafkaUnreachableError(`cannot reach Kafka at ${tried} (${what}): ${advice}`, !only('dns'));
}

/**
 * Checks that at least one bootstrap server answers as a Kafka broker, all at once, within `timeoutMs`.
 * `tls` is the TLS connection options (as the client's `ssl`), or undefined for plaintext.
 * @throws KafkaTlsError when TLS is on one side only or the certificate is refused
 * @throws KafkaUnreachableError when no address could be reached (refused, timed out, name not found)
 */
export async function checkBrokers(
  brokers: readonly string[],
  tls: ConnectionOptions | undefined,
  timeoutMs = BROKER_CHECK_TIMEOUT_MS,
): Promise<void> {
  const outcomes = await Promise.all(brokers.map((b) => checkBroker(b, tls, timeoutMs)));
  const error = errorOfOutcomes(outcomes, tls !== undefined);
  if (error) throw error;
}
