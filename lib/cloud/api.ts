import { Duration, NestedStack, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  AccessLogFormat,
  Cors,
  EndpointType,
  LogGroupLogDestination,
  LambdaIntegration,
  Method,
  Resource,
  ResponseType,
  RestApi,
  type CorsOptions,
  type IResource,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { CORS_ALLOWED_HEADERS } from '../manifest/http.ts';
import type { RouteSpec } from '../manifest/types.ts';

/** Same answer as the local server's preflight (lib/local/server.ts), so browsers see one platform. */
const CORS: CorsOptions = {
  allowOrigins: Cors.ALL_ORIGINS,
  allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
  allowHeaders: [...CORS_ALLOWED_HEADERS],
  maxAge: Duration.seconds(600),
};

/** First path segment: it alone decides which nested stack holds a route's resources and methods. */
export function topSegment(path: string): string {
  const segment = path.split('/').find((p) => p !== '');
  if (segment === undefined) throw new Error('The root path belongs to the fallback; a route needs at least one segment.');
  return segment;
}

/**
 * Rejects route lists API Gateway would refuse at deploy time, where a synth error is cheaper: the
 * same method twice on a path, two path parameter names under one parent, and a parameter at the
 * root, where the fallback's `/{proxy+}` lives.
 */
export function validateRestRoutes(routes: readonly RouteSpec[]): void {
  const seen = new Set<string>();
  const parametersUnder = new Map<string, Set<string>>();
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    if (seen.has(key)) throw new Error(`Two routes for ${key}.`);
    seen.add(key);
    const parts = route.path.split('/').filter((p) => p !== '');
    if (parts.length === 0) throw new Error(`Route ${route.id} is on the root path, which belongs to the fallback.`);
    parts.forEach((part, i) => {
      if (!part.startsWith('{')) return;
      const parent = '/' + parts.slice(0, i).join('/');
      if (i === 0) throw new Error(`Path parameter ${part} at the root would clash with the fallback /{proxy+}.`);
      const names = parametersUnder.get(parent) ?? new Set<string>();
      names.add(part);
      parametersUnder.set(parent, names);
      if (names.size > 1) throw new Error(`API Gateway allows one path parameter under ${parent}; the manifest has ${[...names].join(', ')}.`);
    });
  }
}

export interface PlatformApiProps {
  /** Every route the API serves (see `isRestApiRoute` in lib/manifest/http.ts). */
  readonly routes: readonly RouteSpec[];
  /** The function of each area: every method of the area's routes is a Lambda proxy to it. */
  readonly functions: ReadonlyMap<string, IFunction>;
  /** Behind `ANY /` and `ANY /{proxy+}`: the platform's 404 and 405. */
  readonly fallback: IFunction;
  /** Name of the REST API in the console. */
  readonly apiName: string;
  /** Stage name: the first path segment of every URL. */
  readonly stageName: string;
  /**
   * The longest API Gateway may wait for a function, in seconds. Each route waits its own
   * `timeoutSec` plus a small margin, up to this. Above 29 s needs the account's "integration
   * timeout" quota raised first; until then routes longer than this (router action runs at 120 s,
   * buffered chat at 300 s) are cut by API Gateway with a TIMEOUT error in the platform's shape.
   * @default 29
   */
  readonly maxIntegrationTimeoutSec?: number;
  /** Stage throttling for every method: steady requests per second and the burst above it. @default API Gateway's account-level default */
  readonly throttle?: { readonly rateLimit: number; readonly burstLimit: number };
  /** Days the stage's access log (one JSON line per request) is kept in CloudWatch Logs. @default no access log */
  readonly accessLogRetentionDays?: number;
  /** Creates API Gateway's account-wide CloudWatch role, which access logs need; kept when the stack goes. @default false */
  readonly cloudWatchRole?: boolean;
  /** Removal policy of the access log group. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
}

/** API Gateway's default ceiling for an integration, without a quota increase. */
export const DEFAULT_MAX_INTEGRATION_TIMEOUT_SEC = 29;

/**
 * How long API Gateway waits for a route's function: its own timeout plus 2 s, so the platform's
 * 504 (with its envelope and usage record) comes first, within the API's ceiling.
 */
export function integrationTimeoutSec(route: Pick<RouteSpec, 'timeoutSec'>, maxSec: number): number {
  return Math.min(route.timeoutSec + 2, maxSec);
}

/**
 * The REST API (API Gateway v1): every route a Lambda proxy method on its area's function, the
 * fallback on `ANY /` and `ANY /{proxy+}`, a CORS preflight on every resource.
 *
 * The path resources, their preflights and their methods are grouped in one nested stack per first
 * path segment (`/user`, `/agent`, ...): a stack holds at most 500 resources and ~150 routes come to
 * some 400 API resources. The segment alone decides the stack, so adding a route never moves an
 * existing resource to another stack; a move would make CloudFormation create the new resource
 * before deleting the old one, which API Gateway refuses for two resources with the same path.
 */
export class PlatformApi extends Construct {
  readonly restApi: RestApi;
  /** Stage URL without a trailing slash, like the local BASE_URL. */
  readonly baseUrl: string;
  /** The nested stack of each first path segment. */
  readonly segmentStacks: ReadonlyMap<string, NestedStack>;

