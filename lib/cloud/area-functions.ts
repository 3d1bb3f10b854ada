import { Duration, Fn } from 'aws-cdk-lib';
import { FunctionUrlAuthType, HttpMethod as UrlHttpMethod, InvokeMode, type FunctionUrl, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS } from '../manifest/http.ts';
import type { Host, RouteSpec } from '../manifest/types.ts';
import type { PlatformData } from './data-stores.ts';
import { writeAreaEntry, writeFallbackEntry, writeStreamingEntry } from './function-entries.ts';
import type { OAuthFunctionSettings } from './oauth-providers.ts';
import { PlatformFunction, type HostUrlName, type PlatformEnvironment } from './platform-function.ts';

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

/** The manifest area whose routes run user MCP servers (functions/mcp): its functions get the MCP runtime. */
export const MCP_AREA = 'mcp';

/** The manifest area of the OAuth routes (functions/oauth): only its functions get the providers' settings and secrets. */
export const OAUTH_AREA = 'oauth';

/**
 * Timeout of a function serving `routes`: the slowest route plus the margin, within Lambda's 900 s
 * (a 900 s route then gets no margin: it ends with the function instead of the handler's 504).
 */
export function functionTimeoutSec(routes: readonly RouteSpec[]): number {
  return Math.min(Math.max(...routes.map((r) => r.timeoutSec)) + TIMEOUT_MARGIN_SEC, MAX_LAMBDA_TIMEOUT_SEC);
}

export interface PlatformFunctionsProps {
  /** Buffered routes grouped by area (`routesByArea`): one function per area, holding all of them. */
  readonly areas: ReadonlyMap<string, readonly RouteSpec[]>;
  /** Streaming routes grouped by host: one response-streaming function URL per host. @default none */
  readonly streamingHosts?: ReadonlyMap<Host, readonly RouteSpec[]>;
  /** The configuration every function reads. */
  readonly environment: PlatformEnvironment;
  /**
   * Tables, buckets, the secrets key and the run-token secret the area and streaming functions may
   * use: they all build the platform (functions/cloud.ts) and authenticate requests.
   */
  readonly data: PlatformData;
  /** The runtime function user code runs in; area and streaming functions may invoke it. @default none */
  readonly runtime?: IFunction;
  /**
   * The runtime function user MCP servers run in; only the functions serving routes of the
   * MCP_AREA may invoke it. @default none
   */
  readonly mcpRuntime?: IFunction;
  /**
   * The OAuth providers' settings and client secrets; only the functions serving routes of the
   * OAUTH_AREA receive them. @default no OAuth provider
   */
  readonly oauth?: OAuthFunctionSettings;
  /** Where the generated entry files are written. @default DEFAULT_ENTRIES_DIR */
  readonly entriesDir?: string;
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
 * function URL per host with streaming routes; and the fallback behind the API's catch-all routes.
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
  readonly fallback: PlatformFunction;

  constructor(scope: Construct, id: string, props: PlatformFunctionsProps) {
    super(scope, id);
    this.streams = new Map(
      [...(props.streamingHosts ?? new Map<Host, readonly RouteSpec[]>())].map(([host, routes]) => {
        const variable = STREAMING_HOST_URL_VARIABLES[host];
        if (variable === undefined) throw new Error(`The ${host} host cannot be a response-streaming function URL (streaming routes ${routes.map((r) => r.id).join(', ')}).`);
        const fn = new PlatformFunction(this, `Stream-${host}`, {
          entry: writeStreamingEntry(host, routes, props.entriesDir),
          description: `Platform ${host} host (response streaming): ${routes.length} route(s)`,
          timeout: Duration.seconds(functionTimeoutSec(routes)),
          environment: props.environment,
          runtime: props.runtime,
          mcpRuntime: routes.some((r) => r.area === MCP_AREA) ? props.mcpRuntime : undefined,
          runTokenSecret: props.data.runTokenSecret,
          oauth: routes.some((r) => r.area === OAUTH_AREA) ? props.oauth : undefined,
        });
        props.data.grantReadWrite(fn);
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
        const fn = new PlatformFunction(this, `Area-${area}`, {
          entry: writeAreaEntry(area, routes, props.entriesDir),
          description: `Platform area ${area}: ${routes.length} route(s)`,
          timeout: Duration.seconds(functionTimeoutSec(routes)),
          environment,
          runtime: props.runtime,
          mcpRuntime: area === MCP_AREA ? props.mcpRuntime : undefined,
          runTokenSecret: props.data.runTokenSecret,
          oauth: area === OAUTH_AREA ? props.oauth : undefined,
        });
        props.data.grantReadWrite(fn);
        return [area, fn];
      }),
    );
    this.fallback = new PlatformFunction(this, 'Fallback', {
      entry: writeFallbackEntry(props.entriesDir),
      description: 'Platform 404/405 for paths and methods no route has',
      // It answers from the route table alone: no platform, no stores, no run tokens, no grants.
      timeout: Duration.seconds(10),
      environment,
    });
  }
}
