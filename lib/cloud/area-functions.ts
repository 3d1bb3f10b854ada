import { Duration, Fn } from 'aws-cdk-lib';
import { FunctionUrlAuthType, HttpMethod as UrlHttpMethod, InvokeMode, type FunctionUrl, type IFunction, type ILayerVersion } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, isRestApiRoute } from '../manifest/http.ts';
import { EventType } from 'aws-cdk-lib/aws-s3';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { LambdaDestination } from 'aws-cdk-lib/aws-s3-notifications';
import { Schedule, ScheduleExpression, ScheduleTargetInput } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { parseScheduleExpression } from '../../functions/core/entry/schedule-expression.ts';
import { STORAGE_EVENT_ATTEMPTS, validateStorageEvents } from '../../functions/core/entry/storage-event.ts';
import { modulesOfFunction, resourcesOf, type FunctionResources } from '../manifest/ports.ts';
import { entryPointsOf } from '../manifest/routes.ts';
import type { AreaModule, Host, RouteSpec } from '../manifest/types.ts';
import type { PlatformData } from './data-stores.ts';
import type { Config } from '../../functions/core/config.ts';
import { AGENT_RUN_TIMEOUT_SEC } from '../../functions/agents/agent-runs.ts';
import {
  AGENT_RUNS_SERVER,
  writeAreaEntry,
  writeFallbackEntry,
  writeQueueEntry,
  writeScheduleEntry,
  writeStorageEventEntry,
  writeStreamingEntry,
} from './function-entries.ts';
import type { RuntimeSchedules } from './runtime-schedules.ts';
import { SiteDistribution, type SiteDomain } from './site-distribution.ts';
import type { TaskQueues } from './task-queues.ts';
import { CodeServerMachines } from './code-server-machines.ts'; // code server (engineer I, issue 36)
import type { OAuthFunctionSettings } from './oauth-providers.ts';
import {
  identityVerifierFiles,
  PlatformFunction,
  type HostUrlName,
  type PackageLayer,
  type PlatformEnvironment,
  type SearchEmbeddings,
} from './platform-function.ts';

/** Where a function granted the `agentRuns` port finds the agents function. */
const AGENT_RUNS_FUNCTION_NAME_VARIABLE: keyof Config = 'AGENT_RUNS_FUNCTION_NAME';

/** Seconds a function outlives its slowest route, so the handler's own timeout answers first. */
const TIMEOUT_MARGIN_SEC = 3;

/** Lambda's longest timeout. */
const MAX_LAMBDA_TIMEOUT_SEC = 900;

/**
 * Hosts a response-streaming function URL can serve, with the configuration variable naming its
 * URL. Not base and mcp (the REST API's hosts) nor voice (WebSockets, which function URLs lack).
 */
export const STREAMING_HOST_URL_VARIABLES: Readonly<Partial<Record<Host, HostUrlName>>> = {
  stream: 'STREAM_URL',
  cdn: 'CDN_URL',
  site: 'SITE_URL',
  code: 'CODE_URL',
};

/**
 * Hosts whose function URL is the origin of a CloudFront distribution, which is their public URL:
 * the site host, whose answers the edge caches (lib/cloud/site-distribution.ts).
 */
export const CDN_FRONTED_HOSTS: ReadonlySet<Host> = new Set(['site']);

/**
 * Timeout of a function serving `routes` (or entry points): the slowest one plus the margin, within Lambda's 900 s
 * (a 900 s route then gets no margin: it ends with the function instead of the handler's 504).
 */
export function functionTimeoutSec(routes: readonly { readonly timeoutSec: number }[]): number {
  return Math.min(Math.max(...routes.map((r) => r.timeoutSec)) + TIMEOUT_MARGIN_SEC, MAX_LAMBDA_TIMEOUT_SEC);
}

