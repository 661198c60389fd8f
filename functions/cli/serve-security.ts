/**
 * `floe serve`'s security flags: who may read (a bearer token, OAuth2 clients) and TLS, and the rule
 * that a server reachable from other machines has at least one of them unless the user says
 * `--insecure`.
 *
 * Secrets never come from the command line, where `ps` and shell history show them to every user of
 * the machine: a token comes from `--token-file` or `FLOE_SERVE_TOKEN`, clients from
 * `--client-credentials-file` or `FLOE_SERVE_CLIENT_CREDENTIALS`. `--token` is refused with a message
 * saying so rather than accepted with a warning, which would still leave the token in `ps` for as long
 * as the server runs.
 *
 * HTTPS takes `--https-cert`/`--https-key`: `--tls-cert`/`--tls-key` already name the Kafka
 * connection's client certificate (kafka-options.ts), which `floe serve --live` takes as `floe run` does.
 */
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { MIN_SECRET_LENGTH, ServeAuth, type ServeClient } from '../core/live/serve-auth.js';
import { UsageError } from './options.js';

export const TOKEN_ENV = 'FLOE_SERVE_TOKEN';
export const CLIENTS_ENV = 'FLOE_SERVE_CLIENT_CREDENTIALS';

export const SERVE_SECURITY_FLAGS = {
  token: { type: 'string' },
  'token-file': { type: 'string' },
  'client-credentials-file': { type: 'string' },
  'token-ttl': { type: 'string' },
  'https-cert': { type: 'string' },
  'https-key': { type: 'string' },
  insecure: { type: 'boolean' },
} as const;

export interface ServeSecurityValues {
  token?: string;
  'token-file'?: string;
  'client-credentials-file'?: string;
  'token-ttl'?: string;
  'https-cert'?: string;
  'https-key'?: string;
  insecure?: boolean;
}

export interface ServeSecurity {
  auth?: ServeAuth;
  tls?: { cert: Buffer; key: Buffer };
  /** The one warning line to print at start-up, if any. */
  warning?: (url: string) => string | undefined;
}

/** Whether `host` is reachable only from this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (h.startsWith('::ffff:')) return h.slice(7).startsWith('127.');
  return h === '::1';
}

async function readSecretFile(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`${flag} ${path} cannot be read: ${(error as Error).message}`);
  }
}

/** `id:secret` lines (blank lines and `#` comments skipped). @throws UsageError */
export function parseClients(text: string, from: string): ServeClient[] {
  const clients: ServeClient[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new UsageError(`${from} line ${i + 1}: expected client_id:client_secret`);
    clients.push({ id: line.slice(0, colon), secret: line.slice(colon + 1) });
  }
  return clients;
}

function parseSeconds(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+)(s|m|h)$/.exec(text);
  if (!m || Number(m[1]) === 0)
    throw new UsageError(`--token-ttl must look like 900s, 60m or 12h, got '${text}'`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as 's' | 'm' | 'h'];
}

/**
 * Reads the security flags and the environment, and checks the binding rule.
 * @throws UsageError for `--token`, unreadable files, short secrets, a certificate without its key
 *   (or the reverse), and a non-loopback host with neither authentication nor TLS without `--insecure`
 */
export async function serveSecurityFrom(
  values: ServeSecurityValues,
  host: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ServeSecurity> {
  if (values.token !== undefined) {
    throw new UsageError(
      `--token would show the token to every user of this machine (ps, shell history): put it in a file for --token-file, or in ${TOKEN_ENV}`,
    );
  }
  const tokens: string[] = [];
  if (values['token-file'] !== undefined) {
    const token = (await readSecretFile(values['token-file'], '--token-file')).trim();
    if (token === '') throw new UsageError(`--token-file ${values['token-file']} is empty`);
    tokens.push(token);
  }
  if (env[TOKEN_ENV]) tokens.push(env[TOKEN_ENV].trim());
  const clients: ServeClient[] = [];
  if (values['client-credentials-file'] !== undefined) {
    const file = values['client-credentials-file'];
    clients.push(...parseClients(await readSecretFile(file, '--client-credentials-file'), file));
  }
  if (env[CLIENTS_ENV]) clients.push(...parseClients(env[CLIENTS_ENV], CLIENTS_ENV));
  for (const secret of [...tokens, ...clients.map((c) => c.secret)]) {
    if (secret.length < MIN_SECRET_LENGTH)
      throw new UsageError(`tokens and client secrets must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  const tokenTtlSeconds = parseSeconds(values['token-ttl']);
  if (tokenTtlSeconds !== undefined && clients.length === 0)
    throw new UsageError('--token-ttl goes with client credentials (the tokens floe serve issues)');
  const auth =
    tokens.length + clients.length > 0 ? new ServeAuth({ tokens, clients, tokenTtlSeconds }) : undefined;
  const cert = values['https-cert'];
  const key = values['https-key'];
  if ((cert === undefined) !== (key === undefined))
    throw new UsageError('--https-cert and --https-key go together');
  const tls =
    cert !== undefined && key !== undefined
      ? {
          cert: Buffer.from(await readSecretFile(cert, '--https-cert')),
          key: Buffer.from(await readSecretFile(key, '--https-key')),
        }
      : undefined;
  const loopback = isLoopbackHost(host);
  if (!loopback && !auth && !tls && !values.insecure) {
    throw new UsageError(
      `--host ${host} is reachable from other machines: give a token (--token-file or ${TOKEN_ENV}), client credentials (--client-credentials-file or ${CLIENTS_ENV}) or --https-cert/--https-key, or say --insecure to serve every table's metadata to anyone`,
    );
  }
  const warning = (url: string): string | undefined => {
    if (!auth)
      return `warning: ${url} is open: anyone who reaches it reads every table's metadata (see --token-file)`;
    if (!tls && !loopback)
      return `warning: ${url} is not encrypted: tokens and client secrets cross the network in clear (see --https-cert)`;
    return undefined;
  };
  return { auth, tls, warning };
}
