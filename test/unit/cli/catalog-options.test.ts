/** Which catalog `floe` opens: flags, the FLOE_* environment as defaults, and clear errors for bad combinations. */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type CatalogFlags,
  openCatalog,
  resolveCatalogSettings,
} from '../../../functions/cli/catalog-options.js';
import { main } from '../../../functions/cli/main.js';
import { UsageError } from '../../../functions/cli/usage-error.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { S3TablesCatalog } from '../../../functions/core/catalog/s3tables-catalog.js';

const ARN = 'arn:aws:s3tables:us-east-1:123456789012:bucket/lake';

function usageError(flags: CatalogFlags, env: Record<string, string> = {}): string {
  try {
    resolveCatalogSettings(flags, env);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a UsageError');
}

describe('resolveCatalogSettings', () => {
  it('--warehouse alone is the embedded catalog, whatever FLOE_CATALOG says', () => {
    // Act
    const settings = resolveCatalogSettings(
      { warehouse: 'wh' },
      { FLOE_CATALOG: 's3tables', FLOE_TABLE_BUCKET_ARN: ARN },
    );

    // Assess
    expect(settings.kind).toBe('embedded');
    expect(settings.env).toMatchObject({ FLOE_CATALOG: 'embedded', FLOE_WAREHOUSE: 'wh' });
    expect(settings.env.FLOE_TABLE_BUCKET_ARN).toBeUndefined();
  });

  it('--table-bucket-arn implies S3 Tables; --lock-table wins over FLOE_LOCK_TABLE', () => {
    // Act
    const settings = resolveCatalogSettings(
      { 'table-bucket-arn': ARN, 'lock-table': 'mine' },
      { FLOE_LOCK_TABLE: 'deployed', FLOE_LOCK_LEASE_MS: '5000' },
    );

    // Assess
    expect(settings.env).toEqual({
      FLOE_CATALOG: 's3tables',
      FLOE_TABLE_BUCKET_ARN: ARN,
      FLOE_LOCK_TABLE: 'mine',
      FLOE_LOCK_LEASE_MS: '5000',
    });
  });

  it("takes a deployed function's FLOE_* variables as defaults", () => {
    // Act
    const s3tables = resolveCatalogSettings(
      {},
      { FLOE_CATALOG: 's3tables', FLOE_TABLE_BUCKET_ARN: ARN, FLOE_LOCK_TABLE: 'locks' },
    );
    const rest = resolveCatalogSettings(
      {},
      {
        FLOE_CATALOG: 'rest',
        FLOE_REST_URI: 'https://catalog.example.com',
        FLOE_REST_WAREHOUSE: 'lake',
        FLOE_REST_CREDENTIAL_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:1:secret:x',
      },
    );

    // Assess
    expect(s3tables.env).toMatchObject({ FLOE_TABLE_BUCKET_ARN: ARN, FLOE_LOCK_TABLE: 'locks' });
    expect(rest.env).toMatchObject({
      FLOE_CATALOG: 'rest',
      FLOE_REST_URI: 'https://catalog.example.com',
      FLOE_REST_WAREHOUSE: 'lake',
      FLOE_REST_CREDENTIAL_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:1:secret:x',
    });
  });

  it('REST auth on the command line replaces the environment’s', () => {
    // Prepare
    const env = {
      FLOE_REST_URI: 'http://127.0.0.1:1',
      FLOE_REST_CREDENTIAL_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:1:secret:x',
      FLOE_REST_SIGV4_SIGNING_NAME: 'glue',
    };

    // Act
    const token = resolveCatalogSettings({ catalog: 'rest', token: 't0k' }, env);
    const sigv4 = resolveCatalogSettings({ catalog: 'rest', sigv4: true }, env);
    const named = resolveCatalogSettings({ uri: 'http://h', sigv4: true, 'signing-name': 's3tables' }, {});

    // Assess
    expect(token.token).toBe('t0k');
    expect(token.env.FLOE_REST_CREDENTIAL_SECRET_ARN).toBeUndefined();
    expect(token.env.FLOE_REST_SIGV4_SIGNING_NAME).toBeUndefined();
    expect(sigv4.env.FLOE_REST_SIGV4_SIGNING_NAME).toBe('execute-api');
    expect(sigv4.env.FLOE_REST_CREDENTIAL_SECRET_ARN).toBeUndefined();
    expect(named.env).toMatchObject({ FLOE_REST_URI: 'http://h', FLOE_REST_SIGV4_SIGNING_NAME: 's3tables' });
  });

  it('names the missing setting', () => {
    expect(usageError({ catalog: 's3tables' })).toMatch(/--catalog s3tables needs --table-bucket-arn ARN/);
    expect(usageError({ catalog: 'rest' })).toMatch(/--catalog rest needs --uri URL \(or FLOE_REST_URI\)/);
    expect(usageError({ catalog: 'embedded' })).toMatch(/needs --warehouse DIR/);
    expect(usageError({}, { FLOE_CATALOG: 's3tables' })).toMatch(/--table-bucket-arn/);
    expect(usageError({})).toMatch(/no catalog given: use --warehouse DIR/);
  });

  it('refuses flags of two catalogs, and auth flags that contradict each other', () => {
    expect(usageError({ warehouse: 'wh', 'table-bucket-arn': ARN })).toBe(
      '--warehouse (embedded catalog) and --table-bucket-arn (s3tables catalog) conflict: give the flags of one catalog',
    );
    expect(usageError({ catalog: 'rest', 'table-bucket-arn': ARN, uri: 'http://h' })).toMatch(
      /--table-bucket-arn is for --catalog s3tables, not --catalog rest/,
    );
    expect(usageError({ catalog: 's3tables', 'table-bucket-arn': ARN, sigv4: true })).toMatch(
      /--sigv4 is for --catalog rest/,
    );
    expect(usageError({ uri: 'http://h', credential: 'id:secret', token: 't' })).toMatch(
      /--credential and --token conflict/,
    );
    expect(usageError({ uri: 'http://h', sigv4: true, token: 't' })).toMatch(/--sigv4 and --token conflict/);
    expect(usageError({ uri: 'http://h', 'signing-name': 'glue' })).toMatch(
      /--signing-name goes with --sigv4/,
    );
    expect(usageError({ uri: 'http://h', credential: 'no-colon' })).toMatch(/CLIENT_ID:SECRET/);
    expect(usageError({ catalog: 'hive' })).toMatch(
      /--catalog must be embedded, s3tables or rest, not 'hive'/,
    );
    expect(usageError({}, { FLOE_CATALOG: 'glue' })).toMatch(/^FLOE_CATALOG must be/);
  });
});

describe('openCatalog', () => {
  it('builds the catalog the handlers would (no AWS call needed to construct it)', async () => {
    // Act
    const embedded = await openCatalog({ warehouse: 'wh' }, { env: {} });
    const s3tables = await openCatalog({ 'table-bucket-arn': ARN }, { env: {} });
    const rest = await openCatalog({ uri: 'http://127.0.0.1:1', token: 't' }, { env: {} });
    const restFromEnv = await openCatalog({}, { env: { FLOE_CATALOG: 'rest', FLOE_REST_URI: 'http://h' } });

    // Assess
    expect(embedded.catalog).toBeInstanceOf(EmbeddedCatalog);
    expect(s3tables.catalog).toBeInstanceOf(S3TablesCatalog);
    expect((s3tables.catalog as S3TablesCatalog).tableBucketArn).toBe(ARN);
    expect(rest.catalog).toBeInstanceOf(RestCatalog);
    expect(restFromEnv.catalog).toBeInstanceOf(RestCatalog);
    expect(embedded.lock).toBeUndefined();
  });

  it('reports a malformed table bucket ARN from the catalog itself', async () => {
    await expect(openCatalog({ 'table-bucket-arn': 'lake' }, { env: {} })).rejects.toThrow(
      /'lake' is not a table bucket ARN/,
    );
  });
});

describe('floe <command> with bad catalog flags', () => {
  let err: string[];
  beforeEach(() => {
    err = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('exits with 2 and says what is missing or conflicting', async () => {
    // Act
    const missing = await main(['scan', '--catalog', 's3tables', '--table', 'sales.orders']);
    const missingMessage = err.join('');
    err.length = 0;
    const conflict = await main([
      'inspect',
      '--warehouse',
      'wh',
      '--uri',
      'http://127.0.0.1:1',
      '--table',
      'sales.orders',
    ]);
    const conflictMessage = err.join('');

    // Assess
    expect(missing).toBe(2);
    expect(missingMessage).toMatch(/^floe: --catalog s3tables needs --table-bucket-arn ARN/);
    expect(conflict).toBe(2);
    expect(conflictMessage).toMatch(
      /^floe: --warehouse \(embedded catalog\) and --uri \(rest catalog\) conflict/,
    );
  });

  it('prints the usage with the catalog options for --help after a command', async () => {
    // Prepare
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });

    // Act
    const code = await main(['scan', '--help']);

    // Assess
    expect(code).toBe(0);
    expect(out.join('')).toContain('--table-bucket-arn ARN');
    expect(out.join('')).toContain('--lock-table NAME');
  });
});

describe('the CLI has no import circle', () => {
  it('no command imports main.ts', async () => {
    // Prepare
    const dir = join(import.meta.dirname, '../../../functions/cli/commands');

    // Act
    const importing: string[] = [];
    for (const file of await readdir(dir)) {
      if (/from '\.\.\/main\.js'/.test(await readFile(join(dir, file), 'utf8'))) importing.push(file);
    }

    // Assess
    expect(importing).toEqual([]);
  });
});
