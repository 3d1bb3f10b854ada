import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { Resource } from 'aws-cdk-lib/aws-apigateway';
import { Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { PlatformApi, topSegment, validateRestRoutes } from '../../lib/cloud/api.ts';
import { commonHeaders } from '../../functions/core/http/response.ts';
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, isRestApiRoute } from '../../lib/manifest/http.ts';
import { routes } from '../../lib/manifest/index.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { json, logicalIdOf, synthPlatform, withScratchOutdir, type SynthesizedPlatform, type TemplateJson } from './synth-platform.ts';

interface FoundMethod {
  /** `main`, or the path segment whose nested stack holds the method. */
  readonly where: string;
  readonly httpMethod: string;
  readonly path: string;
  readonly integration: Record<string, any>;
  /** The integration's Lambda ARN as the main template writes it (followed through parameters). */
  readonly lambdaArn: unknown;
}

/**
 * Every API Gateway method of the platform with its full path, rebuilt from the templates alone:
 * ids are followed through nested stack parameters into the main template, so this also checks the
 * cross-stack wiring.
 */
function apiMethods(platform: SynthesizedPlatform): FoundMethod[] {
  const main = json(platform.main);
  const templates: { where: string; tpl: TemplateJson; stackId: string | null }[] = [
    { where: 'main', tpl: main, stackId: null },
    ...[...platform.segments].map(([segment, t]) => ({ where: segment, tpl: json(t), stackId: platform.segmentStackIds.get(segment)! })),
  ];
  /** The expression a nested stack parameter receives from the main template; other expressions as they are. */
  const inMain = (tpl: TemplateJson, stackId: string | null, expr: any): any => {
    const ref: string | undefined = expr?.Ref;
    if (stackId !== null && ref !== undefined && tpl.Parameters?.[ref] !== undefined) return main.Resources[stackId]?.Properties?.['Parameters'][ref];
    return expr;
  };
  const resolvePath = (tpl: TemplateJson, stackId: string | null, expr: any): string => {
    const resolved = inMain(tpl, stackId, expr);
    if (resolved !== expr) return resolvePath(main, null, resolved);
    if (expr?.['Fn::GetAtt']?.[1] === 'RootResourceId') return '';
    const resource = tpl.Resources[expr?.Ref];
    if (resource?.Type !== 'AWS::ApiGateway::Resource') throw new Error(`Cannot resolve ${JSON.stringify(expr)}`);
    return `${resolvePath(tpl, stackId, resource.Properties?.['ParentId'])}/${resource.Properties?.['PathPart']}`;
  };
  return templates.flatMap(({ where, tpl, stackId }) =>
    Object.values(tpl.Resources)
      .filter((r) => r.Type === 'AWS::ApiGateway::Method')
      .map((r) => {
        const integration = r.Properties?.['Integration'];
        const uriParts: unknown[] = integration['Uri']?.['Fn::Join']?.[1] ?? [];
        const arn = uriParts.map((p) => inMain(tpl, stackId, p)).find((p: any) => p?.['Fn::GetAtt']?.[1] === 'Arn');
        return {
          where,
          httpMethod: r.Properties?.['HttpMethod'],
          path: resolvePath(tpl, stackId, r.Properties?.['ResourceId']) || '/',
          integration,
          lambdaArn: arn,
        };
      }),
  );
}

const apiRoutes = routes.filter(isRestApiRoute);

