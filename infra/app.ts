/**
 * The CDK app `cdk.json` runs (`npx tsx infra/app.ts`): the example stack of ./example-stack.ts.
 *
 *     npx cdk synth
 *     npx cdk deploy -c mskClusterArn=arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>
 */
import { buildExampleApp } from './example-stack.js';

buildExampleApp().app.synth();
