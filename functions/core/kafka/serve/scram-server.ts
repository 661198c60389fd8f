/**
 * The server side of SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), as a Kafka broker runs it
 * inside SaslAuthenticate. Hand-written with node:crypto: the maintained SCRAM packages on npm (and
 * kafkajs) are clients only, and the few with a server side are unmaintained or tied to one database's
 * framing. The client side it must agree with is kafkajs's and librdkafka's.
 *
 * Like Kafka's ScramSaslServer, passwords are taken as their UTF-8 bytes (no SASLprep), channel
 * binding is refused, and a stored credential is (salt, iterations, StoredKey, ServerKey): the server
 * never needs the password itself once the credential is derived.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { LakeError } from '../../errors.js';

export type ScramHash = 'sha256' | 'sha512';

/** RFC 7677's minimum and Kafka's default; Kafka refuses credentials below it. */
export const SCRAM_MIN_ITERATIONS = 4096;

export interface ScramCredential {
  hash: ScramHash;
  salt: Buffer;
  iterations: number;
  storedKey: Buffer;
  serverKey: Buffer;
}

/**
 * A client failed to authenticate (bad message, unknown user, wrong password). Not retryable with the
 * same credentials; the message never says which of user or password was wrong.
 */
export class SaslAuthenticationError extends LakeError {
  constructor(message: string) {
    super(message, { retryable: false });
  }
}

const hmac = (hash: ScramHash, key: Buffer, text: string | Buffer) =>
  createHmac(hash, key).update(text).digest();

/** The stored credential for a password (a fresh 32-byte salt unless one is given). */
export function scramCredential(
  password: string,
  hash: ScramHash,
  salt: Buffer = randomBytes(32),
  iterations = SCRAM_MIN_ITERATIONS,
): ScramCredential {
  const salted = pbkdf2Sync(
    Buffer.from(password, 'utf8'),
    salt,
    iterations,
    hash === 'sha256' ? 32 : 64,
    hash,
  );
  return {
    hash,
    salt,
    iterations,
    storedKey: createHash(hash)
      .update(hmac(hash, salted, 'Client Key'))
      .digest(),
    serverKey: hmac(hash, salted, 'Server Key'),
  };
}

/** `a=x,b=y` attributes in order (extensions such as Kafka's `tokenauth=true` have longer names). @throws SaslAuthenticationError for a part that is not `k=v` */
function attributes(text: string): [string, string][] {
  return text.split(',').map((part) => {
    const eq = part.indexOf('=');
    if (!/^[A-Za-z][A-Za-z0-9]*=/.test(part)) throw new SaslAuthenticationError('malformed SCRAM attribute');
    return [part.slice(0, eq), part.slice(eq + 1)];
  });
}

