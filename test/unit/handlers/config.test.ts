/**
 * loadHandlerConfig: routes from a file in the function's code directory or inline, and credentials
 * resolved from Secrets Manager (a stub reader here) at cold start, never taken from the environment.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { createCatalogFromEnv, loadHandlerConfig } from '../../../functions/handlers/config.js';
import { parseSecretJson, type SecretReader } from '../../../functions/handlers/secrets.js';

const ARN = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:registry-AbCdEf';

/** A reader over fixed secrets that records what was asked. */
function stubSecrets(values: Record<string, unknown>): SecretReader & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async readJson(id) {
      asked.push(id);
      if (!(id in values)) throw new Error(`ResourceNotFoundException: ${id}`);
      return values[id] as Record<string, unknown>;
    },
  };
}

const registryRoute = (registry: Record<string, unknown>) => [
  { table: 'sales.orders', topics: ['orders'], format: { value: 'confluent', registry } },
];

describe('loadHandlerConfig', () => {
  let root: string;
  let warehouse: string;
  const base = () => ({ FLOE_CATALOG: 'embedded', FLOE_WAREHOUSE: warehouse });

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'floe-config-'));
    warehouse = path.join(root, 'warehouse');
    await mkdir(path.join(root, 'task'), { recursive: true });
    await writeFile(
      path.join(root, 'task', 'floe-routes.json'),
      JSON.stringify([
        { table: 'sales.orders', topics: ['orders'] },
        { table: 'sales.items', topics: ['items'] },
      ]),
    );
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('reads routes from FLOE_TABLES_FILE, relative to LAMBDA_TASK_ROOT', async () => {
    // Act
    const config = await loadHandlerConfig({
      ...base(),
      FLOE_TABLES_FILE: 'floe-routes.json',
      LAMBDA_TASK_ROOT: path.join(root, 'task'),
    });
    // Assess
    expect(config.routes.map((r) => r.table.name)).toEqual(['orders', 'items']);
  });

  it('still takes inline FLOE_TABLES, and refuses both at once or a missing file', async () => {
    const inline = await loadHandlerConfig({ ...base(), FLOE_TABLES: '[{"table":"a.b","topics":["t"]}]' });
    expect(inline.routes).toHaveLength(1);
    await expect(
      loadHandlerConfig({ ...base(), FLOE_TABLES: '[]', FLOE_TABLES_FILE: 'floe-routes.json' }),
    ).rejects.toThrow('set FLOE_TABLES or FLOE_TABLES_FILE, not both');
    await expect(
      loadHandlerConfig({ ...base(), FLOE_TABLES_FILE: 'nope.json', LAMBDA_TASK_ROOT: root }),
    ).rejects.toThrow(/FLOE_TABLES_FILE .*nope\.json cannot be read/);
    await expect(loadHandlerConfig(base())).rejects.toThrow(ValidationError);
  });

  it('fills registry credentials from the secret each route names', async () => {
    // Prepare
    const secrets = stubSecrets({ [ARN]: { username: 'svc', password: 'pw-1' } });
    const routes = [
      ...registryRoute({ url: 'https://sr.example.com', credentialsSecretArn: ARN }),
      {
        table: 'sales.items',
        topics: ['items'],
        format: {
          value: 'confluent',
          registry: { url: 'https://sr.example.com', credentialsSecretArn: ARN },
        },
      },
    ];
    // Act
    const config = await loadHandlerConfig({ ...base(), FLOE_TABLES: JSON.stringify(routes) }, { secrets });
    // Assess
    expect(config.routes.map((r) => r.format?.registry?.basicAuth)).toEqual(['svc:pw-1', 'svc:pw-1']);
    expect(secrets.asked.every((id) => id === ARN)).toBe(true);
  });

  it('takes the ARN from the variable credentialsSecretArnEnv names (the construct’s deploy-time ARNs)', async () => {
    const secrets = stubSecrets({ [ARN]: { bearerToken: 'tok-1' } });
    const routes = registryRoute({
      url: 'https://sr.example.com',
      credentialsSecretArnEnv: 'FLOE_SECRET_ARN_0',
    });
    const config = await loadHandlerConfig(
      { ...base(), FLOE_TABLES: JSON.stringify(routes), FLOE_SECRET_ARN_0: ARN },
      { secrets },
    );
    expect(config.routes[0].format?.registry).toMatchObject({ bearerToken: 'tok-1', basicAuth: undefined });
    await expect(
      loadHandlerConfig({ ...base(), FLOE_TABLES: JSON.stringify(routes) }, { secrets }),
    ).rejects.toThrow('environment variable FLOE_SECRET_ARN_0 is not set');
  });

  it('refuses a malformed secret, naming the secret and never its value', async () => {
    const routes = JSON.stringify(
      registryRoute({ url: 'https://sr.example.com', credentialsSecretArn: ARN }),
    );
    for (const value of [{ basicAuth: 'u:pw-2', bearerToken: 'tok-2' }, { username: 'only-pw-2' }, {}]) {
      const error = await loadHandlerConfig(
        { ...base(), FLOE_TABLES: routes },
        { secrets: stubSecrets({ [ARN]: value }) },
      ).catch((e: unknown) => e as Error);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toContain(ARN);
      expect((error as Error).message).not.toMatch(/pw-2|tok-2/);
    }
  });

  it('reads the REST catalog credential through the same reader', async () => {
    const secrets = stubSecrets({ [ARN]: { credential: 'id:secret' } });
    const env = {
      FLOE_CATALOG: 'rest',
      FLOE_REST_URI: 'https://catalog.example.com',
      FLOE_REST_CREDENTIAL_SECRET_ARN: ARN,
    };
    await expect(createCatalogFromEnv(env, secrets)).resolves.toBeDefined();
    expect(secrets.asked).toEqual([ARN]);
    await expect(createCatalogFromEnv(env, stubSecrets({ [ARN]: { user: 'x' } }))).rejects.toThrow(
      'holds neither "credential" nor "token"',
    );
  });
});

describe('parseSecretJson', () => {
  it('takes a JSON object and refuses anything else without echoing it', () => {
    expect(parseSecretJson(ARN, '{"a":"b"}')).toEqual({ a: 'b' });
    for (const text of ['not-json-s3cr3t', '"s3cr3t"', '[1]', undefined]) {
      const error = (() => {
        try {
          parseSecretJson(ARN, text);
        } catch (e) {
          return e as Error;
        }
      })();
      expect(error).toBeInstanceOf(ValidationError);
      expect(error?.message).not.toContain('s3cr3t');
    }
  });
});
