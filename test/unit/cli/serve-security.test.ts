import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CLIENTS_ENV,
  isLoopbackHost,
  parseClients,
  serveSecurityFrom,
  TOKEN_ENV,
} from '../../../functions/cli/serve-security.js';

const TOKEN = 'a-token-of-32-characters-0123456';

async function tokenFile(content = TOKEN): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-serve-sec-'));
  const path = join(dir, 'token');
  await writeFile(path, `${content}\n`);
  return path;
}

describe('floe serve: the security flags', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['example.com', false],
  ])('%s is loopback: %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });

  it('refuses a non-loopback host with neither authentication nor TLS', async () => {
    await expect(serveSecurityFrom({}, '0.0.0.0', {})).rejects.toThrow(/--insecure/);
  });

  it('serves a non-loopback host openly with --insecure, with one warning line', async () => {
    const security = await serveSecurityFrom({ insecure: true }, '0.0.0.0', {});
    expect(security.auth).toBeUndefined();
    expect(security.warning?.('http://0.0.0.0:8181')).toMatch(/^warning: http:\/\/0\.0\.0\.0:8181 is open/);
  });

  it('warns on loopback too when no authentication is set', async () => {
    const security = await serveSecurityFrom({}, '127.0.0.1', {});
    expect(security.warning?.('http://127.0.0.1:1')).toContain('is open');
  });

  it('takes the token from --token-file or the environment, and then binds anywhere', async () => {
    const fromFile = await serveSecurityFrom({ 'token-file': await tokenFile() }, '0.0.0.0', {});
    const fromEnv = await serveSecurityFrom({}, '0.0.0.0', { [TOKEN_ENV]: TOKEN });
    expect(fromFile.auth?.check(`Bearer ${TOKEN}`)).toBeUndefined();
    expect(fromEnv.auth?.check(`Bearer ${TOKEN}`)).toBeUndefined();
    expect(fromEnv.auth?.check('Bearer other-token-0123456789')?.status).toBe(401);
    expect(fromFile.warning?.('http://0.0.0.0:1')).toContain('not encrypted');
  });

  it('refuses --token on the command line, naming the alternatives', async () => {
    await expect(serveSecurityFrom({ token: TOKEN }, '127.0.0.1', {})).rejects.toThrow(
      /--token-file.*FLOE_SERVE_TOKEN/,
    );
  });

  it.each([
    [{ 'token-file': '/nonexistent/floe-token' }, 'cannot be read'],
    [{ 'https-cert': '/x.pem' }, 'go together'],
    [{ 'token-ttl': '1h' }, 'goes with client credentials'],
  ])('refuses %j', async (values, message) => {
    await expect(serveSecurityFrom(values, '127.0.0.1', {})).rejects.toThrow(message);
  });

  it('refuses a short token and an empty token file', async () => {
    await expect(
      serveSecurityFrom({ 'token-file': await tokenFile('short') }, '127.0.0.1', {}),
    ).rejects.toThrow('at least 16');
    await expect(serveSecurityFrom({ 'token-file': await tokenFile('') }, '127.0.0.1', {})).rejects.toThrow(
      'is empty',
    );
  });

  it('reads client credentials as id:secret lines, the secret keeping its colons', async () => {
    expect(
      parseClients('# engines\nspark:s3cret:with:colons-long\n\ntrino:another-secret-0123\n', 'f'),
    ).toEqual([
      { id: 'spark', secret: 's3cret:with:colons-long' },
      { id: 'trino', secret: 'another-secret-0123' },
    ]);
    expect(() => parseClients('no-colon', 'f')).toThrow('line 1');
    const security = await serveSecurityFrom({ 'token-ttl': '15m' }, '0.0.0.0', {
      [CLIENTS_ENV]: 'spark:spark-secret-01234567',
    });
    expect(security.auth?.issuesTokens).toBe(true);
  });
});
