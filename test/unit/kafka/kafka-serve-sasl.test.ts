/**
 * kafka-serve's SASL: the SCRAM server against RFC 7677's SCRAM-SHA-256 example and against kafkajs's
 * own SCRAM and PLAIN clients (which check the server's signature), the listener's state machine and
 * error codes as a broker answers them, and the cluster-side authenticator (upstream-auth.ts) speaking
 * to the listener's state machine over encoded Kafka requests, and MSK IAM's token as OAUTHBEARER.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  Decoder,
  Encoder,
  readArray,
  SASL_AUTHENTICATORS,
} from '../../../functions/core/kafka/serve/kafkajs-protocol.js';
import {
  type ListenerMechanism,
  SaslSession,
  SaslUsers,
} from '../../../functions/core/kafka/serve/listener-sasl.js';
import {
  SaslAuthenticationError,
  ScramServerExchange,
  scramCredential,
} from '../../../functions/core/kafka/serve/scram-server.js';
import {
  authenticateLink,
  UpstreamAuthError,
  type UpstreamSasl,
  upstreamSecurityOf,
} from '../../../functions/core/kafka/serve/upstream-auth.js';
import { parseRequestHeader } from '../../../functions/core/kafka/serve/wire.js';

const SASL_HANDSHAKE = 17;
const SASL_AUTHENTICATE = 36;

/** A request frame (header v1, correlation id 1) as a client sends it. */
function frame(apiKey: number, version: number, body: Buffer): Buffer {
  const header = Buffer.alloc(10);
  header.writeInt16BE(apiKey, 0);
  header.writeInt16BE(version, 2);
  header.writeInt32BE(1, 4);
  header.writeInt16BE(-1, 8);
  return Buffer.concat([header, body]);
}

/** Answers what the session answers; throws when it refuses or passes (nothing to answer here). */
function ask(session: SaslSession, apiKey: number, version: number, body: Buffer): Buffer {
  const step = session.step(parseRequestHeader(frame(apiKey, version, body)));
  if (step.kind !== 'answer')
    throw new Error(`session ${step.kind === 'refuse' ? `refused: ${step.reason}` : 'passed'}`);
  return step.body;
}