/**
 * Packages of the MCP runtime's modules layer that an area's code requires at run time, by area:
 * the platform's MCP server (functions/platform-tools/platform-mcp.service.ts) loads the SDK's server
 * classes, some 650 KB minified, over three times a function's bundle budget. The functions serving
 * such an area get the layer and leave the packages out of their bundles. The bundles keep the
 * list honest: test/infra/asset-budgets.test.ts checks that exactly the bundles requiring the SDK
 * have the layer.
 */
export const MCP_LAYER_PACKAGES_BY_AREA: ReadonlyMap<string, readonly string[]> = new Map([['platform-tools', ['@modelcontextprotocol/sdk']]]);

export interface PlatformFunctionsProps {
  /** Buffered routes grouped by area (`routesByArea`): one function per area, holding all of them. */
  readonly areas: ReadonlyMap<string, readonly RouteSpec[]>;
  /** Streaming routes grouped by host: one response-streaming function URL per host. @default none */
  readonly streamingHosts?: ReadonlyMap<Host, readonly RouteSpec[]>;
  /** The configuration every function reads. */
  readonly environment: PlatformEnvironment;
  /**
   * Tables, buckets, the secrets key and the run-token secret. Each function is granted only what
   * the areas it serves declare (`resourcesOf`: the kernel when a route authenticates, plus the
   * resources behind each declared port).
   */
  readonly data: PlatformData;
  /** The runtime function user code runs in; functions of areas using the `compute` port may invoke it. @default none */
  readonly runtime?: IFunction;
  /** The runtime function user MCP servers run in; functions of areas using the `mcpRuntime` port may invoke it. @default none */
  readonly mcpRuntime?: IFunction;
  /**
   * The MCP runtime's modules layer (the MCP SDK and zod, CommonJS); functions of the areas of
   * MCP_LAYER_PACKAGES_BY_AREA get it. @default none, and serving such an area fails the synth
   */
  readonly mcpModules?: ILayerVersion;
  /** The OAuth providers' settings and client secrets; functions of areas using the `secrets` port receive them. @default no OAuth provider */
  readonly oauth?: OAuthFunctionSettings;
  /** The search engine's embedding model; functions of areas using the `searchIndex` port may invoke it. @default none: lexical search */
  readonly searchEmbeddings?: SearchEmbeddings;
  /** Where the generated entry files are written. @default DEFAULT_ENTRIES_DIR */
  readonly entriesDir?: string;
  /** The name users' sites live under, one origin per site. @default none: sites are paths of the site distribution's own name */
  readonly siteDomain?: SiteDomain;
  /** The area modules, by name: what each function's areas declare. */
  readonly modules: ReadonlyMap<string, AreaModule>;
  /** The SQS queues of the modules' queue entry points: their consumers and the functions sending to them are made here. */
  readonly taskQueues: TaskQueues;
  /** The group and delivery role of run-time schedules; functions of areas using the `schedules` port manage them. @default none */
  readonly schedules?: RuntimeSchedules;
}

/** The function of one streaming host and its public URL. */
export interface StreamingHostFunction {
  readonly function: PlatformFunction;
  readonly url: FunctionUrl;
  /** `https://<id>.lambda-url.<region>.on.aws`, without the trailing slash, like the other host URLs. */
  readonly baseUrl: string;
  /** The configuration variable the other functions read the URL from (STREAM_URL, ...). */
  readonly variable: HostUrlName;
}

/**
 * One Lambda per manifest area, its bundle holding only that area's handlers; one response-streaming
 * function URL per host with streaming routes; per area with such entry points, one function for
 * its schedules, one consuming its queues (with an SQS queue and dead-letter queue per queue entry
 * point) and one for its storage events; and the fallback behind the API's catch-all routes.
 *
 * Host URLs: every area function and the fallback get the URL variable of each streaming host
 * (STREAM_URL, ...), so discovery reports the function URL. The streaming functions get none: a
 * function reading its own URL would depend on the URL resource, which depends on the function (a
 * cycle CloudFormation refuses), and two streaming functions reading each other's URL would form
 * one too. They serve no discovery, and discovery derives an absent variable from the request.
 */
