/**
 * The CDK app `cdk.json` runs (`npx tsx infra/app.ts`): the example stack of ./example-stack.ts, checked
 * by cdk-nag's AwsSolutions pack on every synth (a finding the construct has not acknowledged, with its
 * reason, fails `cdk synth` before anything can be deployed).
 *
 *     npx cdk synth
 *     npx cdk deploy -c mskClusterArn=arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>
 */
import { addNagChecks, buildExampleApp } from './example-stack.js';

addNagChecks(buildExampleApp().app).synth();
