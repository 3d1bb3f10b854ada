import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { dropBundlingLines } from '../lib/cloud/quiet-bundling.ts';
import { oauthProvidersFromContext } from '../lib/cloud/oauth-providers.ts';
import type { SearchEmbeddings } from '../lib/cloud/platform-function.ts';
import { PlatformStack } from '../lib/cloud/platform-stack.ts';
import { DEPLOY_OPTION_KEYS, resolveDeployOptions } from '../lib/cloud/deploy-options.ts';
import type { SiteDomain } from '../lib/cloud/site-distribution.ts';

/**
 * CDK app (cdk.json `app`). Context: `stage` (default `prod`), `stackName` (default
 * `agent-platform-<stage>`), `usageLogRetentionDays` (default 30: the functions'
 * USAGE_LOG_RETENTION_DAYS and the expiry of stored log bodies), `webAdapterLayerVersion` (the
 * runtime function's Lambda Web Adapter layer), `mcpRuntimeMemorySize` (MB of the MCP runtime
 * function, default 1024), `apiIntegrationTimeoutSec` (API Gateway's integration timeout ceiling,
 * default 29; raise the account quota first), `embeddingModel` (e.g. `amazon.titan-embed-text-v2:0`:
 * hybrid search with that Bedrock model; `embeddingDimensions` 256, 512 or 1024), `agentModelHosts` (the model endpoints agents may reach, as
 * AGENT_MODEL_HOSTS: comma separated, e.g. `*.amazonaws.com,api.openai.com,10.0.0.5:11434`),
 * `siteDomain` with `siteCertificateArn` (users' sites each at `https://{alias}.{siteDomain}`, an
 * origin of their own; the certificate in us-east-1 covers the domain and `*.` it) and `oauthProviders` (JSON: the OAuth providers' settings, each client
 * secret by the ARN of a Secrets Manager secret; see lib/cloud/oauth-providers.ts), e.g.
 * `npx cdk deploy -c stage=dev -c usageLogRetentionDays=90`. The
 * stack is environment-agnostic: synth needs no AWS account, and names that must be unique per
 * account and region use the deploy-time pseudo parameters. `quiet` (`-c quiet=true`, as
 * `npm run synth` passes) leaves out the per-asset bundling lines.
 */
const app = new App();
if (app.node.tryGetContext('quiet') === true || app.node.tryGetContext('quiet') === 'true') dropBundlingLines(process.stderr);
const stage = contextString(app, 'stage') ?? 'prod';
const stackName = contextString(app, 'stackName') ?? `agent-platform-${stage}`;
// Sign-up, voice, WAF, throttling, concurrency, access logs, removal, rotation, domain: docs/deploying.md.
const deploy = resolveDeployOptions(stage, Object.fromEntries(DEPLOY_OPTION_KEYS.map((key) => [key, app.node.tryGetContext(key) as unknown])));
// `npm run synth` and `npm run deploy` say what they are doing: construction and synth take minutes.
progress(`Synthesizing ${stackName} (preset ${deploy.preset}, voice ${deploy.voice ? 'on' : 'off'}, removal ${deploy.removalPolicy})...`);
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

new PlatformStack(app, stackName, {
  stackName,
  stage,
  version: pkg.version,
  description: `Agent platform (${stage})`,
  usageLogRetentionDays: contextInteger(app, 'usageLogRetentionDays'),
  webAdapterLayerVersion: contextInteger(app, 'webAdapterLayerVersion'),
  mcpRuntimeMemorySize: contextInteger(app, 'mcpRuntimeMemorySize'),
  apiIntegrationTimeoutSec: contextInteger(app, 'apiIntegrationTimeoutSec'),
  oauthProviders: oauthProvidersFromContext(app.node.tryGetContext('oauthProviders')),
  searchEmbeddings: searchEmbeddingsFromContext(app),
  agentModelHosts: contextHostList(app, 'agentModelHosts'),
  siteDomain: siteDomainFromContext(app),
  deploy,
});
progress('Constructed the stack; writing the templates and staging the assets (bundling each function)...');
process.once('beforeExit', () => progress(`Done: ${app.outdir}`));

/** A progress line on stderr with the seconds since the start (stdout may be a template). */
function progress(message: string): void {
  process.stderr.write(`[synth ${(performance.now() / 1000).toFixed(1)}s] ${message}\n`);
}

/** `siteDomain` (e.g. `sites.example.com`) and `siteCertificateArn` (us-east-1, for it and `*.` it): both or neither. */
function siteDomainFromContext(scope: App): SiteDomain | undefined {
  const name = contextString(scope, 'siteDomain');
  const certificateArn = contextString(scope, 'siteCertificateArn');
  if (name === undefined && certificateArn === undefined) return undefined;
  if (name === undefined || certificateArn === undefined)
    throw new Error('Context "siteDomain" and "siteCertificateArn" go together: the domain users\' sites live under and its certificate.');
  return { name: name.toLowerCase(), certificateArn };
}

/** A host list: `-c agentModelHosts=a,b` arrives as a string, cdk.json context may hold an array. */
function contextHostList(scope: App, key: string): string[] | undefined {
  const value: unknown = scope.node.tryGetContext(key);
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value) && value.every((entry) => typeof entry === 'string')) return value;
  if (typeof value === 'string') return value.split(',');
  throw new Error(`Context "${key}" must be a comma-separated string or a list of strings.`);
}

/** Hybrid search when `embeddingModel` names a Titan Text Embeddings V2 model; `embeddingDimensions` 256, 512 (default) or 1024. */
function searchEmbeddingsFromContext(scope: App): SearchEmbeddings | undefined {
  const modelId = contextString(scope, 'embeddingModel');
  const dimensions = contextInteger(scope, 'embeddingDimensions') ?? 512;
  if (modelId === undefined) return undefined;
  if (dimensions !== 256 && dimensions !== 512 && dimensions !== 1024) throw new Error('Context "embeddingDimensions" must be 256, 512 or 1024.');
  return { modelId, dimensions };
}

function contextString(scope: App, key: string): string | undefined {
  const value: unknown = scope.node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`Context "${key}" must be a string.`);
  return value;
}

/** `-c key=90` arrives as a string, cdk.json context as a number: both are accepted. */
function contextInteger(scope: App, key: string): number | undefined {
  const value: unknown = scope.node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  const parsed = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(parsed)) throw new Error(`Context "${key}" must be a whole number.`);
  return parsed;
}
