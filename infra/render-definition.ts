/**
 * The maintenance state machine's definition as plain Amazon States Language, for tools that execute or
 * validate it (aws-local-stepfunctions, asl-validator):
 *
 * - `renderMaintenanceDefinition()` builds it from the same `buildMaintenanceDefinition` the construct
 *   uses, over placeholder function ARNs, in a throwaway app (fast: no bundling, no template).
 * - `renderStateMachineDefinition(stackOrTemplate)` reads it out of a stack or a synthesized template, replacing the
 *   deploy-time references (function ARNs, partition, region...) with placeholders.
 *
 * test/unit/infra/maintenance-definition.test.ts proves the two are the same definition.
 */
import { App, type Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import {
  buildMaintenanceDefinition,
  MAINTENANCE_TASKS,
  type MaintenanceDefinitionOptions,
  type MaintenanceTask,
  type MaintenanceTaskKey,
} from './maintenance-definition.js';

/** An Amazon States Language document. */
export interface AslDefinition {
  StartAt: string;
  States: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

const PLACEHOLDER = { partition: 'aws', region: 'us-east-1', account: '123456789012' } as const;

/** `arn:aws:lambda:us-east-1:123456789012:function:<name>`. */
export function placeholderFunctionArn(name: string): string {
  return `arn:${PLACEHOLDER.partition}:lambda:${PLACEHOLDER.region}:${PLACEHOLDER.account}:function:${name}`;
}

export interface RenderMaintenanceOptions extends MaintenanceDefinitionOptions {
  /**
   * The state machine's `TimeoutSeconds`, as the construct's `maintenance.executionTimeout` sets it.
   * @default - none
   */
  readonly executionTimeout?: Duration;
  /**
   * ARN each task invokes.
   * @default - `placeholderFunctionArn('floe-<handler>')`
   */
  readonly functionArn?: (task: MaintenanceTask) => string;
}

/**
 * The maintenance definition exactly as the construct builds it, over placeholder function ARNs.
 * Run it with aws-local-stepfunctions, overriding each task state (`MAINTENANCE_TASKS[i].state`) with the
 * handler export of the same entry (`MAINTENANCE_TASKS[i].handler`).
 */
export function renderMaintenanceDefinition(options: RenderMaintenanceOptions = {}): AslDefinition {
  const stack = new Stack(new App(), 'RenderMaintenance', {
    env: { account: PLACEHOLDER.account, region: PLACEHOLDER.region },
  });
  const arnOf =
    options.functionArn ?? ((task: MaintenanceTask) => placeholderFunctionArn(`floe-${task.handler}`));
  const functions = Object.fromEntries(
    MAINTENANCE_TASKS.map((task) => [
      task.key,
      lambda.Function.fromFunctionAttributes(stack, `${task.state}Function`, {
        functionArn: arnOf(task),
        sameEnvironment: true,
      }),
    ]),
  ) as Record<MaintenanceTaskKey, lambda.IFunction>;
  const machine = new sfn.StateMachine(stack, 'StateMachine', {
    definitionBody: sfn.DefinitionBody.fromChainable(buildMaintenanceDefinition(stack, functions, options)),
    ...(options.executionTimeout ? { timeout: options.executionTimeout } : {}),
  });
  const definition: unknown = stack.resolve(
    (machine.node.defaultChild as sfn.CfnStateMachine).definitionString,
  );
  if (typeof definition !== 'string')
    throw new Error('the maintenance definition still holds deploy-time references');
  return JSON.parse(definition) as AslDefinition;
}

/** Renders a CloudFormation value with deploy-time references replaced by placeholders. */
function renderValue(value: unknown, reference: (logicalId: string, attribute?: string) => string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    const obj = value as Record<string, unknown>;
    const join = obj['Fn::Join'];
    if (Array.isArray(join)) {
      return (join[1] as unknown[]).map((part) => renderValue(part, reference)).join(String(join[0]));
    }
    const getAtt = obj['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return reference(String(getAtt[0]), String(getAtt[1]));
    if (typeof obj.Ref === 'string') return reference(obj.Ref);
  }
  throw new Error(`cannot render ${JSON.stringify(value)} in a state machine definition`);
}

/** Placeholders for the pseudo parameters a definition may reference. */
const PSEUDO: Record<string, string> = {
  'AWS::Partition': PLACEHOLDER.partition,
  'AWS::Region': PLACEHOLDER.region,
  'AWS::AccountId': PLACEHOLDER.account,
  'AWS::URLSuffix': 'amazonaws.com',
};

/**
 * The definition of the (only, or the named) state machine in a stack or a synthesized template. A
 * function's `Fn::GetAtt [id, Arn]` becomes `placeholderFunctionArn(id)`; other references become `<id>`.
 * @throws Error when the template has no such state machine, or several and no `logicalId`
 */
export function renderStateMachineDefinition(
  stackOrTemplate: Stack | object,
  logicalId?: string,
): AslDefinition {
  const template = Stack.isStack(stackOrTemplate)
    ? Template.fromStack(stackOrTemplate).toJSON()
    : stackOrTemplate;
  const resources = ((
    template as { Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }> }
  ).Resources ?? {}) as Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  const machines = Object.entries(resources).filter(
    ([id, r]) =>
      r.Type === 'AWS::StepFunctions::StateMachine' && (logicalId === undefined || id === logicalId),
  );
  if (machines.length !== 1) {
    throw new Error(
      `expected one state machine${logicalId ? ` '${logicalId}'` : ''}, found ${machines.length}`,
    );
  }
  const props = machines[0][1].Properties ?? {};
  const substitutions = (props.DefinitionSubstitutions ?? {}) as Record<string, unknown>;
  const reference = (id: string, attribute?: string): string => {
    if (PSEUDO[id]) return PSEUDO[id];
    if (attribute === 'Arn' && resources[id]?.Type === 'AWS::Lambda::Function')
      return placeholderFunctionArn(id);
    return attribute ? `<${id}.${attribute}>` : `<${id}>`;
  };
  let text = renderValue(props.DefinitionString, reference);
  for (const [key, value] of Object.entries(substitutions)) {
    text = text.replaceAll(`\${${key}}`, renderValue(value, reference));
  }
  return JSON.parse(text) as AslDefinition;
}
