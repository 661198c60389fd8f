/**
 * For infra/localstack.sh: what it takes to run the synthesized maintenance state machine without
 * CloudFormation (a free LocalStack cannot deploy the whole stack: its Kafka event source mappings and
 * MSK are paid features). Reads a `cdk synth` output directory and prints, as JSON, each maintenance
 * function (name, handler, bundled asset folder, environment) and the state machine definition with its
 * function ARNs pointing at those names.
 *
 *     npx tsx infra/localstack-maintenance.ts <cdk.out> <region> <account> <tableBucketArn> <lockTable>
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { placeholderFunctionArn, renderStateMachineDefinition } from './render-definition.js';

interface Resource {
  Type: string;
  Properties: {
    Handler?: string;
    Code?: { S3Key?: string };
    Environment?: { Variables?: Record<string, unknown> };
  };
}

const [outdir, region, account, tableBucketArn, lockTable] = process.argv.slice(2);
if (!lockTable) {
  process.stderr.write(
    'usage: localstack-maintenance.ts <cdk.out> <region> <account> <tableBucketArn> <lockTable>\n',
  );
  process.exit(2);
}
const template = JSON.parse(readFileSync(path.join(outdir, 'FloeExample.template.json'), 'utf8')) as {
  Resources: Record<string, Resource>;
};
const functions = Object.entries(template.Resources)
  .filter(([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties.Handler !== 'index.handler')
  .map(([id, r]) => {
    // the template's own values where they are plain; the local resources where they are deploy-time
    const environment: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.Properties.Environment?.Variables ?? {})) {
      if (typeof v === 'string') environment[k] = v;
    }
    Object.assign(environment, { FLOE_TABLE_BUCKET_ARN: tableBucketArn, FLOE_LOCK_TABLE: lockTable });
    return {
      id,
      name: `floe-local-${id}`.slice(0, 64),
      handler: r.Properties.Handler,
      assetDir: path.join(outdir, `asset.${r.Properties.Code?.S3Key?.replace(/\.zip$/, '')}`),
      environment,
    };
  });
let definition = JSON.stringify(renderStateMachineDefinition(template));
for (const fn of functions) {
  definition = definition.replaceAll(
    placeholderFunctionArn(fn.id),
    `arn:aws:lambda:${region}:${account}:function:${fn.name}`,
  );
}
process.stdout.write(JSON.stringify({ functions, definition }, null, 2));