const users = (mechanisms: ListenerMechanism[] = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']) =>
  SaslUsers.parse('# users\nalice:wonder:land\n\nbob:builder\n', 'users', mechanisms);

describe('SCRAM server exchange', () => {
  it('answers RFC 7677 section 3 SCRAM-SHA-256 example byte for byte', () => {
    // Prepare
    const credential = scramCredential(
      'pencil',
      'sha256',
      Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'),
      4096,
    );
    const exchange = new ScramServerExchange(
      'sha256',
      (u) => (u === 'user' ? credential : undefined),
      () => '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0',
    );
    // Act
    const serverFirst = exchange.first('n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
    const final = exchange.final(
      'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
    );
    // Assess
    expect(serverFirst).toBe(
      'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
    );
    expect(final).toEqual({ user: 'user', serverFinal: 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=' });
  });

  it('refuses a proof made with another password, another nonce, and channel binding', () => {
    // Prepare
    const credential = scramCredential(
      'pencil',
      'sha256',
      Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'),
      4096,
    );
    const exchange = () =>
      new ScramServerExchange(
        'sha256',
        () => credential,
        () => '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0',
      );
    const wrongProof = exchange();
    wrongProof.first('n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
    const wrongNonce = exchange();
    wrongNonce.first('n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
    // Act + Assess
    expect(() =>
      wrongProof.final(
        'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=eHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
      ),
    ).toThrow(SaslAuthenticationError);
    expect(() =>
      wrongNonce.final('c=biws,r=rOprNGfwEbeRWgbNEkqOX,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ='),
    ).toThrow(/nonce/);
    expect(() => exchange().first('p=tls-unique,,n=user,r=abc')).toThrow(/channel binding/);
  });
});

describe('kafka-serve listener SASL', () => {
  /** kafkajs's own client mechanism, talking to a listener session through SaslAuthenticate v1 bodies. */
  async function kafkajsAgainst(mechanism: ListenerMechanism, username: string, password: string) {
    const session = new SaslSession({
      mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'],
      users: users(),
    });
    const handshake = new Decoder(
      ask(session, SASL_HANDSHAKE, 1, new Encoder().writeString(mechanism).buffer),
    );
    expect(handshake.readInt16()).toBe(0);
    const codes: number[] = [];
    const authenticator = SASL_AUTHENTICATORS[mechanism]({
      mechanism: mechanism.toLowerCase(),
      username,
      password,
    })({
      host: 'h',
      port: 1,
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: () => undefined,
        error: () => undefined,
      },
      saslAuthenticate: async ({ request, response }) => {
        const answer = new Decoder(ask(session, SASL_AUTHENTICATE, 1, await request.encode()));
        const code = answer.readInt16();
        codes.push(code);
        const message = answer.readString();
        const bytes = answer.readBytes() ?? Buffer.alloc(0);
        if (code !== 0) throw new Error(message ?? `error ${code}`);
        return response?.parse(await response.decode(new Encoder().writeBytes(bytes).buffer));
      },
    });
    const outcome = await authenticator.authenticate().then(
      () => 'ok',
      (e: Error) => e.message,
    );
    return { outcome, codes, session };
  }

  for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512', 'PLAIN'] as const) {
    it(`authenticates kafkajs's ${mechanism} client (which checks the server's signature) and refuses a wrong password with 58`, async () => {
      // Act
      const good = await kafkajsAgainst(mechanism, 'alice', 'wonder:land');
      const bad = await kafkajsAgainst(mechanism, 'alice', 'wonder:lane');
      const unknown = await kafkajsAgainst(mechanism, 'carol', 'wonder:land');
      // Assess
      expect(good.outcome).toBe('ok');
      expect(good.session.principal).toBe('alice');
      expect(bad.outcome).toMatch(/Authentication failed/);
      expect(bad.codes.at(-1)).toBe(58);
      expect(bad.session.principal).toBeUndefined();
      expect(unknown.codes.at(-1)).toBe(58);
    });
  }

  it('refuses other APIs before authentication, SaslAuthenticate before SaslHandshake, and an unknown mechanism', () => {
    // Prepare
    const sasl = { mechanisms: ['SCRAM-SHA-512'] as ListenerMechanism[], users: users(['SCRAM-SHA-512']) };
    const fresh = () => new SaslSession(sasl);
    // Act
    const metadata = fresh().step(parseRequestHeader(frame(3, 1, new Encoder().writeInt32(-1).buffer)));
    const versions = fresh().step(parseRequestHeader(frame(18, 0, Buffer.alloc(0))));
    const early = new Decoder(
      ask(fresh(), SASL_AUTHENTICATE, 1, new Encoder().writeBytes(Buffer.from('x')).buffer),
    );
    const plain = new Decoder(ask(fresh(), SASL_HANDSHAKE, 1, new Encoder().writeString('PLAIN').buffer));
    // Assess
    expect(metadata).toEqual({ kind: 'refuse', reason: 'API 3 before SASL authentication' });
    expect(versions).toEqual({ kind: 'pass' });
    expect(early.readInt16()).toBe(34);
    expect(plain.readInt16()).toBe(33);
    expect(readArray(plain, (d) => d.readString())).toEqual(['SCRAM-SHA-512']);
  });

  it('refuses a truncated SaslHandshake and closes on a truncated SaslAuthenticate, without throwing', () => {
    // Prepare
    const sasl = { mechanisms: ['PLAIN'] as ListenerMechanism[], users: users(['PLAIN']) };
    const shaken = new SaslSession(sasl);
    ask(shaken, SASL_HANDSHAKE, 1, new Encoder().writeString('PLAIN').buffer);
    // Act
    const handshake = new SaslSession(sasl).step(
      parseRequestHeader(frame(SASL_HANDSHAKE, 1, Buffer.from([0]))),
    );
    const authenticate = new Decoder(ask(shaken, SASL_AUTHENTICATE, 1, Buffer.from([0, 0])));
    // Assess
    expect(handshake).toMatchObject({
      kind: 'refuse',
      reason: expect.stringMatching(/^malformed SASL request/),
    });
    expect(authenticate.readInt16()).toBe(34);
    expect(shaken.principal).toBeUndefined();
  });

  it('answers a second SaslHandshake after authentication with ILLEGAL_SASL_STATE and passes other APIs', async () => {
    // Prepare
    const { session } = await kafkajsAgainst('PLAIN', 'bob', 'builder');
    // Act
    const again = new Decoder(ask(session, SASL_HANDSHAKE, 1, new Encoder().writeString('PLAIN').buffer));
    const fetch = session.step(parseRequestHeader(frame(1, 4, Buffer.alloc(0))));
    // Assess
    expect(again.readInt16()).toBe(34);
    expect(fetch).toEqual({ kind: 'pass' });
  });

  it('refuses a users file line without a password, and a user given twice', () => {
    // Act + Assess
    expect(() => SaslUsers.parse('alice\n', 'f', ['PLAIN'])).toThrow(/f line 1: expected user:password/);
    expect(() => SaslUsers.parse('a:1\na:2\n', 'f', ['PLAIN'])).toThrow(/f line 2: user 'a' given twice/);
  });
});

describe('kafka-serve upstream SASL (floe as the client of a cluster)', () => {
  /** The link's requests answered by a listener session, as a broker would. */
  const brokerSend = (session: SaslSession) => async (apiKey: number, version: number, body: Buffer) =>
    ask(session, apiKey, version, body);

  for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
    it(`authenticates with ${mechanism}, and reports refused credentials as a non-retryable UpstreamAuthError`, async () => {
      // Prepare
      const session = () =>
        new SaslSession({ mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'], users: users() });
      const good = session();
      const broker = { host: 'b', port: 9096 };
      // Act
      await authenticateLink(
        brokerSend(good),
        { mechanism, username: 'bob', password: 'builder' } as UpstreamSasl,
        broker,
      );
      const refused = await authenticateLink(
        brokerSend(session()),
        { mechanism, username: 'bob', password: 'builders' } as UpstreamSasl,
        broker,
      ).catch((e: unknown) => e);
      // Assess
      expect(good.principal).toBe('bob');
      expect(refused).toBeInstanceOf(UpstreamAuthError);
      expect((refused as UpstreamAuthError).retryable).toBe(false);
      expect((refused as Error).message).toMatch(/broker b:9096 refused floe's SASL .* error 58/);
    });
  }

  it("says which mechanisms the cluster offers when it does not take floe's", async () => {
    // Prepare
    const session = new SaslSession({ mechanisms: ['SCRAM-SHA-512'], users: users(['SCRAM-SHA-512']) });
    // Act
    const error = await authenticateLink(
      brokerSend(session),
      { mechanism: 'plain', username: 'bob', password: 'builder' },
      { host: 'b', port: 1 },
    ).catch((e: unknown) => e);
    // Assess
    expect(error).toBeInstanceOf(UpstreamAuthError);
    expect((error as Error).message).toMatch(
      /does not take SASL PLAIN \(error 33; it offers SCRAM-SHA-512\)/,
    );
  });

  describe('MSK IAM', () => {
    afterEach(() => {
      vi.unstubAllEnvs();
    });

    it("sends the signer's SigV4 token as SASL/OAUTHBEARER, over TLS", async () => {
      // Prepare: AWS's real signer signs offline from these credentials; MSK itself cannot run here,
      // so the broker side is this check of the OAUTHBEARER message (RFC 7628) it would receive.
      vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDFLOETEST');
      vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'not-a-real-secret');
      const security = await upstreamSecurityOf({
        tls: {},
        sasl: { mechanism: 'aws-msk-iam', region: 'eu-west-1' },
      });
      const received: string[] = [];
      const msk = async (apiKey: number, _version: number, body: Buffer): Promise<Buffer> => {
        if (apiKey === SASL_HANDSHAKE) {
          const e = new Encoder().writeInt16(0);
          e.writeInt32(1).writeString('OAUTHBEARER');
          return e.buffer;
        }
        received.push(new Decoder(body).readBytes()?.toString('utf8') ?? '');
        return new Encoder().writeInt16(0).writeString(null).writeBytes(Buffer.alloc(0)).writeInt64(0n)
          .buffer;
      };
      // Act
      await authenticateLink(msk, security.sasl as UpstreamSasl, { host: 'b-1.msk.example', port: 9098 });
      // Assess
      expect(security.tls).toEqual({});
      expect(received).toHaveLength(1);
      // OAUTHBEARER's client message: gs2 header, then key=value pairs, each ended by \x01
      const parts = received[0].split('\u0001');
      expect([parts[0], ...parts.slice(2)]).toEqual(['n,,', '', '']);
      const m = /^auth=Bearer ([A-Za-z0-9_-]+)$/.exec(parts[1]);
      const url = new URL(Buffer.from(m?.[1] ?? '', 'base64url').toString('utf8'));
      expect(url.host).toBe('kafka.eu-west-1.amazonaws.com');
      expect(url.searchParams.get('Action')).toBe('kafka-cluster:Connect');
      expect(url.searchParams.get('X-Amz-Credential')).toMatch(
        /^AKIDFLOETEST\/\d{8}\/eu-west-1\/kafka-cluster\/aws4_request$/,
      );
    });
  });
});
