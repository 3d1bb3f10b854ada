import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { EndpointType, SecurityPolicy } from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { resolveDeployOptions, type DeployOptions } from './deploy-options.ts';
import { acknowledgeNagFindings } from './nag-acknowledgements.ts';
import { AccessLogBucket, ApiFirewall, applyRemovalPolicy, reserveConcurrency, RunTokenRotation } from './guardrails.ts';
import type { Construct } from 'constructs';
import { defineArea } from '../manifest/define.ts';
import { areas, checkAreas, routesByArea } from '../manifest/index.ts';
import { isRestApiRoute } from '../manifest/http.ts';
import type { AreaModule, Host, RouteSpec } from '../manifest/types.ts';
import { PlatformApi } from './api.ts';
import { functionTimeoutSec, PlatformFunctions } from './area-functions.ts';
import { TaskQueues } from './task-queues.ts';
import { RuntimeSchedules } from './runtime-schedules.ts';
import { resourcesOf } from '../manifest/ports.ts';
import { PlatformData } from './data-stores.ts';
import { PlatformIdentity } from './identity.ts';
import { McpRuntimeFunction } from './mcp-runtime-function.ts';
import { bucketPrefixFor, tablePrefixFor, validateStackName, validateStage } from './naming.ts';
import { oauthFunctionSettings, validateOAuthProviders, type OAuthProviders } from './oauth-providers.ts';
import type { SearchEmbeddings } from './platform-function.ts';
import { RuntimeFunction } from './runtime-function.ts';
import { AssetDistribution } from './asset-distribution.ts';
import { ConsoleDeployment } from './console-deployment.ts';
import type { SiteDomain } from './site-distribution.ts';
import { SERVICE_HOST_URL_VARIABLES, ServiceContainers } from './service-containers.ts';
import { servicesByHost, servicesOf } from '../manifest/services.ts';
import { INCOMING_PREFIX } from '../../functions/knowledge/knowledge-paths.ts';
import { hostListSetting } from '../../functions/core/config.ts';

/** The area the `voice` deploy option leaves out. */
const VOICE_AREA = 'voice';

/** Days usage-log records are kept unless the stack is told otherwise (the config's default too). */
export const DEFAULT_USAGE_LOG_RETENTION_DAYS = 30;

/**
 * Where functions/core/usage-log.ts puts bodies over 8 KB, in the `blobs` bucket
 * (`usage-logs/<userId>/<requestId>/...`); test/infra checks the writer still does.
 */
export const USAGE_LOG_BLOB_PREFIX = 'usage-logs/';

export interface PlatformStackProps extends StackProps {
  /** Deployment stage: the API stage name and the functions' STAGE. */
  readonly stage: string;
  /** Version reported by discovery (PLATFORM_VERSION), normally package.json's. */
  readonly version: string;
  /** Functions' LOG_LEVEL. @default 'info' */
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /**
   * Days usage-log records are kept: the functions' USAGE_LOG_RETENTION_DAYS, and the lifecycle of
   * the bodies in the blobs bucket (one day longer), from the same number so they cannot drift.
   * @default DEFAULT_USAGE_LOG_RETENTION_DAYS
   */
  readonly usageLogRetentionDays?: number;
  /** Version of the Lambda Web Adapter layer of the runtime function. @default DEFAULT_WEB_ADAPTER_LAYER_VERSION */
  readonly webAdapterLayerVersion?: number;
  /** Memory of the MCP runtime function, in MB (128 to 10240). @default McpRuntimeFunction's, 1024 */
  readonly mcpRuntimeMemorySize?: number;
  /** API Gateway's integration timeout ceiling in seconds; above 29 needs a quota increase. @default 29 */
  readonly apiIntegrationTimeoutSec?: number;
  /**
   * OAuth providers (the `oauthProviders` context option): the functions serving the oauth area get
   * their settings and may read their client secrets, which the operator keeps in Secrets Manager.
   * Checked at synth (`validateOAuthProviders`). @default none: every provider answers 400 not configured
   */
  readonly oauthProviders?: OAuthProviders;
  /**
   * The search engine's embedding model (the `embeddingModel` and `embeddingDimensions` context
   * options): functions using search may invoke it, and search is hybrid. @default none: lexical search
   */
  readonly searchEmbeddings?: SearchEmbeddings;
  /**
   * The model endpoints agents and voice agents may reach (the `agentModelHosts` context option):
   * every function's AGENT_MODEL_HOSTS, checked at synth as the functions check it at start.
   * @default the config's: Bedrock and the public OpenAI, Anthropic and Google APIs
   */
  readonly agentModelHosts?: readonly string[];
  /**
   * The name users' sites live under (the `siteDomain` and `siteCertificateArn` deploy options):
   * each site at `https://{alias}.{name}`, an origin of its own, and the path form on any other name
   * redirecting there. @default none: sites are paths of the site distribution's `*.cloudfront.net`
   * name, one origin shared by every site (docs/ARCHITECTURE.md, Websites)
   */
  readonly siteDomain?: SiteDomain;
  /**
   * Routes to serve; tests pass synthetic lists to check the stack limits. A route of an area with
   * no module is served with the kernel's grants only. @default the manifest's
   */
  readonly routes?: readonly RouteSpec[];
  /** The area modules: their tables, buckets, ports and schedules, and their routes unless `routes` is given. @default the manifest's */
  readonly areas?: readonly AreaModule[];
  /** Where the generated function entries are written. @default DEFAULT_ENTRIES_DIR */
  readonly entriesDir?: string;
  /**
   * Sign-up, voice, WAF, throttling, reserved concurrency, access logs, removal, rotation and a
   * custom domain (lib/cloud/deploy-options.ts; the `-c` context options of bin/platform.ts).
   * @default the preset of the stage: `dev` for the stage named dev, else `prod`
   */
  readonly deploy?: DeployOptions;
}

