/**
 * floe as a user gets it: `npm pack` (which builds the package), the tarball installed into an empty
 * folder with aws-cdk-lib and constructs, and there
 * (a) the installed `floe` bin runs the demo and a scan (compiled code: no tsx, no TypeScript);
 * (b) a plain JavaScript CDK app imports the construct from `floe/cdk` and synthesizes with no network,
 *     its ingest function's code the bundle prebuilt in the package (no esbuild in the folder);
 * (c) `npm ls --omit=dev` there lists every package the installed runtime imports.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../..');
/** The pinned Node 22 (the CLI needs it: Node 20 lacks JSON.rawJSON), first on PATH for npm too. */
const NODE_BIN = join(ROOT, 'node_modules/.bin');
const NODE = join(NODE_BIN, 'node');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};

/** `unshare -n` (a new network namespace with no interface up) where this machine allows it. */
const CAN_UNSHARE = spawnSync('unshare', ['-n', 'true']).status === 0;

let work: string;
let app: string;

function run(command: string, args: string[], cwd: string, timeout = 240_000): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    timeout,
    maxBuffer: 64 * 1024 * 1024,
    env: { PATH: `${NODE_BIN}:${process.env.PATH}`, HOME: process.env.HOME ?? work, CI: 'true' },
  });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${result.status ?? result.signal}:\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result;
}

/** The installed `floe`, as `npx floe` or a shell would run it (the bin link in node_modules/.bin). */
function floe(...args: string[]): string {
  return run(NODE, [join(app, 'node_modules/.bin/floe'), ...args], app).stdout;
}

/** The packages a compiled file loads at run time (static imports, `import()`, `require()`). */
function packagesImportedBy(code: string): string[] {
  const specifiers = [
    ...[...code.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!),
    ...[...code.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!),
    ...[...code.matchAll(/\b(?:import|require)\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!),
  ];
  return specifiers
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:') && !builtinModules.includes(s))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!));
}

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path, suffix);
    return path.endsWith(suffix) ? [path] : [];
  });
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'floe-package-'));
  run('npm', ['pack', '--pack-destination', work], ROOT, 420_000);
  const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball into ${work}`);
  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'floe-user', private: true, type: 'module' }),
  );
  run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      join(work, tarball),
      `aws-cdk-lib@${manifest.devDependencies['aws-cdk-lib']}`,
      `constructs@${manifest.devDependencies.constructs}`,
    ],
    app,
  );
}, 720_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed floe, installed', () => {
  it('holds compiled code and declarations, nothing of the tests and no TypeScript source', () => {
    // Prepare
    const installed = join(app, 'node_modules/floe');

    // Act
    const all = filesUnder(installed, '');
    const typescript = all.filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'));

    // Assess
    expect(typescript).toEqual([]);
    expect(all.some((path) => path.includes('/test/'))).toBe(false);
    expect(all).toContain(join(installed, 'dist/infra/index.d.ts'));
    expect(all).toContain(join(installed, 'dist/functions/core/index.d.ts'));
    expect(all).toContain(join(installed, 'infra/package/CHANGELOG.md'));
  });

  it('runs `floe demo` and `floe scan` from the installed bin', () => {
    // Act
    const demo = floe('demo', '--warehouse', 'wh');
    const scan = floe(
      'scan',
      '--warehouse',
      'wh',
      '--table',
      'sales.orders',
      '--where',
      "country = 'DE'",
      '--json',
    );

    // Assess
    expect(demo).toContain('=== the table');
    expect(demo).toContain('sales.orders_current');
    expect(demo).toContain('sales.revenue_per_country_day');
    const rows = scan
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { country: string });
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row) => row.country === 'DE')).toBe(true);
  });

  it('reads the same rows through the `floe` entry point in code of its own', () => {
    // Prepare
    writeFileSync(
      join(app, 'scan.mjs'),
      `import { EmbeddedCatalog, parseExpression, parseIdentifier, planScan, readScanRows } from 'floe';

