/** cdk-nag's AwsSolutions and Serverless packs over a construct tree, for cdk-nag.test.ts and deploy-options.test.ts. */
import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/** Every finding of both packs over `scope` that no acknowledgement covers, as `rule at path`. */
export function unacknowledgedFindings(scope: IConstruct): string[] {
  return [new AwsSolutionsChecks(scope), new ServerlessChecks(scope)].flatMap((pack) =>
    pack
      .validateScope(scope)
      .violations.flatMap((v) => v.violatingResources.map((r) => `${v.severity ?? ''} ${v.ruleName} at ${r.locations[0] ?? r.resourceLogicalId}`)),
  );
}

/** Every acknowledgement under `scope`, with its reason. */
export function acknowledgements(scope: IConstruct): { id: string; reason: string; path: string }[] {
  return scope.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      // Validations.acknowledge records `{ [ruleId]: reason }`; CDK's own entries are `{ id, reason }`.
      .flatMap((m) => {
        const data = m.data as Record<string, string>;
        return typeof data['id'] === 'string' && typeof data['reason'] === 'string' ? [[data['id'], data['reason']] as const] : Object.entries(data);
      })
      // Ids are stored as `Annotation::<rule>`.
      .map(([id, reason]) => ({ id: id.replace(/^Annotation::/, ''), reason, path: c.node.path })),
  );
}