/**
 * The cloud platform, built from the manifest: tables and buckets, Cognito sign-in, one function
 * per area behind the REST API (its paths in nested stacks, see PlatformApi), one response-streaming
 * function URL per host with streaming routes, the runtime functions for user code (Python agents
 * and actions; Node MCP servers), the run-token secret, and one output per public host.
 */
export class PlatformStack extends Stack {
  readonly data: PlatformData;
  readonly identity: PlatformIdentity;
  readonly functions: PlatformFunctions;
  readonly runtime: RuntimeFunction;
  readonly mcpRuntime: McpRuntimeFunction;
  readonly api: PlatformApi;
  /** The SQS queue and dead-letter queue of every queue entry point. */
  readonly taskQueues: TaskQueues;
  /** The group and delivery role of run-time schedules, when an area manages them. */
  readonly schedules: RuntimeSchedules | undefined;
  /** The bucket and distribution of each host of browser assets (the CDN host: the embed widget). */
  readonly assetDistributions: ReadonlyMap<Host, AssetDistribution>;
  /** The web console on the CDN host; absent when no area publishes on that host. */
  readonly console: ConsoleDeployment | undefined;
  /** The containers of the areas' services (the voice bridge); none, and no VPC, when no area declares one or voice is off. */
  readonly services: ServiceContainers | undefined;
  /** The options the stack was built with (its preset's, overlaid by the context's). */
  readonly options: DeployOptions;
  /** The WAF web ACL of the API stage, when the `waf` option is on. */
  readonly firewall: ApiFirewall | undefined;
  /** The bucket of every access log, when the `accessLogs` option is on. */
  readonly accessLogs: AccessLogBucket | undefined;
  /** The run-token secret's rotation, when `runTokenRotationDays` is above 0. */
  readonly runTokenRotation: RunTokenRotation | undefined;