const catalog = new EmbeddedCatalog({ warehouse: 'wh' });
const table = await catalog.loadTable(parseIdentifier('sales.orders'));
const filter = parseExpression("country = 'DE'");
const rows = await readScanRows(table, await planScan(table, { filter }), { filter });
console.log(JSON.stringify(rows.map((row) => String(row.order_id)).sort()));
`,
    );
    const cli = floe(
      'scan',
      '--warehouse',
      'wh',
      '--table',
      'sales.orders',
      '--where',
      "country = 'DE'",
      '--json',
    );

    // Act
    const fromCode = JSON.parse(run(NODE, ['scan.mjs'], app).stdout) as string[];

    // Assess
    const fromCli = cli
      .trim()
      .split('\n')
      .map((line) => String((JSON.parse(line) as { order_id: number }).order_id))
      .sort();
    expect(fromCode.length).toBeGreaterThan(0);
    expect(fromCode).toEqual(fromCli);
  });

  it('synthesizes a JavaScript CDK app importing floe/cdk, offline, with the prebuilt ingest bundle', () => {
    // Prepare
    writeFileSync(
      join(app, 'app.mjs'),
      `import { App, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { KafkaToIceberg } from 'floe/cdk';

const app = new App({ outdir: 'cdk.out' });
const stack = new Stack(app, 'Shop');
const secret = (id, name) =>
  secretsmanager.Secret.fromSecretCompleteArn(stack, id, \`arn:aws:secretsmanager:eu-west-1:111122223333:secret:\${name}-AbCdEf\`);
new KafkaToIceberg(stack, 'Orders', {
  source: {
    kind: 'self-managed',
    bootstrapServers: ['kafka-1.example.com:9096'],
    authentication: { method: 'SASL_SCRAM_512', secret: secret('KafkaSecret', 'kafka') },
  },
  tables: [{ topics: ['orders'], table: 'shop.orders', mode: 'append' }],
  catalog: {
    kind: 'rest',
    uri: 'https://catalog.example.com/api/catalog',
    warehouse: 'lake',
    warehouseBucket: s3.Bucket.fromBucketName(stack, 'Warehouse', 'lake-warehouse'),
  },
});
app.synth();
`,
    );
    const [command, args] = CAN_UNSHARE ? ['unshare', ['-n', NODE, 'app.mjs']] : [NODE, ['app.mjs']];

    // Act
    run(command as string, args as string[], app);

    // Assess
    const template = JSON.parse(readFileSync(join(app, 'cdk.out/Shop.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const ingest = Object.values(template.Resources).find(
      (r) =>
        r.Type === 'AWS::Lambda::Function' &&
        r.Properties.Description === 'Kafka batches to Iceberg snapshots',
    );
    if (!ingest) throw new Error('the template holds no ingest function');
    expect(ingest.Properties.Handler).toBe('index.handler');
    // the code's key is the asset's hash: CDK staged the asset in cdk.out/asset.<hash>
    const key = (ingest.Properties.Code as { S3Key: string }).S3Key;
    const assetFolder = join(app, 'cdk.out', `asset.${key.replace(/\.zip$/, '')}`);
    const shipped = readdirSync(join(app, 'node_modules/floe/dist/lambda/ingest'));
    const deployed = readdirSync(assetFolder);
    expect(deployed).toEqual(expect.arrayContaining([...shipped, 'floe-routes.json']));
    expect(readFileSync(join(assetFolder, 'index.mjs'))).toEqual(
      readFileSync(join(app, 'node_modules/floe/dist/lambda/ingest/index.mjs')),
    );
    expect(JSON.parse(readFileSync(join(assetFolder, 'floe-routes.json'), 'utf8'))).toEqual([
      expect.objectContaining({ table: 'shop.orders', topics: ['orders'] }),
    ]);
    // nothing could have bundled at synth: esbuild is not installed here
    expect(readdirSync(join(app, 'node_modules'))).not.toContain('esbuild');
  });

  it('type-checks the same app in TypeScript against the shipped declarations', () => {
    // Prepare: strict TypeScript as a user's CDK app sets it up, compiled by the clone's tsc (a user
    // installs their own). Only type-checked: the JavaScript app above already synthesizes the same
    // construct from the same compiled code, and a second synth costs CI half a minute.
    writeFileSync(
      join(app, 'app.ts'),
      `import { App, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { KafkaToIceberg, type KafkaToIcebergProps, type TableRoute } from 'floe/cdk';

const app = new App({ outdir: 'cdk.out.ts' });
const stack = new Stack(app, 'ShopTs');
const secret = secretsmanager.Secret.fromSecretCompleteArn(
  stack,
  'KafkaSecret',
  'arn:aws:secretsmanager:eu-west-1:111122223333:secret:kafka-AbCdEf',
);
const orders: TableRoute = { topics: ['orders'], table: 'shop.orders', mode: 'append' };
// @ts-expect-error the declarations know the modes: 'merge' is none of them
const wrong: TableRoute = { topics: ['orders'], table: 'shop.wrong', mode: 'merge' };
const props: KafkaToIcebergProps = {
  source: {
    kind: 'self-managed',
    bootstrapServers: ['kafka-1.example.com:9096'],
    authentication: { method: 'SASL_SCRAM_512', secret },
  },
  tables: [orders],
  catalog: {
    kind: 'rest',
    uri: 'https://catalog.example.com/api/catalog',
    warehouse: 'lake',
    warehouseBucket: s3.Bucket.fromBucketName(stack, 'Warehouse', 'lake-warehouse'),
  },
};
const pipeline: KafkaToIceberg = new KafkaToIceberg(stack, 'Orders', props);
app.synth();
console.log(pipeline.node.id, wrong.table);
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          // as CDK apps set it: aws-cdk-lib's own declarations need newer libs than ES2022
          skipLibCheck: true,
          verbatimModuleSyntax: true,
          types: [],
        },
        files: ['app.ts'],
      }),
    );
    // Act: one compile (an unused @ts-expect-error fails it, so the wrong mode must be refused)
    const compiled = run(NODE, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], app);

    // Assess
    expect(compiled.stdout.trim()).toBe('');
  });

  it('`npm ls --omit=dev` lists every package the installed runtime imports', () => {
    // Prepare
    const installed = join(app, 'node_modules/floe/dist');
    const imported = new Set(
      [
        ...filesUnder(join(installed, 'functions'), '.js'),
        ...filesUnder(join(installed, 'infra'), '.js'),
      ].flatMap((file) => packagesImportedBy(readFileSync(file, 'utf8'))),
    );

    // Act
    const listed = run('npm', ['ls', '--omit=dev', '--all', '--parseable'], app).stdout;
    const names = new Set(
      listed
        .split('\n')
        .filter((line) => line.includes('node_modules/'))
        .map((line) => line.slice(line.lastIndexOf('node_modules/') + 'node_modules/'.length)),
    );

    // Assess
    expect(imported).toContain('hyparquet');
    expect(imported).toContain('aws-cdk-lib');
    expect([...imported].filter((name) => !names.has(name))).toEqual([]);
  });
});
