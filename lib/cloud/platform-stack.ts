import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { buckets, routes as manifestRoutes, routesByArea, tables } from '../manifest/index.ts';
import type { RouteSpec } from '../manifest/types.ts';
import { isRestApiRoute, PlatformApi } from './api.ts';
import { PlatformFunctions } from './area-functions.ts';
import { PlatformData } from './data-stores.ts';
import { PlatformIdentity } from './identity.ts';
import { bucketPrefixFor, tablePrefixFor, validateStackName, validateStage } from './naming.ts';

export interface PlatformStackProps extends StackProps {
  /** Deployment stage: the API stage name and the functions' STAGE. */
  readonly stage: string;
  /** Version reported by discovery (PLATFORM_VERSION), normally package.json's. */
  readonly version: string;
  /** Functions' LOG_LEVEL. @default 'info' */
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** Routes to serve; tests pass larger synthetic lists to check the stack limits. @default the manifest's */
  readonly routes?: readonly RouteSpec[];
  /** Where the generated function entries are written. @default DEFAULT_ENTRIES_DIR */
  readonly entriesDir?: string;
}

/**
 * The cloud platform, built from the manifest: tables and buckets, Cognito sign-in, one function
 * per area behind the REST API (its paths in nested stacks, see PlatformApi), and one output per
 * public host.
 */
export class PlatformStack extends Stack {
  readonly data: PlatformData;
  readonly identity: PlatformIdentity;
  readonly functions: PlatformFunctions;
  readonly api: PlatformApi;

  constructor(scope: Construct, id: string, props: PlatformStackProps) {
    super(scope, id, props);
    const stage = validateStage(props.stage);
    const stackName = validateStackName(this.stackName);
    const routes = props.routes ?? manifestRoutes;

    this.data = new PlatformData(this, 'Data', {
      tables,
      buckets,
      tablePrefix: tablePrefixFor(stackName),
      bucketPrefix: bucketPrefixFor(this),
    });
    this.identity = new PlatformIdentity(this, 'Identity', { userPoolName: `${stackName}-users` });

    this.functions = new PlatformFunctions(this, 'Functions', {
      // Every buffered route of an area is in its function, as `areaHandler` expects; the API
      // exposes those on its hosts (`isRestApiRoute`).
      areas: routesByArea(routes.filter((r) => r.mode === 'buffered')),
      data: this.data,
      entriesDir: props.entriesDir,
      environment: {
        STAGE: stage,
        TABLE_PREFIX: tablePrefixFor(stackName),
        BUCKET_PREFIX: bucketPrefixFor(this),
        COGNITO_USER_POOL_ID: this.identity.userPool.userPoolId,
        COGNITO_CLIENT_ID: this.identity.client.userPoolClientId,
        KEYS_KMS_KEY_ID: this.data.secretsKey.keyArn,
        LOG_LEVEL: props.logLevel ?? 'info',
        PLATFORM_VERSION: props.version,
      },
    });
    this.api = new PlatformApi(this, 'Api', {
      routes: routes.filter(isRestApiRoute),
      functions: new Map([...this.functions.areas].map(([area, fn]) => [area, fn.function])),
      fallback: this.functions.fallback.function,
      apiName: `${stackName}-api`,
      stageName: stage,
    });

    // Until stream, voice, cdn, sites and code get their own infrastructure they mirror the local
    // layout (lib/local/server.ts): path prefixes on the base URL, MCP on the base itself.
    const base = this.api.baseUrl;
    const hosts: Record<string, { value: string; description: string }> = {
      BaseUrl: { value: base, description: 'Base URL of the platform API (API Gateway stage)' },
      StreamUrl: { value: `${base}/stream`, description: 'Streaming chat host' },
      McpUrl: { value: base, description: 'MCP endpoint host' },
      VoiceUrl: { value: `${base.replace(/^https:/, 'wss:')}/voice`, description: 'Voice WebSocket host' },
      CdnUrl: { value: `${base}/cdn`, description: 'Widget and static asset host' },
      SiteUrl: { value: `${base}/sites`, description: 'Hosted websites' },
      CodeUrl: { value: `${base}/code`, description: 'Browser code servers' },
    };
    for (const [id, output] of Object.entries(hosts)) new CfnOutput(this, id, output);
    new CfnOutput(this, 'UserPoolId', { value: this.identity.userPool.userPoolId, description: 'Cognito user pool for sign-in' });
    new CfnOutput(this, 'UserPoolClientId', { value: this.identity.client.userPoolClientId, description: 'Cognito app client (no secret)' });
  }
}
