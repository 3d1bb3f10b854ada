import { Stack, type Duration } from 'aws-cdk-lib';
import { PolicyStatement, type IGrantable, type IPrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing, type IFunction, type ILayerVersion } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Construct } from 'constructs';
import type { Config } from '../../functions/core/config.ts';
import { REPO_ROOT } from './function-entries.ts';
import { functionBundleCode, isWorkerEntry, packagesOf } from './function-bundling.ts';
import type { OAuthFunctionSettings } from './oauth-providers.ts';

/** Configuration variables (functions/core/config.ts) every cloud function receives. */
export type PlatformEnvironmentName = ConfigKey<
  | 'STAGE'
  | 'TABLE_PREFIX'
  | 'BUCKET_PREFIX'
  | 'COGNITO_USER_POOL_ID'
  | 'COGNITO_CLIENT_ID'
  | 'KEYS_KMS_KEY_ID'
  | 'LOG_LEVEL'
  | 'PLATFORM_VERSION'
  | 'USAGE_LOG_RETENTION_DAYS'
>;

/**
 * Public host URLs (functions/core/config.ts). Set only where the stack knows them without a
 * dependency cycle (see PlatformFunctions); discovery derives the absent ones from the request.
 */
export type HostUrlName = ConfigKey<'STREAM_URL' | 'MCP_URL' | 'VOICE_URL' | 'CDN_URL' | 'SITE_URL' | 'CODE_URL'>;

/** Fails to compile when a name is not a variable of `Config`. */
type ConfigKey<K extends keyof Config> = K;

/** Deploy options every cloud function receives when the operator sets them (the config's default otherwise). */
export type OptionalSettingName = ConfigKey<'AGENT_MODEL_HOSTS' | 'SITE_ALIAS_ORIGINS'>;

/** Renaming a variable in `Config` breaks the build here instead of leaving a function misconfigured. */
export type PlatformEnvironment = { readonly [K in PlatformEnvironmentName]: string } & { readonly [K in HostUrlName | OptionalSettingName]?: string };

/** Name of the runtime Lambda (RuntimeFunction) the functions invoke to run user code. */
const RUNTIME_FUNCTION_NAME_VARIABLE: ConfigKey<'RUNTIME_FUNCTION_NAME'> = 'RUNTIME_FUNCTION_NAME';

/** Name of the MCP runtime Lambda (McpRuntimeFunction) that runs user MCP servers. */
const MCP_RUNTIME_FUNCTION_NAME_VARIABLE: ConfigKey<'MCP_RUNTIME_FUNCTION_NAME'> = 'MCP_RUNTIME_FUNCTION_NAME';

/** ARN of the Secrets Manager secret whose value keys the run tokens' HMAC. */
const RUN_TOKEN_SECRET_ARN_VARIABLE: ConfigKey<'RUN_TOKEN_SECRET_ARN'> = 'RUN_TOKEN_SECRET_ARN';

export interface PlatformFunctionProps {
  /** TypeScript entry file, bundled by esbuild on this machine (no Docker). */
  readonly entry: string;
  /** Exported handler of the entry. @default 'handler' */
  readonly handler?: string;
  /** Longest run Lambda allows before it stops the function. */
  readonly timeout: Duration;
  /** The platform configuration every function reads at start. */
  readonly environment: PlatformEnvironment;
  /** Memory in MB; CPU scales with it. @default 512 */
  readonly memorySize?: number;
  /** Shown in the Lambda console. */
  readonly description?: string;
  /**
   * The runtime function this one runs user code in: its name arrives as RUNTIME_FUNCTION_NAME and
   * the role may invoke it (both Invoke and InvokeWithResponseStream). @default no runtime access
   */
  readonly runtime?: IFunction;
  /**
   * The MCP runtime function this one runs user MCP servers in: its name arrives as
   * MCP_RUNTIME_FUNCTION_NAME and the role may invoke it. @default no MCP runtime access
   */
  readonly mcpRuntime?: IFunction;
  /**
   * The secret keying the run tokens' HMAC (functions/core/auth/run-token.ts): its ARN arrives as
   * RUN_TOKEN_SECRET_ARN and the role may read its value. Every function that builds the platform
   * (functions/cloud.ts) authenticates requests and needs it. @default no run tokens
   */
  readonly runTokenSecret?: ISecret;
  /**
   * The OAuth providers' settings (OAUTH_PROVIDER_*), for a function serving the oauth area: the
   * variables arrive in its environment and the role may read the client secrets by ARN. Secrets
   * the operator created, so there is no construct to grant on. @default no OAuth provider
   */
  readonly oauth?: OAuthFunctionSettings;
  /**
   * The search engine's embedding model, for a function whose areas use the `searchIndex` port:
   * the settings arrive as SEARCH_EMBEDDER, EMBEDDING_MODEL_ID and EMBEDDING_DIMENSIONS, and the role
   * may invoke that one foundation model. @default no embeddings: lexical search
   */
  readonly searchEmbeddings?: SearchEmbeddings;
  /**
   * Files the function's code reads at run time, relative to the repository root (`AreaModule.runtimeFiles`):
   * copied into the bundle at the same relative path, where the code finds them as it does locally. @default none
   */
  readonly runtimeFiles?: readonly string[];
  /** Layers the function's code loads packages from at run time (`PackageLayer`). @default none */
  readonly layers?: readonly PackageLayer[];
}