  constructor(scope: Construct, id: string, props: PlatformStackProps) {
    super(scope, id, props);
    const stage = validateStage(props.stage);
    const stackName = validateStackName(this.stackName);
    const options = (this.options = props.deploy ?? resolveDeployOptions(stage));
    const removalPolicy = options.removalPolicy === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN;
    // Voice off: the area (its service, table and the VPC, load balancer and distribution it brings) is left out.
    const modules = (props.areas ?? areas).filter((area) => options.voice || area.name !== VOICE_AREA);
    checkAreas(modules);
    const routes = props.routes ?? modules.flatMap((area) => area.routes);
    const domain =
      options.domainName === undefined
        ? undefined
        : { name: options.domainName, certificateArn: options.certificateArn!, regionalCertificateArn: options.regionalCertificateArn! };
    const retentionDays = validateRetentionDays(props.usageLogRetentionDays ?? DEFAULT_USAGE_LOG_RETENTION_DAYS);
    const oauth = oauthFunctionSettings(validateOAuthProviders(props.oauthProviders ?? {}));

    this.data = new PlatformData(this, 'Data', {
      tables: modules.flatMap((area) => area.tables),
      buckets: modules.flatMap((area) => area.buckets),
      tablePrefix: tablePrefixFor(stackName),
      bucketPrefix: bucketPrefixFor(this),
      // A day past the records: a record read just before its TTL still finds its body.
      expirations: [
        { bucket: 'blobs', prefix: USAGE_LOG_BLOB_PREFIX, afterDays: retentionDays + 1 },
        // A presigned upload whose storage event gave up stays under incoming/, counted in no quota;
        // a day is far past S3's last retry.
        ...(['knowledge', 'websites'] as const)
          .filter((bucket) => modules.some((area) => area.buckets.some((b) => b.name === bucket)))
          .map((bucket) => ({ bucket, prefix: INCOMING_PREFIX, afterDays: 1 })),
      ],
      removalPolicy,
    });
    this.identity = new PlatformIdentity(this, 'Identity', { userPoolName: `${stackName}-users`, selfSignUp: options.selfSignUp, removalPolicy });
    this.runtime = new RuntimeFunction(this, 'Runtime', { webAdapterLayerVersion: props.webAdapterLayerVersion });
    this.mcpRuntime = new McpRuntimeFunction(this, 'McpRuntime', { memorySize: props.mcpRuntimeMemorySize });

    const environment = {
      STAGE: stage,
      TABLE_PREFIX: tablePrefixFor(stackName),
      BUCKET_PREFIX: bucketPrefixFor(this),
      COGNITO_USER_POOL_ID: this.identity.userPool.userPoolId,
      COGNITO_CLIENT_ID: this.identity.client.userPoolClientId,
      KEYS_KMS_KEY_ID: this.data.secretsKey.keyArn,
      LOG_LEVEL: props.logLevel ?? 'info',
      PLATFORM_VERSION: props.version,
      USAGE_LOG_RETENTION_DAYS: String(retentionDays),
      ...(props.agentModelHosts === undefined ? {} : { AGENT_MODEL_HOSTS: validateAgentModelHosts(props.agentModelHosts) }),
      ...(props.siteDomain === undefined ? {} : { SITE_ALIAS_ORIGINS: 'true' }),
    };
    // Before the services and functions: both send tasks to them.
    this.taskQueues = new TaskQueues(this, 'TaskQueues', { modules, consumerTimeoutSec: functionTimeoutSec });
    // Only when an area manages run-time schedules (cron jobs): the group and the delivery role.
    const scheduleAreas = new Set(modules.filter((area) => resourcesOf([area], [], modules).scheduleAreas.size > 0).map((area) => area.name));
    this.schedules = scheduleAreas.size === 0 ? undefined : new RuntimeSchedules(this, 'Schedules', { taskQueues: this.taskQueues, areas: scheduleAreas });
    servicesByHost(modules, routes);
    const services = servicesOf(modules);
    this.services =
      services.length === 0
        ? undefined
        : new ServiceContainers(this, 'Services', {
            services,
            modules,
            taskQueues: this.taskQueues,
            environment,
            data: this.data,
            runtime: this.runtime.function,
            mcpRuntime: this.mcpRuntime.function,
            oauth,
            entriesDir: props.entriesDir,
            ...(domain === undefined ? {} : { domain }),
          });

    // Hosts of browser assets (the CDN host's widget): a bucket behind CloudFront each.
    const assetHosts = [...new Set(modules.flatMap((area) => area.assets.map((asset) => asset.host)))];
    this.assetDistributions = new Map(
      assetHosts.map((host) => [
        host,
        new AssetDistribution(this, `Assets-${host}`, {
          host,
          assets: modules.flatMap((area) => area.assets.filter((asset) => asset.host === host)),
          ...(domain === undefined ? {} : { domain: { name: `${host}.${domain.name}`, certificateArn: domain.certificateArn } }),
        }),
      ]),
    );
    const assetHostUrls = Object.fromEntries(
      [...this.assetDistributions].flatMap(([host, assets]) => (host === 'base' || host === 'mcp' ? [] : [[SERVICE_HOST_URL_VARIABLES[host], assets.url]])),
    );

    this.functions = new PlatformFunctions(this, 'Functions', {
      // Every buffered route of an area is in its function, as `areaHandler` expects; the API
      // exposes those on its hosts (`isRestApiRoute`).
      areas: routesByArea(routes.filter((r) => r.mode === 'buffered')),
      // Every streaming route of a host is in its function, as `streamingHandler` expects.
      streamingHosts: routesByHost(routes.filter((r) => r.mode === 'streaming')),
      data: this.data,
      runtime: this.runtime.function,
      mcpRuntime: this.mcpRuntime.function,
      // The platform's MCP server loads the SDK from the same layer user servers do (functions/platform-tools).
      mcpModules: this.mcpRuntime.layer,
      oauth,
      searchEmbeddings: props.searchEmbeddings,
      entriesDir: props.entriesDir,
      ...(props.siteDomain === undefined ? {} : { siteDomain: props.siteDomain }),
      modules: modulesFor(modules, routes),
      taskQueues: this.taskQueues,
      ...(this.schedules ? { schedules: this.schedules } : {}),
      // A service's host URL (VOICE_URL) for every function: discovery reports it, and nothing
      // there depends back on the functions.
      environment: { ...environment, ...this.services?.hostUrls, ...assetHostUrls },
    });
    this.api = new PlatformApi(this, 'Api', {
      routes: routes.filter(isRestApiRoute),
      functions: new Map([...this.functions.areas].map(([area, fn]) => [area, fn.function])),
      fallback: this.functions.fallback.function,
      apiName: `${stackName}-api`,
      stageName: stage,
      ...(props.apiIntegrationTimeoutSec !== undefined ? { maxIntegrationTimeoutSec: props.apiIntegrationTimeoutSec } : {}),
      throttle: { rateLimit: options.apiRateLimit, burstLimit: options.apiBurstLimit },
      ...(options.accessLogs
        ? { accessLogRetentionDays: options.accessLogRetentionDays, cloudWatchRole: options.apiGatewayCloudWatchRole, removalPolicy }
        : {}),
    });
    this.firewall = options.waf
      ? new ApiFirewall(this, 'Firewall', { stage: this.api.restApi.deploymentStage, ratePerFiveMinutes: options.wafRateLimit, name: `${stackName}-api` })
      : undefined;
    this.applyConcurrency(options);
    this.runTokenRotation =
      options.runTokenRotationDays > 0
        ? new RunTokenRotation(this, 'RunTokenRotation', { secret: this.data.runTokenSecret, days: options.runTokenRotationDays, removalPolicy })
        : undefined;
    const apiDomain =
      domain === undefined
        ? undefined
        : this.api.restApi.addDomainName('Domain', {
            domainName: `api.${domain.name}`,
            certificate: Certificate.fromCertificateArn(this, 'ApiCertificate', domain.regionalCertificateArn),
            endpointType: EndpointType.REGIONAL,
            securityPolicy: SecurityPolicy.TLS_1_2,
          });

    // A host with streaming routes is its function URL, a host with a service its distribution.
    // Until the other hosts get their own infrastructure they mirror the local layout
    // (lib/local/server.ts): path prefixes on the base URL, MCP on the base itself.
    const base = apiDomain === undefined ? this.api.baseUrl : `https://api.${domain!.name}`;
    const hostUrl = (host: Host, otherwise: string) =>
      this.functions.streams.get(host)?.baseUrl ?? this.services?.hosts.get(host)?.url ?? this.assetDistributions.get(host)?.url ?? otherwise;
    const hosts: Record<string, { value: string; description: string }> = {
      BaseUrl: { value: base, description: 'Base URL of the platform API (API Gateway stage)' },
      StreamUrl: { value: hostUrl('stream', `${base}/stream`), description: 'Streaming chat host' },
      McpUrl: { value: base, description: 'MCP endpoint host' },
      VoiceUrl: { value: hostUrl('voice', `${base.replace(/^https:/, 'wss:')}/voice`), description: 'Voice WebSocket host' },
      CdnUrl: { value: hostUrl('cdn', `${base}/cdn`), description: 'Widget and static asset host' },
      SiteUrl: { value: hostUrl('site', `${base}/sites`), description: 'Hosted websites' },
      CodeUrl: { value: hostUrl('code', `${base}/code`), description: 'Browser code servers' },
    };
    for (const [id, output] of Object.entries(hosts)) new CfnOutput(this, id, output);
    // The web console, on the CDN host (its bucket and distribution), calling the API with the user's sign-in.
    const cdn = this.assetDistributions.get('cdn');
    this.console =
      cdn === undefined
        ? undefined
        : new ConsoleDeployment(this, 'Console', { assets: cdn, apiUrl: base, userPoolClientId: this.identity.client.userPoolClientId });
    if (this.console !== undefined)
      new CfnOutput(this, 'ConsoleUrl', { value: this.console.url, description: 'The web console (sign in with your user pool account)' });
    const site = this.functions.siteDistribution;
    if (props.siteDomain !== undefined && site !== undefined)
      new CfnOutput(this, 'SiteDnsTarget', {
        value: site.distribution.distributionDomainName,
        description: `Point ${props.siteDomain.name} and *.${props.siteDomain.name} here (CNAME, or an alias record)`,
      });
    new CfnOutput(this, 'UserPoolId', { value: this.identity.userPool.userPoolId, description: 'Cognito user pool for sign-in' });
    new CfnOutput(this, 'UserPoolClientId', { value: this.identity.client.userPoolClientId, description: 'Cognito app client (no secret)' });
    // What `agent-platform cloud promote` reads to make an operator (bin/cli/commands/cloud.ts).
    new CfnOutput(this, 'TablePrefix', { value: tablePrefixFor(stackName), description: 'Prefix of the DynamoDB table names' });
    if (apiDomain !== undefined)
      new CfnOutput(this, 'ApiDnsTarget', {
        value: apiDomain.domainNameAliasDomainName,
        description: `Point api.${domain!.name} here (CNAME, or an alias record)`,
      });
    for (const [host, served] of this.services?.hosts ?? []) {
      if (served.originName === undefined) continue;
      new CfnOutput(this, `${host[0]!.toUpperCase()}${host.slice(1)}DnsTargets`, {
        value: `${host}.${domain!.name} -> ${served.distribution.distributionDomainName}; ${served.originName} -> ${served.loadBalancer.loadBalancerDnsName}`,
        description: `CNAME records for the ${host} host and its load balancer's certificate name`,
      });
    }
    for (const [host, assets] of this.assetDistributions)
      if (domain !== undefined)
        new CfnOutput(this, `${host[0]!.toUpperCase()}${host.slice(1)}DnsTarget`, {
          value: assets.distribution.distributionDomainName,
          description: `Point ${host}.${domain.name} here (CNAME, or an alias record)`,
        });

    // Last: they act on every bucket, distribution and resource made above.
    this.accessLogs = options.accessLogs
      ? new AccessLogBucket(this, 'AccessLogs', { retentionDays: options.accessLogRetentionDays, removalPolicy })
      : undefined;
    this.accessLogs?.logEverythingIn(this);
    applyRemovalPolicy(this, options.removalPolicy);
    acknowledgeNagFindings(this);
  }