/** RFC 5802 saslname: `=2C` is ',' and `=3D` is '='; any other '=' fails the exchange. */
function decodeSaslName(text: string): string {
  if (/=(?!2C|3D)/.test(text)) throw new SaslAuthenticationError('malformed SCRAM user name');
  return text.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

/**
 * One SCRAM exchange on one connection: client-first → server-first, client-final → server-final.
 * `lookup` answers the stored credential of a user (undefined when unknown).
 */
export class ScramServerExchange {
  private step: 'first' | 'final' | 'done' = 'first';
  private clientFirstBare = '';
  private serverFirst = '';
  private gs2Header = '';
  private nonce = '';
  private user = '';
  private credential: ScramCredential | undefined;

  constructor(
    private readonly hash: ScramHash,
    private readonly lookup: (user: string) => ScramCredential | undefined,
    private readonly serverNonce: () => string = () => randomBytes(24).toString('base64'),
  ) {}

  /**
   * The server-first-message for a client-first-message.
   * @throws SaslAuthenticationError for a malformed message, channel binding, or an unknown user
   */
  first(clientFirst: string): string {
    if (this.step !== 'first') throw new SaslAuthenticationError('SCRAM client-first-message out of order');
    this.step = 'done';
    const m = /^([ny]),(a=[^,]*)?,(.*)$/s.exec(clientFirst);
    if (!m) {
      const why = clientFirst.startsWith('p=') ? 'channel binding is not supported' : 'malformed gs2 header';
      throw new SaslAuthenticationError(`SCRAM client-first-message: ${why}`);
    }
    this.gs2Header = clientFirst.slice(0, clientFirst.length - m[3].length);
    this.clientFirstBare = m[3];
    const attrs = attributes(m[3]);
    if (attrs[0]?.[0] === 'm')
      throw new SaslAuthenticationError('SCRAM mandatory extensions are not supported');
    const [[n, name] = [], [r, clientNonce] = []] = attrs;
    if (n !== 'n' || r !== 'r' || !clientNonce || !/^[\x21-\x2b\x2d-\x7e]+$/.test(clientNonce))
      throw new SaslAuthenticationError('SCRAM client-first-message needs n=user,r=nonce');
    this.user = decodeSaslName(name ?? '');
    const authzid = m[2] ? decodeSaslName(m[2].slice(2)) : '';
    // Kafka's rule: a client may not act for another principal.
    if (authzid !== '' && authzid !== this.user)
      throw new SaslAuthenticationError('SCRAM authorization id differs from the user name');
    const credential = this.lookup(this.user);
    if (!credential || credential.hash !== this.hash)
      throw new SaslAuthenticationError(`Authentication failed: invalid credentials`);
    this.credential = credential;
    this.nonce = clientNonce + this.serverNonce();
    this.serverFirst = `r=${this.nonce},s=${credential.salt.toString('base64')},i=${credential.iterations}`;
    this.step = 'final';
    return this.serverFirst;
  }

  /**
   * Checks the client's proof; the server-final-message and the authenticated user when it holds.
   * @throws SaslAuthenticationError for a malformed message, another nonce, or a wrong proof
   */
  final(clientFinal: string): { user: string; serverFinal: string } {
    const credential = this.credential;
    if (this.step !== 'final' || !credential)
      throw new SaslAuthenticationError('SCRAM client-final-message out of order');
    this.step = 'done';
    const proofAt = clientFinal.lastIndexOf(',p=');
    if (proofAt < 0) throw new SaslAuthenticationError('SCRAM client-final-message has no proof');
    const withoutProof = clientFinal.slice(0, proofAt);
    const attrs = attributes(withoutProof);
    const [[c, binding] = [], [r, nonce] = []] = attrs;
    if (c !== 'c' || r !== 'r') throw new SaslAuthenticationError('SCRAM client-final-message needs c=,r=');
    if (Buffer.from(binding ?? '', 'base64').toString('utf8') !== this.gs2Header)
      throw new SaslAuthenticationError('SCRAM channel binding differs from the gs2 header');
    // librdkafka 2.0 (Debian's kcat) repeats its own nonce before the combined one; Kafka's
    // ScramSaslServer accepts that (endsWith), so must a server those clients use. Replay stays
    // impossible: the fresh server nonce must still end the echo, and the proof signs the echo.
    if (!nonce?.endsWith(this.nonce))
      throw new SaslAuthenticationError('SCRAM nonce differs from the server-first one');
    const proof = Buffer.from(clientFinal.slice(proofAt + 3), 'base64');
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const signature = hmac(this.hash, credential.storedKey, authMessage);
    if (proof.length !== signature.length)
      throw new SaslAuthenticationError('Authentication failed: invalid credentials');
    const clientKey = Buffer.alloc(proof.length);
    for (let i = 0; i < proof.length; i++) clientKey[i] = proof[i] ^ signature[i];
    if (!timingSafeEqual(createHash(this.hash).update(clientKey).digest(), credential.storedKey))
      throw new SaslAuthenticationError('Authentication failed: invalid credentials');
    const serverSignature = hmac(this.hash, credential.serverKey, authMessage);
    return { user: this.user, serverFinal: `v=${serverSignature.toString('base64')}` };
  }
}
