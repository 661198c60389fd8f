import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addNagChecks, buildExampleApp } from '../../../infra/example-stack.js';
import { KafkaToIceberg } from '../../../infra/kafka-to-iceberg.js';
import { ENV, fullProps, selfManagedRestProps } from './stacks.js';

/** The example stack plus the two test configurations, in one app that does not bundle. */
function buildApp(outdir: string): App {
  const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
  buildExampleApp(app);
  const full = new Stack(app, 'Full', { env: ENV });
  new KafkaToIceberg(full, 'Pipeline', fullProps(full));
  const rest = new Stack(app, 'Rest', { env: ENV });
  new KafkaToIceberg(rest, 'Pipeline', selfManagedRestProps(rest));
  return app;
}

interface Finding {
  rule: string;
  path: string;
}

/** What AwsSolutions reports with acknowledgements ignored (cdk-nag consults them per finding). */
function rawFindings(app: App): Finding[] {
  const pack = new AwsSolutionsChecks(app);
  (pack as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
  return pack
    .validateScope(app)
    .violations.flatMap((v) =>
      v.violatingResources.map((r) => ({ rule: v.ruleName, path: r.constructPath ?? '' })),
    );
}

/** Every acknowledgement in the tree: the rule id, the reason and the construct path it covers. */
function acknowledgements(root: IConstruct): { rule: string; reason: string; path: string }[] {
  return root.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) =>
        Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({
          rule: id.replace(/^annotation::/i, ''),
          reason,
          path: c.node.path,
        })),
      ),
  );
}

describe('cdk-nag AwsSolutions', () => {
  let outdir: string;

  beforeAll(async () => {
    outdir = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-nag-'));
  });

  afterAll(async () => {
    await fs.rm(outdir, { recursive: true, force: true });
  });

  it('reports no unacknowledged error or warning', () => {
    // Prepare
    const app = buildApp(outdir);
    // Act
    const report = new AwsSolutionsChecks(app).validateScope(app);
    // Assess
    const found = report.violations.map(
      (v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath)}`,
    );
    expect(found).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('passes synthesis with the pack registered as CDK documents it (Validations.addPlugins)', () => {
    // Prepare
    const app = buildApp(path.join(outdir, 'plugin'));
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    // Act + Assess: synth throws "Validation failed" on any finding
    expect(() => app.synth()).not.toThrow();
  });

  it('acknowledges only findings that exist, each with a reason', () => {
    // Prepare
    const app = buildApp(path.join(outdir, 'raw'));
    const raw = rawFindings(app);
    const acks = acknowledgements(app).filter((a) => a.rule.startsWith('AwsSolutions-'));
    // Assess: without acknowledgements there are findings, and each acknowledgement covers one of them
    expect(raw.length).toBeGreaterThan(0);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.reason.length, ack.rule).toBeGreaterThan(20);
      const covered = raw.some(
        (f) => f.rule === ack.rule && (f.path === ack.path || f.path.startsWith(`${ack.path}/`)),
      );
      expect(covered, `${ack.rule} at ${ack.path} covers no finding`).toBe(true);
    }
  });

  it('still reports what the construct did not acknowledge', () => {
    // Prepare: a finding in the same app proves the check is live
    const app = buildApp(path.join(outdir, 'live'));
    const stack = app.node.findChild('Full') as Stack;
    new sqs.Queue(stack, 'Naked');
    // Act
    const report = new AwsSolutionsChecks(app).validateScope(app);
    // Assess
    expect(report.violations.map((v) => v.ruleName)).toContain('AwsSolutions-SQS3');
  });

  it('fails the example app’s synth (infra/app.ts registers the pack) on an unacknowledged finding', () => {
    // Prepare: the app as infra/app.ts builds it, plus one finding
    const app = new App({ outdir: path.join(outdir, 'app'), context: { 'aws:cdk:bundling-stacks': [] } });
    const { stack } = buildExampleApp(app);
    addNagChecks(app);
    new sqs.Queue(stack, 'Naked');
    // Act + Assess
    expect(() => app.synth()).toThrow(/AwsSolutions-SQS3/);
  });
});