  /** Reserved concurrency: the user-code runtimes' (a ceiling that leaves the platform's functions their share) and each named area's. */
  private applyConcurrency(options: DeployOptions): void {
    reserveConcurrency(this.runtime.function, options.runtimeConcurrency);
    reserveConcurrency(this.mcpRuntime.function, options.mcpRuntimeConcurrency);
    for (const [area, executions] of Object.entries(options.areaConcurrency)) {
      const fn = this.functions.areas.get(area);
      if (fn === undefined)
        throw new Error(
          `Invalid deploy options: areaConcurrency names area "${area}", which has no function (areas: ${[...this.functions.areas.keys()].join(', ')}).`,
        );
      reserveConcurrency(fn.function, executions);
    }
  }
}

/** The manifest's area modules, and a bare one (no ports) for each area only synthetic routes name. */
function modulesFor(list: readonly AreaModule[], routes: readonly RouteSpec[]): Map<string, AreaModule> {
  const modules = new Map<string, AreaModule>(list.map((area) => [area.name, area]));
  for (const r of routes) if (!modules.has(r.area)) modules.set(r.area, defineArea({ name: r.area }));
  return modules;
}

function routesByHost(list: readonly RouteSpec[]): Map<Host, RouteSpec[]> {
  const byHost = new Map<Host, RouteSpec[]>();
  for (const r of list) byHost.set(r.host, [...(byHost.get(r.host) ?? []), r]);
  return byHost;
}

/** AGENT_MODEL_HOSTS as the functions will read it, refused at synth when they would refuse it at start. */
function validateAgentModelHosts(hosts: readonly string[]): string {
  const value = hosts.join(',');
  const parsed = hostListSetting.safeParse(value);
  if (!parsed.success) throw new Error(`Invalid agentModelHosts: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
  return parsed.data.join(',');
}

/** The same bounds as USAGE_LOG_RETENTION_DAYS in functions/core/config.ts, checked at synth. */
function validateRetentionDays(days: number): number {
  if (!Number.isInteger(days) || days < 1 || days > 3650) throw new Error(`Invalid usage-log retention ${days}: use a whole number of days from 1 to 3650.`);
  return days;
}
