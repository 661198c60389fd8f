/**
 * cdk-nag acknowledgements the construct makes itself, each with its reason, through CDK's own
 * `Validations.of(...).acknowledge` (cdk-nag v3 reads them; the construct does not depend on cdk-nag).
 *
 * An IAM wildcard finding is named after the resource as cdk-nag prints it (`<LogicalId.Arn>/table/*`),
 * so it is computed here the way cdk-nag flattens CloudFormation references: a finding that changes
 * shape is reported again instead of being silently covered.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** cdk-nag's rendering of a resolved CloudFormation value (`Fn::GetAtt` → `<Id.Attr>`, `Ref` → `<Id>`). */
function flattenReference(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (typeof node === 'object' && node !== null) {
    const obj = node as Record<string, unknown>;
    const join = obj['Fn::Join'];
    if (Array.isArray(join)) return (join[1] as unknown[]).map(flattenReference).join(String(join[0]));
    if (obj['Fn::Sub'] !== undefined) return flattenReference(obj['Fn::Sub']);
    const getAtt = obj['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return `<${flattenReference(getAtt[0])}.${flattenReference(getAtt[1])}>`;
    if (obj['Fn::ImportValue'] !== undefined) return flattenReference(obj['Fn::ImportValue']);
    if (obj.Ref !== undefined) return `<${flattenReference(obj.Ref)}>`;
  }
  return JSON.stringify(node);
}

/** Acknowledges one rule on `construct` and everything under it. */
export function acknowledgeRule(construct: IConstruct, id: string, reason: string): void {
  Validations.of(construct).acknowledge({ id, reason });
}

/**
 * Acknowledges AwsSolutions-IAM5 for one wildcard resource in the policies of `construct` (a role).
 * `resource` is the value as given to the policy statement (tokens allowed).
 */
export function acknowledgeWildcardResource(construct: IConstruct, resource: string, reason: string): void {
  const rendered = flattenReference(Stack.of(construct).resolve(resource));
  acknowledgeRule(construct, `AwsSolutions-IAM5[Resource::${rendered}]`, reason);
}

/** Why nodejs22.x and not the newest runtime (AwsSolutions-L1). */
export const RUNTIME_REASON =
  'floe targets nodejs22.x on purpose: its tests and tooling run on Node 22, the same major as the runtime';
