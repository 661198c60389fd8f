/**
 * A stack synthesized with real bundling into a temporary `cdk.out`, read the way a deployment reads it:
 * each `AWS::Lambda::Function`'s asset folder (the bundle `cdk synth` wrote), handler, memory, timeout and
 * environment, and the state machine's definition. Synthesizing bundles every function (esbuild), so a
 * test file does it once, in `beforeAll`.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { App, type Stack } from 'aws-cdk-lib';
import { type AslDefinition, renderStateMachineDefinition } from '../../infra/render-definition.js';
import type { FunctionSpec } from './ric-process.js';

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
}

/** Resolves a template reference (`Ref`, `Fn::GetAtt`) to the value the test's own resources have. */
export type ReferenceResolver = (logicalId: string, attribute?: string) => string;

export interface SynthesizedStack {
  outdir: string;
  template: { Resources: Record<string, Resource> };
  /** Logical ids of the stack's Lambda functions, by handler (`index.handler`, `index.planHandler`...). */
  functionIds: Record<string, string[]>;
  /** Logical ids of resources of one CloudFormation type. */
  idsOfType(type: string): string[];
  /** The function as the template describes it, its environment resolved through `resolve`. */
  functionSpec(logicalId: string, resolve: ReferenceResolver): FunctionSpec;
  /** The (only) state machine's definition; a Task's Resource names its function by logical id. */
  stateMachine(): AslDefinition;
  cleanup(): Promise<void>;
}

/** Synthesizes `build(app)`'s stack with bundling into a fresh temporary directory. */
export async function synthesizeStack(build: (app: App) => Stack): Promise<SynthesizedStack> {
  const outdir = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-cdk-out-'));
  const app = new App({ outdir });
  const stack = build(app);
  const template = app.synth().getStackByName(stack.stackName).template as SynthesizedStack['template'];
  const resources = template.Resources;
  const idsOfType = (type: string) => Object.keys(resources).filter((id) => resources[id]!.Type === type);
  const functionIds: Record<string, string[]> = {};
  for (const id of idsOfType('AWS::Lambda::Function')) {
    const handler = String(resources[id]!.Properties?.Handler);
    functionIds[handler] = [...(functionIds[handler] ?? []), id];
  }
  return {
    outdir,
    template,
    functionIds,
    idsOfType,
    functionSpec(logicalId, resolve) {
      const props = resources[logicalId]?.Properties;
      if (!props) throw new Error(`no resource ${logicalId} in the template`);
      const code = props.Code as { S3Key?: string };
      const variables = ((props.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables ?? {}) as Record<string, unknown>;
      return {
        name: logicalId,
        assetDir: path.join(outdir, `asset.${String(code.S3Key).replace(/\.zip$/, '')}`),
        handler: String(props.Handler),
        memorySize: Number(props.MemorySize ?? 128),
        timeoutSeconds: Number(props.Timeout ?? 3),
        environment: Object.fromEntries(
          Object.entries(variables).map(([k, v]) => [k, resolveValue(v, resolve)]),
        ),
      };
    },
    stateMachine: () => renderStateMachineDefinition(template),
    cleanup: () => fs.rm(outdir, { recursive: true, force: true }),
  };
}

function resolveValue(value: unknown, resolve: ReferenceResolver): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    const obj = value as Record<string, unknown>;
    const join = obj['Fn::Join'];
    if (Array.isArray(join))
      return (join[1] as unknown[]).map((p) => resolveValue(p, resolve)).join(String(join[0]));
    const getAtt = obj['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return resolve(String(getAtt[0]), String(getAtt[1]));
    if (typeof obj.Ref === 'string') return resolve(obj.Ref);
  }
  throw new Error(`cannot resolve ${JSON.stringify(value)} in a function's environment`);
}