/**
 * A layer of Node packages and those of them a function's code requires at run time (with
 * `createRequire`) rather than bundling: Lambda puts the layer's `nodejs/node_modules` on NODE_PATH,
 * where Node's `require` finds them, and the packages stay out of the bundle, as the AWS SDK does.
 */
export interface PackageLayer {
  readonly layer: ILayerVersion;
  /** Package names (`@modelcontextprotocol/sdk`); their subpaths are left out of the bundle too. */
  readonly packages: readonly string[];
}

/** The embedding model of the search engine (Amazon Bedrock Titan Text Embeddings V2). */
export interface SearchEmbeddings {
  readonly modelId: string;
  readonly dimensions: 256 | 512 | 1024;
}

/** The createRequire shim lets CommonJS dependencies bundled into the ESM output call `require`. */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __platformCreateRequire } from 'node:module'; const require = __platformCreateRequire(import.meta.url);";

/**
 * A platform Lambda with the project's defaults: Node 22 on arm64, an ESM bundle built locally by
 * esbuild (minified, with source maps), the AWS SDK taken from the runtime, X-Ray tracing and a log
 * group kept for a month.
 */
export class PlatformFunction extends Construct implements IGrantable {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: PlatformFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH });
    this.function = new NodejsFunction(this, 'Function', {
      // The export of the bundle, index.mjs (BUNDLE_ENTRY_FILE).
      handler: `index.${props.handler ?? 'handler'}`,
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout,
      tracing: Tracing.ACTIVE,
      logGroup: this.logGroup,
      ...(props.layers === undefined || props.layers.length === 0 ? {} : { layers: props.layers.map((l) => l.layer) }),
      environment: {
        ...definedOnly(props.environment),
        ...(props.runtime === undefined ? {} : { [RUNTIME_FUNCTION_NAME_VARIABLE]: props.runtime.functionName }),
        ...(props.mcpRuntime === undefined ? {} : { [MCP_RUNTIME_FUNCTION_NAME_VARIABLE]: props.mcpRuntime.functionName }),
        ...(props.runTokenSecret === undefined ? {} : { [RUN_TOKEN_SECRET_ARN_VARIABLE]: props.runTokenSecret.secretArn }),
        ...definedOnly(props.oauth?.environment ?? {}),
        ...(props.searchEmbeddings === undefined
          ? {}
          : {
              SEARCH_EMBEDDER: 'bedrock',
              EMBEDDING_MODEL_ID: props.searchEmbeddings.modelId,
              EMBEDDING_DIMENSIONS: String(props.searchEmbeddings.dimensions),
            }),
        // Minified bundles give useless stack traces without the maps.
        NODE_OPTIONS: '--enable-source-maps',
      },
      // Built by esbuild in this process, as NodejsFunction would build it from `entry` (lib/cloud/function-bundling.ts).
      code: functionBundleCode({
        entry: props.entry,
        banner: ESM_REQUIRE_BANNER,
        // The Node 22 runtime ships SDK v3; bundling it would only add cold-start weight. A package
        // the function ships as runtime files, or takes from a layer, is loaded from there, not
        // bundled a second time.
        external: ['@aws-sdk/*', ...packagesOf(props.runtimeFiles ?? []), ...(props.layers ?? []).flatMap((l) => l.packages)],
        // Where the code that starts worker threads finds their bundles (functions/knowledge/text-reader.ts).
        define: (props.runtimeFiles ?? []).some(isWorkerEntry) ? { PLATFORM_WORKERS_URL: JSON.stringify('./workers/') } : {},
        runtimeFiles: props.runtimeFiles ?? [],
      }),
    });
    // lambda:InvokeFunction: it also authorizes InvokeWithResponseStream, which has no IAM action of
    // its own (Lambda API reference of InvokeWithResponseStream).
    props.runtime?.grantInvoke(this.function);
    props.mcpRuntime?.grantInvoke(this.function);
    // GetSecretValue and DescribeSecret on this secret (and Decrypt by its key, were it a customer key).
    props.runTokenSecret?.grantRead(this.function);
    // GetSecretValue alone, on exactly the client secrets' ARNs (complete ARNs: IAM matches them as
    // written). A secret under a customer managed KMS key would also need kms:Decrypt; the default
    // aws/secretsmanager key needs nothing more.
    const clientSecretArns = props.oauth?.clientSecretArns ?? [];
    if (clientSecretArns.length > 0)
      this.function.addToRolePolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [...clientSecretArns] }));
    if (props.searchEmbeddings !== undefined)
      this.function.addToRolePolicy(
        new PolicyStatement({
          actions: ['bedrock:InvokeModel'],
          resources: [
            Stack.of(this).formatArn({ service: 'bedrock', account: '', resource: 'foundation-model', resourceName: props.searchEmbeddings.modelId }),
          ],
        }),
      );
  }

  get grantPrincipal(): IPrincipal {
    return this.function.grantPrincipal;
  }
}

/**
 * aws-jwt-verify's ES module files, for every function that takes credentials and every service:
 * the kernel imports it on the first session token (functions/core/auth/cognito.ts) from beside
 * the bundle. Listed from the installed package, so an upgrade that adds a file ships it.
 */
export function identityVerifierFiles(): string[] {
  const root = 'node_modules/aws-jwt-verify';
  const modules = readdirSync(join(REPO_ROOT, root, 'dist/esm')).filter((file) => file.endsWith('.js') || file === 'package.json');
  return ['package.json', 'LICENSE', ...modules.map((file) => `dist/esm/${file}`)].map((file) => `${root}/${file}`);
}

function definedOnly(environment: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
