/**
 * No secret in an environment variable, the routes file or a template: stacks with every kind of
 * credential floe uses (REST catalog credential and token, schema registry basic auth and bearer token,
 * Glue through IAM, the self-managed Kafka login) are synthesized, the values — distinct markers held
 * only by a stub Secrets Manager — are searched for in everything synthesized, and then the handler's
 * loader, given the synthesized environment and routes, resolves exactly those markers at cold start.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { loadHandlerConfig } from '../../../functions/handlers/config.js';
import type { SecretReader } from '../../../functions/handlers/secrets.js';
import { KafkaToIceberg } from '../../../infra/kafka-to-iceberg.js';
import type { KafkaToIcebergProps } from '../../../infra/props.js';
import { CLUSTER_ARN, ENV, selfManagedRestProps } from './stacks.js';

const MARKERS = {
  registryPassword: 'MARKER-registry-password-7f3a',
  registryToken: 'MARKER-registry-bearer-91c2',
  restCredential: 'MARKER-rest-credential-4d8e',
  restToken: 'MARKER-rest-token-b05f',
};

const arnOf = (name: string) => `arn:aws:secretsmanager:eu-west-1:111122223333:secret:${name}-AbCdEf`;

/** Routes with a registry behind each kind of credential, and one Glue route (IAM, no secret). */
function credentialRoutes(stack: Stack): KafkaToIcebergProps['tables'] {
  const registry = { url: 'https://registry.example.com' };
  return [
    {
      topics: ['orders'],
      table: 'lake.orders',
      format: { value: 'confluent', registry },
      // created in the stack: its ARN is a deploy-time token
      registryCredentials: new secretsmanager.Secret(stack, 'RegistryLogin'),
    },
    {
      topics: ['items'],
      table: 'lake.items',
      format: { value: 'confluent', registry },
      registryCredentials: secretsmanager.Secret.fromSecretCompleteArn(
        stack,
        'RegistryToken',
        arnOf('registry-token'),
      ),
    },
    { topics: ['events'], table: 'lake.events', format: { value: 'glue', glue: { registryName: 'events' } } },
  ];
}

interface Synthesized {
  pipeline: KafkaToIceberg;
  template: string;
}