export class PlatformFunctions extends Construct {
  /** The function of each area, keyed by area. */
  readonly areas: ReadonlyMap<string, PlatformFunction>;
  /** The function and URL of each host with streaming routes. */
  readonly streams: ReadonlyMap<Host, StreamingHostFunction>;
  /** The site host's distribution, when an area serves the site host. */
  siteDistribution: SiteDistribution | undefined;
  readonly fallback: PlatformFunction;
  /** The function running each area's schedules, keyed by area (only areas that have schedules). */
  readonly schedules: ReadonlyMap<string, PlatformFunction>;
  /** The SQS queues of every queue entry point (the stack's). */
  private readonly taskQueues: TaskQueues;
  /** Functions whose areas use the `agentRuns` port: granted to invoke the agents function once it exists. */
  private readonly agentRunCallers: PlatformFunction[] = [];
  /** The code servers' machines (engineer I, issue 36): made by the first function whose areas use the `machines` port. */
  private codeServerMachines: CodeServerMachines | undefined;
  /** The function consuming each area's queues, keyed by area (only areas that have queue entry points). */
  readonly queueConsumers: ReadonlyMap<string, PlatformFunction>;
  /** The function running each area's storage events, keyed by area (only areas that have storage events). */
  readonly storageEvents: ReadonlyMap<string, PlatformFunction>;
  /** Where each area's storage events go once Lambda's retries are spent (an SQS queue, the function's on-failure destination). */
  readonly storageEventFailures: ReadonlyMap<string, Queue>;

