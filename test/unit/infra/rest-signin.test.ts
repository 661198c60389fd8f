/**
 * The construct's REST sign-in props: the plain settings reach the function's environment as the
 * FLOE_REST_* variables the handlers read, the client secret stays in Secrets Manager (its ARN in the
 * environment, read permission on the role), and props that cannot sign in are refused at synth.
 */
import type { Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KafkaToIcebergProps, RestCatalog } from '../../../infra/props.js';
import { selfManagedRestProps, synthPipeline } from './stacks.js';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:catalog-AbCdEf';

type Resources = Record<string, { Properties: Record<string, unknown> }>;

function withSignIn(signIn: Partial<RestCatalog>): (stack: Stack) => KafkaToIcebergProps {
  return (stack) => {
    const props = selfManagedRestProps(stack);
    return { ...props, catalog: { ...(props.catalog as RestCatalog), ...signIn } };
  };
}

function ingestEnvironment(template: Template): Record<string, unknown> {
  const functions = template.findResources('AWS::Lambda::Function') as Resources;
  const ingest = Object.values(functions).find(
    (f) => f.Properties.Description === 'Kafka batches to Iceberg snapshots',
  );
  if (!ingest) throw new Error('no ingest function in the template');
  return (ingest.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
}

describe('KafkaToIceberg with REST sign-in props', () => {
  let template: Template;

  beforeAll(() => {
    ({ template } = synthPipeline(
      withSignIn({
        oauth2ServerUri: 'https://idp.example.com/realms/lake/protocol/openid-connect/token',
        scope: 'PRINCIPAL_ROLE:ALL',
        audience: 'lake',
        resource: 'urn:lake',
        oauth2Params: { tenant: 't1' },
        oauth2ClientAuth: 'basic',
      }),
    ));
  }, 120_000);

  it('puts the plain settings in the environment, the secret only by its ARN', () => {
    // Act
    const env = ingestEnvironment(template);

    // Assess
    expect(env).toMatchObject({
      FLOE_CATALOG: 'rest',
      FLOE_REST_CREDENTIAL_SECRET_ARN: SECRET_ARN,
      FLOE_REST_OAUTH2_SERVER_URI: 'https://idp.example.com/realms/lake/protocol/openid-connect/token',
      FLOE_REST_SCOPE: 'PRINCIPAL_ROLE:ALL',
      FLOE_REST_AUDIENCE: 'lake',
      FLOE_REST_RESOURCE: 'urn:lake',
      FLOE_REST_OAUTH2_PARAMS: '{"tenant":"t1"}',
      FLOE_REST_OAUTH2_CLIENT_AUTH: 'basic',
    });
  });

  it('lets the function read the credential secret', () => {
    // Act
    const policies = Object.values(template.findResources('AWS::IAM::Policy') as Resources);
    const statements = policies.flatMap(
      (p) =>
        (p.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }).Statement,
    );

    // Assess
    const reads = statements.filter((s) =>
      JSON.stringify(s.Action).includes('secretsmanager:GetSecretValue'),
    );
    expect(reads.some((s) => JSON.stringify(s.Resource).includes(SECRET_ARN))).toBe(true);
  });

  it('sets none of the variables when no sign-in prop is given', () => {
    // Act
    const { template: plain } = synthPipeline(selfManagedRestProps);

    // Assess
    const names = Object.keys(ingestEnvironment(plain));
    expect(names.filter((n) => /OAUTH2|SCOPE|AUDIENCE|RESOURCE/.test(n))).toEqual([]);
  }, 120_000);

  it('refuses sign-in props with SigV4 or without a credential secret', () => {
    expect(() => synthPipeline(withSignIn({ scope: 's', sigV4SigningName: 'glue' }))).toThrow(
      'catalog.scope is an OAuth2 client-credentials setting: it needs catalog.credentialSecret and no sigV4SigningName',
    );
    expect(() => synthPipeline(withSignIn({ audience: 'a', credentialSecret: undefined }))).toThrow(
      'catalog.audience is an OAuth2 client-credentials setting: it needs catalog.credentialSecret',
    );
  });
});
