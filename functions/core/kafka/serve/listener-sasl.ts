/**
 * SASL on kafka-serve's listener, as a Kafka broker runs it: ApiVersions, then SaslHandshake (v1) naming
 * a mechanism, then SaslAuthenticate rounds (v0–v1) carrying the mechanism's messages; every other
 * request before that closes the connection (Kafka's "unexpected request during SASL handshake").
 * PLAIN checks a password; SCRAM-SHA-256/512 run scram-server.ts. Failures answer
 * SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM or ILLEGAL_SASL_STATE and close, as Kafka does.
 *
 * Users come from `user:password` lines (a file or the environment, never the command line): the
 * SCRAM credentials are derived once at start with a random salt, so a SCRAM exchange costs two HMACs,
 * and PLAIN compares digests in constant time. Re-authentication (KIP-368) is not offered: the session
 * lifetime answered is 0 (unlimited), which every client accepts.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '../../errors.js';
import { Encoder, KafkaErrorCode, writeArray } from './kafkajs-protocol.js';
import type { ApiRange } from './messages.js';
import {
  type ScramCredential,
  type ScramHash,
  ScramServerExchange,
  SaslAuthenticationError,
  scramCredential,
} from './scram-server.js';
import { ApiKey, type RequestHeader } from './wire.js';

export const LISTENER_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type ListenerMechanism = (typeof LISTENER_MECHANISMS)[number];

/**
 * SaslHandshake from v0 as brokers advertise it: librdkafka takes a broker for SASL-less unless v0 is in
 * the range, then speaks v1. A v0 handshake itself (unframed tokens after it, clients older than Kafka
 * 1.0) is answered UNSUPPORTED_VERSION and closed.
 */
export const SASL_RANGES: ApiRange[] = [
  { apiKey: ApiKey.SaslHandshake, min: 0, max: 1 },
  { apiKey: ApiKey.SaslAuthenticate, min: 0, max: 1 },
];

const SCRAM_HASH: Record<Exclude<ListenerMechanism, 'PLAIN'>, ScramHash> = {
  'SCRAM-SHA-256': 'sha256',
  'SCRAM-SHA-512': 'sha512',
};

/** The users a listener accepts. */
export class SaslUsers {
  private readonly plain = new Map<string, Buffer>();
  private readonly scram = new Map<string, ScramCredential[]>();

  /**
   * `user:password` lines (blank lines and `#` comments skipped; the password is the rest of the line).
   * @throws ValidationError for a line without a user or password, or a user given twice
   */
  static parse(text: string, from: string, mechanisms: readonly ListenerMechanism[]): SaslUsers {
    const users = new SaslUsers();
    for (const [i, raw] of text.split(/\r?\n/).entries()) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      const colon = line.indexOf(':');
      if (colon <= 0 || colon === line.length - 1)
        throw new ValidationError(`${from} line ${i + 1}: expected user:password`);
      const user = line.slice(0, colon);
      if (users.plain.has(user))
        throw new ValidationError(`${from} line ${i + 1}: user '${user}' given twice`);
      const password = line.slice(colon + 1);
      users.plain.set(user, createHash('sha256').update(password).digest());
      users.scram.set(
        user,
        mechanisms.filter((m) => m !== 'PLAIN').map((m) => scramCredential(password, SCRAM_HASH[m])),
      );
    }
    return users;
  }

  get size(): number {
    return this.plain.size;
  }

  checkPlain(user: string, password: string): boolean {
    const want = this.plain.get(user);
    const got = createHash('sha256').update(password).digest();
    return want !== undefined && timingSafeEqual(want, got);
  }

  scramCredential(user: string, hash: ScramHash): ScramCredential | undefined {
    return this.scram.get(user)?.find((c) => c.hash === hash);
  }
}

export interface ListenerSasl {
  mechanisms: readonly ListenerMechanism[];
  users: SaslUsers;
}

/** What to do with a request on a SASL listener. */
export type SaslStep =
  /** Handled by the proxy as usual (ApiVersions before authentication, anything after). */
  | { kind: 'pass' }
  /** This answer (after the correlation id); then close when `close`. */
  | { kind: 'answer'; body: Buffer; close: boolean; log?: string }
  /** Close without an answer. */
  | { kind: 'refuse'; reason: string };

const AUTH_FAILED = 58;
const ILLEGAL_SASL_STATE = 34;
const UNSUPPORTED_SASL_MECHANISM = 33;

function handshakeAnswer(errorCode: number, mechanisms: readonly string[]): Buffer {
  const e = new Encoder().writeInt16(errorCode);
  writeArray(e, mechanisms, (w, m) => w.writeString(m));
  return e.buffer;
}

function authenticateAnswer(
  version: number,
  errorCode: number,
  message: string | null,
  bytes: Buffer,
): Buffer {
  const e = new Encoder().writeInt16(errorCode).writeString(message).writeBytes(bytes);
  if (version >= 1) e.writeInt64(0n);
  return e.buffer;
}

/** One connection's SASL state. */
export class SaslSession {
  private state: 'handshake' | 'authenticate' | 'scram-final' | 'done' = 'handshake';
  private mechanism: ListenerMechanism | undefined;
  private scram: ScramServerExchange | undefined;
  /** The authenticated user, once there is one. */
  principal: string | undefined;

  constructor(private readonly sasl: ListenerSasl) {}