  constructor(scope: Construct, id: string, props: PlatformFunctionsProps) {
    super(scope, id);
    const modules = [...props.modules.values()];
    this.taskQueues = props.taskQueues;
    this.streams = new Map(
      [...(props.streamingHosts ?? new Map<Host, readonly RouteSpec[]>())].map(([host, routes]) => {
        const variable = STREAMING_HOST_URL_VARIABLES[host];
        if (variable === undefined)
          throw new Error(`The ${host} host cannot be a response-streaming function URL (streaming routes ${routes.map((r) => r.id).join(', ')}).`);
        const fn = this.areaFunction(`Stream-${host}`, props, routes, {
          entry: (modules) => writeStreamingEntry(host, routes, modules, props.entriesDir),
          description: `Platform ${host} host (response streaming): ${routes.length} route(s)`,
          environment: props.environment,
        });
        if (CDN_FRONTED_HOSTS.has(host)) {
          // Reachable only through its distribution: AWS_IAM, which CloudFront's origin access control signs for.
          const url = fn.function.addFunctionUrl({ authType: FunctionUrlAuthType.AWS_IAM, invokeMode: InvokeMode.RESPONSE_STREAM });
          this.siteDistribution = new SiteDistribution(this, `Distribution-${host}`, {
            functionUrl: url,
            ...(props.siteDomain === undefined ? {} : { domain: props.siteDomain }),
          });
          return [host, { function: fn, url, baseUrl: this.siteDistribution.url, variable }];
        }
        const url = fn.function.addFunctionUrl({
          // Public on purpose: the platform authenticates every request itself (tokens, secret keys,
          // Cognito ID tokens; routes/auth modes from the manifest), exactly as behind API Gateway,
          // where no authorizer is configured either. AWS_IAM would demand SigV4 from browsers.
          authType: FunctionUrlAuthType.NONE,
          invokeMode: InvokeMode.RESPONSE_STREAM,
          // Lambda answers the preflight itself. Methods: those the host's routes use (OPTIONS is
          // implied and longer than the 6 characters Lambda allows per method).
          cors: {
            allowedOrigins: ['*'],
            allowedMethods: [...new Set(routes.map((r) => UrlHttpMethod[r.method]))],
            allowedHeaders: [...CORS_ALLOWED_HEADERS],
            exposedHeaders: [...CORS_EXPOSED_HEADERS],
            maxAge: Duration.seconds(600),
          },
        });
        // The URL ends with '/'; host URLs (BASE_URL, STREAM_URL) do not.
        const baseUrl = `https://${Fn.select(2, Fn.split('/', url.url))}`;
        return [host, { function: fn, url, baseUrl, variable }];
      }),
    );

    const hostUrls: Partial<Record<HostUrlName, string>> = {};
    for (const stream of this.streams.values()) hostUrls[stream.variable] = stream.baseUrl;
    const environment: PlatformEnvironment = { ...props.environment, ...hostUrls };

    this.areas = new Map(
      [...props.areas].map(([area, routes]) => {
        const fn = this.areaFunction(`Area-${area}`, props, routes, {
          entry: (modules) => writeAreaEntry(area, routes, modules, props.entriesDir),
          description: `Platform area ${area}: ${routes.length} route(s)`,
          environment,
          // The function running agents for cron jobs and channels must outlive the longest run
          // (a direct Invoke has no route timeout of its own; the run stops itself at AGENT_RUN_TIMEOUT_SEC).
          ...(area === AGENT_RUNS_SERVER.area ? { timeoutSec: functionTimeoutSec([...routes, { timeoutSec: AGENT_RUN_TIMEOUT_SEC }]) } : {}),
        });
        return [area, fn];
      }),
    );
    // One function per area with schedules, invoked by one EventBridge Scheduler schedule per entry
    // point (the entry point's id in the input). No retries: the next firing is the retry, as locally.
    this.schedules = new Map(
      modules
        .filter((area) => entryPointsOf(area, 'schedule').length > 0)
        .map((area) => {
          const schedules = entryPointsOf(area, 'schedule').map((entry) => {
            parseScheduleExpression(entry.expression);
            return entry;
          });
          // Schedules authenticate no one: the area's ports without the kernel.
          const resources = resourcesOf([area], [], modules);
          const fn = new PlatformFunction(this, `Schedule-${area.name}`, {
            entry: writeScheduleEntry(area.name, schedules, modulesOfFunction([area], modules), props.entriesDir),
            description: `Platform area ${area.name}: ${schedules.length} schedule(s)`,
            timeout: Duration.seconds(functionTimeoutSec(schedules)),
            environment,
            runtimeFiles: area.runtimeFiles,
            layers: layersOf(props, [area.name]),
            ...this.portSettings(props, resources),
          });
          this.grant(props, fn, resources);
          for (const entry of schedules) {
            new Schedule(this, `Schedule-${entry.id.replace(/[^A-Za-z0-9]/g, '-')}`, {
              schedule: ScheduleExpression.expression(entry.expression),
              description: `${entry.id} (${entry.expression})`,
              target: new LambdaInvoke(fn.function, { input: ScheduleTargetInput.fromObject({ entryPoint: entry.id }), retryAttempts: 0 }),
            });
          }
          return [area.name, fn];
        }),
    );
    // One consumer per area with queue entry points, fed by an SQS event source per queue; SQS
    // redrives a task to its dead-letter queue after the entry point's maxAttempts receives.
    this.queueConsumers = new Map(
      modules
        .filter((area) => entryPointsOf(area, 'queue').length > 0)
        .map((area) => {
          const queues = entryPointsOf(area, 'queue');
          const resources = resourcesOf([area], [], modules);
          const fn = new PlatformFunction(this, `Queue-${area.name}`, {
            entry: writeQueueEntry(area.name, queues, modulesOfFunction([area], modules), props.entriesDir),
            description: `Platform area ${area.name}: ${queues.length} queue(s)`,
            timeout: Duration.seconds(functionTimeoutSec(queues)),
            environment,
            runtimeFiles: area.runtimeFiles,
            layers: layersOf(props, [area.name]),
            ...this.portSettings(props, resources),
          });
          this.grant(props, fn, resources);
          this.taskQueues.consume(fn, area.name);
          return [area.name, fn];
        }),
    );
    // One function per area with storage events, invoked by S3 (asynchronously) for objects created
    // under each one's prefix of its bucket.
    validateStorageEvents(
      modules.flatMap((area) => entryPointsOf(area, 'storageEvent')),
      modules.flatMap((area) => area.buckets),
    );
    const storageFailures = new Map<string, Queue>();
    this.storageEventFailures = storageFailures;
    this.storageEvents = new Map(
      modules
        .filter((area) => entryPointsOf(area, 'storageEvent').length > 0)
        .map((area) => {
          const entries = entryPointsOf(area, 'storageEvent');
          const resources = resourcesOf([area], [], modules);
          const fn = new PlatformFunction(this, `Storage-${area.name}`, {
            entry: writeStorageEventEntry(area.name, entries, modulesOfFunction([area], modules), props.entriesDir),
            description: `Platform area ${area.name}: ${entries.length} storage event(s)`,
            timeout: Duration.seconds(functionTimeoutSec(entries)),
            environment,
            // What the area's code reads at run time (the PDF engine of the knowledge indexer), as for its routes.
            runtimeFiles: area.runtimeFiles,
            layers: layersOf(props, [area.name]),
            ...this.portSettings(props, resources),
          });
          this.grant(props, fn, resources);
          // Lambda's default, stated so the count stays the one the local platform uses. An event
          // still failing after them is kept (the S3 event, the error) for 14 days to be replayed.
          const failures = new Queue(this, `StorageFailures-${area.name}`, {
            retentionPeriod: Duration.days(14),
            encryption: QueueEncryption.SQS_MANAGED,
            enforceSSL: true,
          });
          fn.function.configureAsyncInvoke({ retryAttempts: STORAGE_EVENT_ATTEMPTS - 1, onFailure: new SqsDestination(failures) });
          storageFailures.set(area.name, failures);
          for (const entry of entries) {
            const bucket = props.data.buckets.get(entry.bucket);
            if (bucket === undefined) throw new Error(`Storage event ${entry.id} watches bucket ${entry.bucket}, which the data stores do not have.`);
            const filters = entry.prefix === '' ? [] : [{ prefix: entry.prefix }];
            bucket.addEventNotification(EventType.OBJECT_CREATED, new LambdaDestination(fn.function), ...filters);
          }
          return [area.name, fn];
        }),
    );

    this.grantAgentRuns();

    this.fallback = new PlatformFunction(this, 'Fallback', {
      entry: writeFallbackEntry([...props.areas.values()].flat().filter(isRestApiRoute), props.entriesDir),
      description: 'Platform 404/405 for paths and methods no route has',
      // It answers from the route table alone: no platform, no stores, no run tokens, no grants.
      timeout: Duration.seconds(10),
      environment,
    });
  }