describe('credentials stay in Secrets Manager', () => {
  let outdir: string;
  const stacks: Record<string, Synthesized> = {};

  beforeAll(async () => {
    outdir = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-secrets-'));
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const build = (id: string, props: (stack: Stack) => KafkaToIcebergProps) => {
      const stack = new Stack(app, id, { env: ENV });
      return { stack, pipeline: new KafkaToIceberg(stack, 'Pipeline', props(stack)) };
    };
    const built = {
      S3Tables: build('S3Tables', (stack) => ({
        source: { kind: 'msk', clusterArn: CLUSTER_ARN },
        tables: credentialRoutes(stack),
        catalog: { kind: 's3tables' },
      })),
      RestCredential: build('RestCredential', (stack) => ({
        ...selfManagedRestProps(stack),
        tables: credentialRoutes(stack),
      })),
      RestToken: build('RestToken', (stack) => {
        const props = selfManagedRestProps(stack);
        return {
          ...props,
          tables: credentialRoutes(stack),
          catalog: {
            kind: 'rest',
            uri: 'https://catalog.example.com',
            warehouse: 'lake',
            credentialSecret: new secretsmanager.Secret(stack, 'CatalogToken'),
          },
        };
      }),
    };
    const assembly = app.synth();
    for (const [id, { pipeline }] of Object.entries(built)) {
      stacks[id] = { pipeline, template: JSON.stringify(assembly.getStackByName(id).template) };
    }
  }, 120_000);

  afterAll(() => fs.rm(outdir, { recursive: true, force: true }));

  it('puts no credential in any template, environment or routes file', async () => {
    // Prepare: everything synthesized, plus each ingest function's routes file content
    const everything = [
      ...Object.values(stacks).flatMap((s) => [s.template, JSON.stringify(s.pipeline.renderedRoutes)]),
      ...(await Promise.all(
        (await fs.readdir(outdir)).map((f) => fs.readFile(path.join(outdir, f), 'utf8').catch(() => '')),
      )),
    ].join('\n');
    // Assess
    for (const marker of Object.values(MARKERS)) expect(everything).not.toContain(marker);
    expect(everything).not.toMatch(/MARKER-/);
    // and the routes name their secrets only through environment variables holding ARNs
    const registries = stacks.S3Tables.pipeline.renderedRoutes.map(
      (r) => (r.format as { registry?: Record<string, unknown> } | undefined)?.registry,
    );
    expect(registries.map((r) => r?.credentialsSecretArnEnv)).toEqual([
      'FLOE_REGISTRY_SECRET_ARN_0',
      'FLOE_REGISTRY_SECRET_ARN_1',
      undefined,
    ]);
  });

  it('resolves exactly those credentials at cold start from the synthesized configuration', async () => {
    for (const [id, { pipeline }] of Object.entries(stacks)) {
      // Prepare: the ingest environment, deploy-time values replaced by stand-in ARNs named after the variable
      const env: Record<string, string> = Object.fromEntries(
        Object.entries(pipeline.ingestEnvironment).map(([k, v]) => [
          k,
          !v.includes('${Token[')
            ? v
            : k === 'FLOE_TABLE_BUCKET_ARN'
              ? 'arn:aws:s3tables:eu-west-1:111122223333:bucket/lake'
              : arnOf(k.toLowerCase()),
        ]),
      );
      const values: Record<string, Record<string, string>> = {
        [env.FLOE_REGISTRY_SECRET_ARN_0]: { username: 'svc', password: MARKERS.registryPassword },
        [env.FLOE_REGISTRY_SECRET_ARN_1]: { bearerToken: MARKERS.registryToken },
      };
      if (env.FLOE_REST_CREDENTIAL_SECRET_ARN) {
        values[env.FLOE_REST_CREDENTIAL_SECRET_ARN] =
          id === 'RestToken' ? { token: MARKERS.restToken } : { credential: `id:${MARKERS.restCredential}` };
      }
      const asked: string[] = [];
      const secrets: SecretReader = {
        async readJson(secretId) {
          asked.push(secretId);
          const value = values[secretId];
          if (!value) throw new Error(`no secret ${secretId}`);
          return value;
        },
      };
      const dir = await fs.mkdtemp(path.join(outdir, 'task-'));
      await fs.writeFile(path.join(dir, env.FLOE_TABLES_FILE), JSON.stringify(pipeline.renderedRoutes));
      // Act
      const config = await loadHandlerConfig(
        { ...env, LAMBDA_TASK_ROOT: dir, AWS_REGION: 'eu-west-1' },
        { secrets },
      );
      // Assess
      expect(config.routes.map((r) => r.format?.registry?.basicAuth)).toEqual([
        `svc:${MARKERS.registryPassword}`,
        undefined,
        undefined,
      ]);
      expect(config.routes[1].format?.registry?.bearerToken).toBe(MARKERS.registryToken);
      expect(config.routes[2].format).toMatchObject({ value: 'glue', glue: { registryName: 'events' } });
      expect(new Set(asked)).toEqual(new Set(Object.keys(values)));
      if (id !== 'S3Tables') expect(config.catalog).toBeInstanceOf(RestCatalog);
    }
  });

  it('refuses plaintext credentials at synth without echoing them', () => {
    for (const key of ['basicAuth', 'bearerToken']) {
      const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Plain', { env: ENV });
      const value = key === 'basicAuth' ? `svc:${MARKERS.registryPassword}` : MARKERS.registryToken;
      const attempt = () =>
        new KafkaToIceberg(stack, 'Pipeline', {
          source: { kind: 'msk', clusterArn: CLUSTER_ARN },
          tables: [
            {
              topics: ['orders'],
              table: 'lake.orders',
              format: { value: 'confluent', registry: { url: 'https://registry.example.com', [key]: value } },
            },
          ],
          catalog: { kind: 's3tables' },
        });
      expect(attempt).toThrow(new RegExp(`format.registry.${key} would be written in plain text`));
      expect(attempt).not.toThrow(/MARKER-/);
    }
  });

  it('lets only the ingest function read the registry secrets, and Glue only for the named registry', () => {
    const policies = JSON.parse(stacks.S3Tables.template).Resources as Record<
      string,
      {
        Type: string;
        Properties: { PolicyDocument?: { Statement: { Action: unknown; Resource: unknown }[] } };
      }
    >;
    const statements = Object.entries(policies)
      .filter(([, r]) => r.Type === 'AWS::IAM::Policy')
      .flatMap(([id, r]) => r.Properties.PolicyDocument!.Statement.map((s) => ({ id, ...s })));
    const secretReaders = statements.filter((s) =>
      JSON.stringify(s.Action).includes('secretsmanager:GetSecretValue'),
    );
    expect(new Set(secretReaders.map((s) => s.id)).size).toBe(1);
    expect(secretReaders[0].id).toMatch(/IngestRole/);
    const glue = statements.filter((s) => JSON.stringify(s.Action).includes('glue:GetSchemaVersion'));
    expect(glue).toHaveLength(1);
    expect(JSON.stringify(glue[0].Resource)).toContain(':registry/events');
    expect(JSON.stringify(glue[0].Resource)).toContain(':schema/events/*');
  });
});