describe('REST API', () => {
  it.each(apiRoutes.map((r) => [`${r.method} ${r.path}`, r] as const))('serves %s from its area function', (_key, route: RouteSpec) => {
    // Prepare
    const platform = synthPlatform();
    const areaFunction = logicalIdOf(platform, platform.stack.functions.areas.get(route.area)!.function);

    // Act
    const matches = apiMethods(platform).filter((m) => m.httpMethod === route.method && m.path === route.path);

    // Assess
    expect(matches).toHaveLength(1);
    expect(matches[0]!.where).toBe(topSegment(route.path));
    expect(matches[0]!.integration).toMatchObject({ Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' });
    expect(matches[0]!.lambdaArn).toEqual({ 'Fn::GetAtt': [areaFunction, 'Arn'] });
  });

  it('has no Lambda method beyond the manifest routes and the fallback', () => {
    // Prepare
    const expected = [...apiRoutes.map((r) => `${r.method} ${r.path}`), 'ANY /', 'ANY /{proxy+}'].sort();

    // Act
    const found = apiMethods(synthPlatform())
      .filter((m) => m.integration['Type'] === 'AWS_PROXY')
      .map((m) => `${m.httpMethod} ${m.path}`)
      .sort();

    // Assess
    expect(found).toEqual(expected);
  });

  it('sends ANY / and ANY /{proxy+} to the fallback function', () => {
    // Prepare
    const platform = synthPlatform();
    const fallback = logicalIdOf(platform, platform.stack.functions.fallback.function);

    // Act
    const catchAll = apiMethods(platform).filter((m) => m.httpMethod === 'ANY');

    // Assess
    expect(catchAll.map((m) => m.path).sort()).toEqual(['/', '/{proxy+}']);
    for (const m of catchAll) {
      expect(m.where).toBe('main');
      expect(m.lambdaArn).toEqual({ 'Fn::GetAtt': [fallback, 'Arn'] });
    }
  });

  it('answers CORS preflight on every resource', () => {
    // Prepare
    const methods = apiMethods(synthPlatform());
    const paths = new Set(methods.map((m) => m.path));

    // Act
    const preflights = methods.filter((m) => m.httpMethod === 'OPTIONS');

    // Assess
    expect(preflights.map((m) => m.path).sort()).toEqual([...paths].sort());
    for (const m of preflights) {
      expect(m.integration).toMatchObject({ Type: 'MOCK' });
      const headers = m.integration['IntegrationResponses'][0].ResponseParameters;
      expect(headers['method.response.header.Access-Control-Allow-Origin']).toBe("'*'");
      expect(headers['method.response.header.Access-Control-Allow-Headers']).toBe(`'${CORS_ALLOWED_HEADERS.join(',')}'`);
    }
  });

  it('keeps each path segment in one nested stack', () => {
    // Prepare
    const platform = synthPlatform();

    // Act
    const stacksPerSegment = new Map<string, Set<string>>();
    for (const m of apiMethods(platform).filter((m) => m.path !== '/' && m.path !== '/{proxy+}')) {
      const set = stacksPerSegment.get(topSegment(m.path)) ?? new Set<string>();
      set.add(m.where);
      stacksPerSegment.set(topSegment(m.path), set);
    }

    // Assess
    expect([...platform.segments.keys()].sort()).toEqual([...new Set(apiRoutes.map((r) => topSegment(r.path)))].sort());
    for (const [segment, stacks] of stacksPerSegment) expect([...stacks], segment).toEqual([segment]);
  });

  it('grants API Gateway one invoke permission per function, for the whole API', () => {
    // Prepare
    const platform = synthPlatform();
    const main = json(platform.main);
    const restApi = logicalIdOf(platform, platform.stack.api.restApi);

    // Act: the function URLs' public permissions are checked with the streaming functions.
    const permissions = Object.values(main.Resources).filter(
      (r) => r.Type === 'AWS::Lambda::Permission' && r.Properties?.['Principal'] === 'apigateway.amazonaws.com',
    );
    const elsewhere = [...platform.segments.values()].flatMap((t) => Object.keys(t.findResources('AWS::Lambda::Permission')));

    // Assess
    expect(permissions).toHaveLength(platform.stack.functions.areas.size + 1);
    expect(elsewhere).toEqual([]);
    for (const p of permissions) {
      expect(p.Properties).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'apigateway.amazonaws.com' });
      const arn = p.Properties?.['SourceArn']['Fn::Join'][1] as unknown[];
      expect(arn).toContainEqual({ Ref: restApi });
      expect(arn.at(-1)).toBe('/*/*/*');
    }
  });

  it('deploys the stage after every path stack, on a regional endpoint with tracing', () => {
    // Prepare
    const platform = synthPlatform();

    // Act
    const [deployment] = Object.values(platform.main.findResources('AWS::ApiGateway::Deployment'));

    // Assess
    expect(deployment!['DependsOn']).toEqual(expect.arrayContaining([...platform.segmentStackIds.values()]));
    platform.main.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: 'test', TracingEnabled: true });
    platform.main.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
  });
});