  /**
   * A function serving `routes`, granted what their areas declare and nothing else: the tables,
   * buckets and key from the data stores, the run-token secret when a route authenticates, each
   * runtime only for an area using its port, the OAuth settings only for one using `secrets`.
   */
  private areaFunction(
    id: string,
    props: PlatformFunctionsProps,
    routes: readonly RouteSpec[],
    own: { entry: (modules: readonly AreaModule[]) => string; description: string; environment: PlatformEnvironment; timeoutSec?: number },
  ): PlatformFunction {
    const served = [...new Set(routes.map((r) => r.area))].map((name) => {
      const area = props.modules.get(name);
      if (area === undefined) throw new Error(`Routes of area ${name} have no area module.`);
      return area;
    });
    const modules = [...props.modules.values()];
    const resources = resourcesOf(served, routes, modules);
    const fn = new PlatformFunction(this, id, {
      entry: own.entry(modulesOfFunction(served, modules)),
      description: own.description,
      environment: own.environment,
      timeout: Duration.seconds(own.timeoutSec ?? functionTimeoutSec(routes)),
      runtimeFiles: [...new Set([...served.flatMap((area) => area.runtimeFiles), ...(resources.authenticates ? identityVerifierFiles() : [])])],
      layers: layersOf(
        props,
        served.map((area) => area.name),
      ),
      ...this.portSettings(props, resources),
    });
    this.grant(props, fn, resources);
    // Only route functions created after the distribution: the site function is its origin, and
    // reading the distribution's id would make a cycle (nor does serving sites invalidate them).
    const site = this.siteDistribution;
    if (resources.siteCache && site !== undefined) {
      fn.function.addEnvironment('SITE_DISTRIBUTION_ID', site.distribution.distributionId);
      site.distribution.grantCreateInvalidation(fn.function);
    }
    return fn;
  }