  /**
   * The step for a request, in the order the connection sent them (the state moves synchronously).
   * Never throws: a request too short for its fields is refused (the connection closes).
   */
  step(header: RequestHeader): SaslStep {
    try {
      return this.next(header);
    } catch (error) {
      this.state = 'done';
      this.principal = undefined;
      return { kind: 'refuse', reason: `malformed SASL request: ${(error as Error).message}` };
    }
  }

  private next(header: RequestHeader): SaslStep {
    const { apiKey, apiVersion } = header;
    const range = SASL_RANGES.find((r) => r.apiKey === apiKey);
    if (range && (apiVersion < range.min || apiVersion > range.max))
      return { kind: 'refuse', reason: `API ${apiKey} version ${apiVersion} is not supported` };
    if (this.state === 'done') {
      if (apiKey === ApiKey.SaslHandshake)
        return { kind: 'answer', body: handshakeAnswer(ILLEGAL_SASL_STATE, []), close: false };
      if (apiKey === ApiKey.SaslAuthenticate)
        return {
          kind: 'answer',
          body: authenticateAnswer(apiVersion, ILLEGAL_SASL_STATE, 'already authenticated', Buffer.alloc(0)),
          close: false,
        };
      return { kind: 'pass' };
    }
    if (apiKey === ApiKey.ApiVersions && this.state === 'handshake') return { kind: 'pass' };
    if (apiKey === ApiKey.SaslHandshake && this.state === 'handshake') return this.handshake(header);
    if (apiKey === ApiKey.SaslAuthenticate) {
      if (this.state === 'handshake')
        return this.failAuthenticate(apiVersion, ILLEGAL_SASL_STATE, 'SaslAuthenticate before SaslHandshake');
      return this.authenticate(header);
    }
    return { kind: 'refuse', reason: `API ${apiKey} before SASL authentication` };
  }

  private handshake(header: RequestHeader): SaslStep {
    if (header.apiVersion === 0)
      return {
        kind: 'answer',
        body: handshakeAnswer(KafkaErrorCode.UNSUPPORTED_VERSION, this.sasl.mechanisms),
        close: true,
        log: 'client asked for SaslHandshake v0 (unframed SASL tokens), which kafka-serve does not speak',
      };
    const asked = header.body.readString() ?? '';
    const mechanism = this.sasl.mechanisms.find((m) => m === asked.toUpperCase());
    if (!mechanism)
      return {
        kind: 'answer',
        body: handshakeAnswer(UNSUPPORTED_SASL_MECHANISM, this.sasl.mechanisms),
        close: true,
        log: `client asked for SASL mechanism '${asked.slice(0, 40)}', not one of ${this.sasl.mechanisms.join(', ')}`,
      };
    this.mechanism = mechanism;
    this.state = 'authenticate';
    if (mechanism !== 'PLAIN')
      this.scram = new ScramServerExchange(SCRAM_HASH[mechanism], (u) =>
        this.sasl.users.scramCredential(u, SCRAM_HASH[mechanism]),
      );
    return { kind: 'answer', body: handshakeAnswer(KafkaErrorCode.NONE, this.sasl.mechanisms), close: false };
  }

  private failAuthenticate(version: number, code: number, message: string): SaslStep {
    this.state = 'done';
    this.principal = undefined;
    return {
      kind: 'answer',
      body: authenticateAnswer(version, code, message, Buffer.alloc(0)),
      close: true,
      log: message,
    };
  }

  private authenticate(header: RequestHeader): SaslStep {
    const v = header.apiVersion;
    let bytes: Buffer;
    try {
      bytes = header.body.readBytes() ?? Buffer.alloc(0);
    } catch {
      return this.failAuthenticate(v, ILLEGAL_SASL_STATE, 'truncated SaslAuthenticate request');
    }
    const failed = `Authentication failed during authentication due to invalid credentials with SASL mechanism ${this.mechanism}`;
    try {
      if (this.mechanism === 'PLAIN') {
        // [authzid] NUL authcid NUL passwd (RFC 4616); Kafka accepts an authzid only equal to the user.
        const parts = bytes.toString('utf8').split('\u0000');
        if (parts.length !== 3 || (parts[0] !== '' && parts[0] !== parts[1]) || parts[1] === '')
          return this.failAuthenticate(v, AUTH_FAILED, 'malformed SASL/PLAIN message');
        if (!this.sasl.users.checkPlain(parts[1], parts[2]))
          return this.failAuthenticate(v, AUTH_FAILED, failed);
        return this.succeed(v, parts[1], Buffer.alloc(0));
      }
      const scram = this.scram as ScramServerExchange;
      if (this.state === 'authenticate') {
        const serverFirst = scram.first(bytes.toString('utf8'));
        this.state = 'scram-final';
        return {
          kind: 'answer',
          body: authenticateAnswer(v, KafkaErrorCode.NONE, null, Buffer.from(serverFirst)),
          close: false,
        };
      }
      const { user, serverFinal } = scram.final(bytes.toString('utf8'));
      return this.succeed(v, user, Buffer.from(serverFinal));
    } catch (error) {
      if (!(error instanceof SaslAuthenticationError)) throw error;
      return this.failAuthenticate(
        v,
        AUTH_FAILED,
        /invalid credentials/.test(error.message) ? failed : error.message,
      );
    }
  }

  private succeed(version: number, user: string, bytes: Buffer): SaslStep {
    this.state = 'done';
    this.principal = user;
    return {
      kind: 'answer',
      body: authenticateAnswer(version, KafkaErrorCode.NONE, null, bytes),
      close: false,
    };
  }
}