const route = (area: string, method: RouteSpec['method'], path: string): RouteSpec => ({
  id: `${area}.${method.toLowerCase()}-${path}`,
  method,
  path,
  area,
  host: 'base',
  handler: method.toLowerCase(),
  auth: 'public',
  callers: 'role',
  mode: 'buffered',
  style: 'B',
  timeoutSec: 29,
  maxBodyBytes: 1024,
});

interface MiniApi {
  readonly deploymentId: string;
  /** Path → `<stack path> <logical id>` of its API Gateway resource. */
  readonly placement: ReadonlyMap<string, string>;
}

/** A minimal API built from `list`, to see what a change of routes changes. */
function miniApi(list: readonly RouteSpec[]): MiniApi {
  return withScratchOutdir((outdir) => {
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'ApiOnly');
    const fn = (id: string): IFunction =>
      new LambdaFunction(stack, id, { runtime: Runtime.NODEJS_22_X, handler: 'index.handler', code: Code.fromInline('export const handler = () => {}') });
    const areas = [...new Set(list.map((r) => r.area))];
    const api = new PlatformApi(stack, 'Api', {
      routes: list,
      functions: new Map(areas.map((a) => [a, fn(`Fn-${a}`)])),
      fallback: fn('Fallback'),
      apiName: 'api',
      stageName: 'test',
    });
    const [deploymentId] = Object.keys(Template.fromStack(stack).findResources('AWS::ApiGateway::Deployment'));
    const placement = new Map(
      api.node
        .findAll()
        .filter((c): c is Resource => c instanceof Resource)
        .map((r) => [r.path, `${Stack.of(r).node.path} ${Stack.of(r).getLogicalId(r.node.defaultChild as CfnElement)}`]),
    );
    return { deploymentId: deploymentId!, placement };
  });
}

describe('API changes', () => {
  it('gets a new deployment when a route in a path stack changes', () => {
    // Prepare
    const base = [route('demo', 'GET', '/things/{thingId}')];

    // Act
    const before = miniApi(base).deploymentId;
    const same = miniApi(base).deploymentId;
    const added = miniApi([...base, route('demo', 'PUT', '/things/{thingId}')]).deploymentId;

    // Assess: CloudFormation redeploys a stage only when the deployment's logical id changes.
    expect(same).toBe(before);
    expect(added).not.toBe(before);
  });

  it('never moves an existing resource when another area adds routes under its paths', () => {
    // Prepare
    const agents = [route('agents', 'GET', '/agent/{agentId}'), route('agents', 'GET', '/agent/list'), route('users', 'GET', '/user/info')];
    const withChat = [...agents, route('chat', 'POST', '/agent/{agentId}/chat'), route('tokens', 'GET', '/user/token/list')];

    // Act
    const before = miniApi(agents).placement;
    const after = miniApi(withChat).placement;

    // Assess: a resource that changed stack or logical id would be created before the old one is
    // deleted, and API Gateway refuses two resources with the same path.
    for (const [path, where] of before) expect(after.get(path), path).toBe(where);
    expect(after.size).toBeGreaterThan(before.size);
  });
});

describe('route validation', () => {
  it('refuses routes API Gateway would reject at deploy time', () => {
    // Prepare
    const clash = [route('a', 'GET', '/things/{thingId}'), route('b', 'GET', '/things/{id}/parts')];
    const rootParameter = [route('a', 'GET', '/{slug}')];
    const duplicate = [route('a', 'GET', '/x'), route('b', 'GET', '/x')];
    const root = [route('a', 'GET', '/')];

    // Act / Assess
    expect(() => validateRestRoutes(clash)).toThrow(/one path parameter under \/things/);
    expect(() => validateRestRoutes(rootParameter)).toThrow(/fallback/);
    expect(() => validateRestRoutes(duplicate)).toThrow(/Two routes for GET \/x/);
    expect(() => validateRestRoutes(root)).toThrow(/root path/);
    expect(() => validateRestRoutes(apiRoutes)).not.toThrow();
  });
});

describe('shared HTTP facts', () => {
  it('exposes to browsers the headers clients read: request id, conversation id, retry-after, MCP version', () => {
    // Act
    const written = (commonHeaders('r-1')['access-control-expose-headers'] ?? '').split(', ');

    // Assess
    expect(written).toEqual(expect.arrayContaining(['x-request-id', 'x-conversation-id', 'retry-after', 'x-mcp-server-version']));
    expect(written).toEqual([...CORS_EXPOSED_HEADERS]);
  });
});