  /** The tables, buckets and key of `resources`, and the queues of the areas whose `tasks` it includes. */
  private grant(props: PlatformFunctionsProps, fn: PlatformFunction, resources: FunctionResources): void {
    props.data.grant(fn, resources);
    for (const [name, value] of Object.entries(this.taskQueues.grantSend(fn, resources.queueAreas))) fn.function.addEnvironment(name, value);
    if (resources.scheduleAreas.size > 0 && props.schedules === undefined)
      throw new Error(`Areas ${[...resources.scheduleAreas].join(', ')} use the schedules port, but the stack made no RuntimeSchedules.`);
    for (const [name, value] of Object.entries(props.schedules?.grantManage(fn, resources.scheduleAreas) ?? {})) fn.function.addEnvironment(name, value);
    if (resources.agentRuns) this.agentRunCallers.push(fn);
    // --- code server (engineer I, issue 36): the `machines` port's VPC, instance profile and grants, made once when some function needs them ---
    if (resources.machines) (this.codeServerMachines ??= new CodeServerMachines(this, 'CodeServerMachines')).grant(fn.function);
    // --- end code server ---
  }

  /**
   * Lets each function whose areas use the `agentRuns` port invoke the agents function (RequestResponse,
   * lambda:InvokeFunction on it alone) and tells it the name. Nothing more: the callers reach no
   * chat route, credential or table of the agents area. A stack serving no agents routes (synthetic
   * route lists) has no such function; a run there fails at its first use, naming the variable.
   */
  private grantAgentRuns(): void {
    const server = this.areas.get(AGENT_RUNS_SERVER.area);
    if (server === undefined) return;
    for (const caller of this.agentRunCallers) {
      server.function.grantInvoke(caller.function);
      caller.function.addEnvironment(AGENT_RUNS_FUNCTION_NAME_VARIABLE, server.function.functionName);
    }
  }

  /** The runtimes, run-token secret and OAuth settings a function gets: those its resources include. */
  private portSettings(props: PlatformFunctionsProps, resources: FunctionResources) {
    return {
      runtime: resources.runtimes.has('python') ? props.runtime : undefined,
      mcpRuntime: resources.runtimes.has('mcp') ? props.mcpRuntime : undefined,
      runTokenSecret: resources.runTokenSecret ? props.data.runTokenSecret : undefined,
      oauth: resources.oauthClients ? props.oauth : undefined,
      searchEmbeddings: resources.embeddings ? props.searchEmbeddings : undefined,
    };
  }
}

/** The layers the code of `areas` loads packages from (MCP_LAYER_PACKAGES_BY_AREA), each once, with the packages any of them requires. */
function layersOf(props: Pick<PlatformFunctionsProps, 'mcpModules'>, areas: readonly string[]): PackageLayer[] {
  const packages = [...new Set(areas.flatMap((area) => MCP_LAYER_PACKAGES_BY_AREA.get(area) ?? []))];
  if (packages.length === 0) return [];
  if (props.mcpModules === undefined)
    throw new Error(
      `Areas ${areas.filter((area) => MCP_LAYER_PACKAGES_BY_AREA.has(area)).join(', ')} load ${packages.join(', ')} from the MCP modules layer, but none was given.`,
    );
  return [{ layer: props.mcpModules, packages }];
}