  constructor(scope: Construct, id: string, props: PlatformApiProps) {
    super(scope, id);
    validateRestRoutes(props.routes);
    this.restApi = new RestApi(this, 'RestApi', {
      restApiName: props.apiName,
      description: 'Agent platform HTTP API',
      // Regional: clients reach the region directly; a CDN in front can come with the cdn host.
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // No account-wide CloudWatch role: that singleton is shared by every API of the account and one
      // stack must not own it. Execution logs stay off; the functions log every request.
      // A stage access log needs that role set once per account and region: `cloudWatchRole` creates it.
      cloudWatchRole: props.cloudWatchRole ?? false,
      ...(props.cloudWatchRole === true ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      deployOptions: {
        stageName: props.stageName,
        tracingEnabled: true,
        metricsEnabled: true,
        ...(props.throttle === undefined ? {} : { throttlingRateLimit: props.throttle.rateLimit, throttlingBurstLimit: props.throttle.burstLimit }),
        ...(props.accessLogRetentionDays === undefined
          ? {}
          : {
              accessLogDestination: new LogGroupLogDestination(
                new LogGroup(this, 'AccessLogs', {
                  retention: props.accessLogRetentionDays as RetentionDays,
                  removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
                }),
              ),
              accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
            }),
      },
      defaultCorsPreflightOptions: CORS,
    });
    // Errors API Gateway answers itself (throttling, oversized payloads, integration failures) carry
    // CORS headers too, or browsers report them as opaque network errors.
    for (const type of [ResponseType.DEFAULT_4XX, ResponseType.DEFAULT_5XX]) {
      this.restApi.addGatewayResponse(`Gateway${type.responseType}`, { type, responseHeaders: { 'Access-Control-Allow-Origin': "'*'" } });
    }
    // A route longer than the API's ceiling is cut by API Gateway itself: answer in the platform's
    // error shape (envelope B) with the code clients already handle for timeouts.
    this.restApi.addGatewayResponse('GatewayIntegrationTimeout', {
      type: ResponseType.INTEGRATION_TIMEOUT,
      statusCode: '504',
      responseHeaders: { 'Access-Control-Allow-Origin': "'*'" },
      templates: {
        'application/json':
          '{"error":"The request did not complete within the API\'s integration timeout.","code":"TIMEOUT","requestId":"$context.requestId","rootRequestId":"$context.requestId","parentRequestId":null}',
      },
    });
    const maxIntegrationTimeoutSec = props.maxIntegrationTimeoutSec ?? DEFAULT_MAX_INTEGRATION_TIMEOUT_SEC;
    if (!Number.isInteger(maxIntegrationTimeoutSec) || maxIntegrationTimeoutSec < 1 || maxIntegrationTimeoutSec > 900) {
      throw new Error(`maxIntegrationTimeoutSec must be a whole number of seconds from 1 to 900, not ${maxIntegrationTimeoutSec}.`);
    }
    const stack = Stack.of(this);
    this.baseUrl = `https://${this.restApi.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}/${props.stageName}`;

    // One invoke permission per function for the whole API (scopePermissionToMethod: false) instead
    // of two per method (the method and console test calls): hundreds of resources saved.
    // One integration per area and timeout: the timeout is a property of the integration.
    const integrations = new Map<string, LambdaIntegration>();
    const integrationFor = (route: RouteSpec): LambdaIntegration => {
      const timeoutSec = integrationTimeoutSec(route, maxIntegrationTimeoutSec);
      const key = `${route.area}:${timeoutSec}`;
      let integration = integrations.get(key);
      if (integration === undefined) {
        const fn = props.functions.get(route.area);
        if (fn === undefined) throw new Error(`No function for area ${route.area}.`);
        integration = new LambdaIntegration(fn, { proxy: true, scopePermissionToMethod: false, timeout: Duration.seconds(timeoutSec) });
        integrations.set(key, integration);
      }
      return integration;
    };

    const segments = new Map<string, { stack: NestedStack; top: IResource }>();
    for (const route of props.routes) {
      const segment = topSegment(route.path);
      let placed = segments.get(segment);
      if (placed === undefined) {
        const nested = new NestedStack(this, `Paths-${segment}`, { description: `Agent platform API paths under /${segment}` });
        // Created in the nested stack under the root from the main stack (its id arrives as a
        // parameter); every deeper resource is its construct child, so it stays in the same stack.
        placed = { stack: nested, top: new Resource(nested, 'Path', { parent: this.restApi.root, pathPart: segment }) };
        segments.set(segment, placed);
      }
      const rest = route.path
        .split('/')
        .filter((p) => p !== '')
        .slice(1)
        .join('/');
      new Method(placed.stack, `${route.method} ${route.path.replaceAll('/', '|')}`, {
        resource: rest === '' ? placed.top : placed.top.resourceForPath(rest),
        httpMethod: route.method,
        integration: integrationFor(route),
      });
    }
    this.segmentStacks = new Map([...segments].map(([segment, placed]) => [segment, placed.stack]));

    const fallback = new LambdaIntegration(props.fallback, { proxy: true, scopePermissionToMethod: false });
    this.restApi.root.addMethod('ANY', fallback);
    this.restApi.root.addProxy({ defaultIntegration: fallback, anyMethod: true });
  }
}
