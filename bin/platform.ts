import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { PlatformStack } from '../lib/cloud/platform-stack.ts';

/**
 * CDK app (cdk.json `app`). Context: `stage` (default `prod`) and `stackName` (default
 * `agent-platform-<stage>`), e.g. `npx cdk deploy -c stage=dev`. The stack is environment-agnostic:
 * synth needs no AWS account, and names that must be unique per account and region use the
 * deploy-time pseudo parameters.
 */
const app = new App();
const stage = contextString(app, 'stage') ?? 'prod';
const stackName = contextString(app, 'stackName') ?? `agent-platform-${stage}`;
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

new PlatformStack(app, stackName, {
  stackName,
  stage,
  version: pkg.version,
  description: `Agent platform (${stage})`,
});

function contextString(scope: App, key: string): string | undefined {
  const value: unknown = scope.node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`Context "${key}" must be a string.`);
  return value;
}
