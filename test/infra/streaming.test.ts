import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { functionTimeoutSec } from '../../lib/cloud/area-functions.ts';
import { PlatformStack, type PlatformStackProps } from '../../lib/cloud/platform-stack.ts';
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS } from '../../lib/manifest/http.ts';
import { areaNamed, handlerModulePath, KERNEL_RESOURCES, resourcesOf, routes } from '../../lib/manifest/index.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { installStreamingShim } from '../../lib/local/streaming-shim.ts';
import { cdkJsonContext, roleStatements, synthPlatform, syntheticRoute, withScratchOutdir, type TemplateJson, scratchEntriesDir } from './synth-platform.ts';

/** Host URLs that are CloudFront distributions in front of a service or a bucket, never a function's own URL. */
const DISTRIBUTION_URLS = new Set(['VOICE_URL', 'CDN_URL']);

const route = (r: Parameters<typeof syntheticRoute>[0]): RouteSpec => syntheticRoute({ auth: 'required', style: 'A', ...r });

/**
 * Agent chat as the manifest declares it (POST and GET on the stream host, 900 s), another area's
 * streaming route on the same host, and a second streaming host: the code is generic over hosts and
 * areas, and this list does not depend on what the manifest holds today.
 */
const SYNTHETIC: readonly RouteSpec[] = [
  route({ method: 'GET', path: '/demo/{id}', area: 'demo', handler: 'get' }),
  route({ method: 'POST', path: '/agent/{agentId}/chat', area: 'agents', handler: 'chat-stream', host: 'stream', mode: 'streaming', timeoutSec: 900 }),
  route({ method: 'GET', path: '/agent/{agentId}/chat', area: 'agents', handler: 'chat-browser', host: 'stream', mode: 'streaming', timeoutSec: 900 }),
  route({ method: 'POST', path: '/demo/{id}/watch', area: 'demo', handler: 'watch', host: 'stream', mode: 'streaming', timeoutSec: 120 }),
  route({ method: 'GET', path: '/preview/{id}', area: 'demo', handler: 'preview', host: 'code', mode: 'streaming', timeoutSec: 60 }),
];

// Entries of the synthetic stacks go to their own directory inside the project, not among the real ones.
const scratchEntries = scratchEntriesDir('stream-entries-');
afterAll(() => rmSync(scratchEntries, { recursive: true, force: true }));

interface Synthesized {
  readonly stack: PlatformStack;
  readonly template: TemplateJson;
  readonly id: (construct: { node: { defaultChild?: unknown } }) => string;
}

const synthesized = new Map<string, Synthesized>();

/** A platform stack over `list` (cached per list), with cdk.json's flags and without bundling. */
function synthWith(list: readonly RouteSpec[], props: Partial<PlatformStackProps> = {}): Synthesized {
  const key = JSON.stringify({ list, props });
  const cached = synthesized.get(key);
  if (cached !== undefined) return cached;
  const result = withScratchOutdir((outdir) => {
    const app = new App({ outdir, analyticsReporting: false, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new PlatformStack(app, 'stream-test', { stage: 'test', version: '0', routes: list, entriesDir: scratchEntries, ...props });
    const template = Template.fromStack(stack).toJSON() as TemplateJson;
    return { stack, template, id: (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as never) };
  });
  synthesized.set(key, result);
  return result;
}

/** Logical ids each resource refers to (Ref, Fn::GetAtt, DependsOn); pseudo parameters left out. */
function references(template: TemplateJson): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  const walk = (value: unknown, into: Set<string>): void => {
    if (Array.isArray(value)) value.forEach((v) => walk(v, into));
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === 'Ref' && typeof v === 'string' && v in template.Resources) into.add(v);
        else if (k === 'Fn::GetAtt' && Array.isArray(v) && typeof v[0] === 'string') into.add(v[0]);
        else walk(v, into);
      }
    }
  };
  for (const [id, resource] of Object.entries(template.Resources)) {
    const into = new Set<string>(resource.DependsOn ?? []);
    walk(resource.Properties ?? {}, into);
    edges.set(id, into);
  }
  return edges;
}

/** The resources of one dependency cycle, or null when there is none. */
function findCycle(template: TemplateJson): string[] | null {
  const edges = references(template);
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | null => {
    if (state.get(id) === 'done') return null;
    if (state.get(id) === 'open') return path.slice(path.indexOf(id));
    state.set(id, 'open');
    path.push(id);
    for (const next of edges.get(id) ?? []) {
      const cycle = visit(next);
      if (cycle !== null) return cycle;
    }
    path.pop();
    state.set(id, 'done');
    return null;
  };
  for (const id of edges.keys()) {
    const cycle = visit(id);
    if (cycle !== null) return cycle;
  }
  return null;
}

const urlHostOf = (urlId: string) => ({
  'Fn::Join': ['', ['https://', { 'Fn::Select': [2, { 'Fn::Split': ['/', { 'Fn::GetAtt': [urlId, 'FunctionUrl'] }] }] }]],
});

describe('streaming hosts', () => {
  it('get one function each, built from an entry binding every streaming route of the host', () => {
    // Prepare
    const { stack } = synthWith(SYNTHETIC);

    // Act
    const entry = readFileSync(join(scratchEntries, 'stream-host-stream.entry.ts'), 'utf8');

    // Assess
    expect([...stack.functions.streams.keys()].sort()).toEqual(['code', 'stream']);
    expect([...stack.functions.areas.keys()]).toEqual(['demo']);
    expect(entry).toMatch(/^export const handler = streamingHandler\("stream", \[\w+Area(, \w+Area)*\], \{[^}]*\}, \{$/m);
    for (const r of SYNTHETIC.filter((r) => r.host === 'stream')) {
      expect(entry).toContain(`/${handlerModulePath(r)}"`);
      expect(entry).toContain(`${JSON.stringify(r.id)}: h`);
    }
    expect(entry).not.toContain('demo.preview');
  });

  it('are public function URLs in RESPONSE_STREAM mode with the platform CORS answer', () => {
    // Prepare
    const { stack, template, id } = synthWith(SYNTHETIC);
    const stream = stack.functions.streams.get('stream')!;

    // Act
    const url = template.Resources[id(stream.url)]!;

    // Assess
    expect(url.Type).toBe('AWS::Lambda::Url');
    expect(url.Properties).toEqual({
      TargetFunctionArn: { 'Fn::GetAtt': [id(stream.function.function), 'Arn'] },
      // The platform authenticates every request itself, as behind API Gateway.
      AuthType: 'NONE',
      InvokeMode: 'RESPONSE_STREAM',
      Cors: {
        AllowOrigins: ['*'],
        AllowMethods: ['POST', 'GET'],
        AllowHeaders: [...CORS_ALLOWED_HEADERS],
        ExposeHeaders: [...CORS_EXPOSED_HEADERS],
        MaxAge: 600,
      },
    });
  });

  it('are invokable by anyone through their URL only', () => {
    // Prepare
    const { stack, template, id } = synthWith(SYNTHETIC);
    const fn = id(stack.functions.streams.get('stream')!.function.function);

    // Act
    const permissions = Object.values(template.Resources).filter(
      (r) => r.Type === 'AWS::Lambda::Permission' && JSON.stringify(r.Properties?.['FunctionName']).includes(`"${fn}"`),
    );

    // Assess: both are required for function URLs created since October 2025.
    expect(permissions.map((p) => p.Properties).sort((a, b) => String(a?.['Action']).localeCompare(String(b?.['Action'])))).toEqual([
      { Action: 'lambda:InvokeFunction', FunctionName: { 'Fn::GetAtt': [fn, 'Arn'] }, InvokedViaFunctionUrl: true, Principal: '*' },
      { Action: 'lambda:InvokeFunctionUrl', FunctionName: { 'Fn::GetAtt': [fn, 'Arn'] }, FunctionUrlAuthType: 'NONE', Principal: '*' },
    ]);
  });

  it('time out after their slowest route plus a margin, within Lambda 900 s', () => {
    // Prepare
    const { stack, template, id } = synthWith(SYNTHETIC);

    // Act
    const timeout = (host: 'stream' | 'code') => template.Resources[id(stack.functions.streams.get(host)!.function.function)]!.Properties?.['Timeout'];

    // Assess
    expect(timeout('stream')).toBe(900);
    expect(timeout('code')).toBe(63);
    expect(functionTimeoutSec([route({ method: 'GET', path: '/x', area: 'a', handler: 'h', timeoutSec: 897 })])).toBe(900);
    expect(
      functionTimeoutSec([
        route({ method: 'GET', path: '/x', area: 'a', handler: 'h', timeoutSec: 29 }),
        route({ method: 'GET', path: '/y', area: 'a', handler: 'i', timeoutSec: 300 }),
      ]),
    ).toBe(303);
  });

  it('have the platform function defaults and the store grants of the areas whose routes they serve', () => {
    // Prepare: the stream host serves agents' chat and a route of an area without a module (kernel only)
    const { stack, template, id } = synthWith(SYNTHETIC);
    const stream = stack.functions.streams.get('stream')!.function.function;
    const area = stack.functions.areas.get('demo')!.function;
    const tableIds = new Map([...stack.data.tables].map(([name, table]) => [id(table), name]));
    const tablesOf = (fn: typeof stream) =>
      [
        ...new Set(
          roleStatements(template, id(fn.role!))
            .filter((s) => [s.Action].flat().some((a) => a.startsWith('dynamodb:')))
            .flatMap((s) => [...JSON.stringify(s.Resource).matchAll(/"([A-Za-z0-9]+)"/g)].map((m) => tableIds.get(m[1]!)))
            .filter((n) => n !== undefined),
        ),
      ].sort();

    // Act
    const props = template.Resources[id(stream)]!.Properties!;

    // Assess
    expect(props).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 512,
      TracingConfig: { Mode: 'Active' },
    });
    expect(tablesOf(stream)).toEqual([...resourcesOf([areaNamed('agents')]).tables].sort());
    expect(tablesOf(area)).toEqual([...KERNEL_RESOURCES.tables].sort());
  });

  it('are named to every other platform function by URL variable, but not to themselves (no dependency cycle)', () => {
    // Prepare
    const { stack, template, id } = synthWith(SYNTHETIC);
    const streamUrl = urlHostOf(id(stack.functions.streams.get('stream')!.url));
    const codeUrl = urlHostOf(id(stack.functions.streams.get('code')!.url));
    const variables = (fn: { function: { node: { defaultChild?: unknown } } }) => template.Resources[id(fn.function)]!.Properties?.['Environment'].Variables;

    // Act
    const others = [...stack.functions.areas.values(), stack.functions.fallback].map(variables);
    const streams = [...stack.functions.streams.values()].map((s) => variables(s.function));

    // Assess
    for (const v of others) expect(v).toMatchObject({ STREAM_URL: streamUrl, CODE_URL: codeUrl });
    // VOICE_URL and CDN_URL are distributions (service-containers.ts, asset-distribution.ts), not function URLs.
    for (const v of streams) expect(Object.keys(v).filter((k) => k.endsWith('_URL') && !DISTRIBUTION_URLS.has(k))).toEqual([]);
    expect(findCycle(template)).toBeNull();
    expect(template.Outputs?.['StreamUrl']?.Value).toEqual(streamUrl);
    expect(template.Outputs?.['CodeUrl']?.Value).toEqual(codeUrl);
  });

  it('leave the URL outputs and variables as before when no route streams', () => {
    // Prepare
    const list = SYNTHETIC.filter((r) => r.mode === 'buffered');

    // Act
    const { stack, template } = synthWith(list);

    // Assess
    expect(stack.functions.streams.size).toBe(0);
    expect(Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Url')).toEqual([]);
    for (const r of Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function')) {
      expect(Object.keys(r.Properties?.['Environment']?.Variables ?? {}).filter((k) => k.endsWith('_URL') && !DISTRIBUTION_URLS.has(k))).toEqual([]);
    }
    expect(JSON.stringify(template.Outputs?.['StreamUrl']?.Value)).toMatch(/\/test\/stream"\]\]\}$/);
  });

  it('refuses streaming routes on hosts a function URL cannot serve', () => {
    // Prepare
    const on = (host: RouteSpec['host']) => [route({ method: 'GET', path: '/s', area: 'demo', handler: `s-${host}`, host, mode: 'streaming' })];

    // Act / Assess
    expect(() => synthWith(on('base'))).toThrow(/base host cannot be a response-streaming function URL/);
    expect(() => synthWith(on('mcp'))).toThrow(/mcp host/);
    expect(() => synthWith(on('voice'))).toThrow(/voice host/);
  });
});

const manifestStreamingHosts = [...new Set(routes.filter((r) => r.mode === 'streaming').map((r) => r.host))];

describe.skipIf(manifestStreamingHosts.length === 0)('manifest streaming hosts', () => {
  it.each(manifestStreamingHosts)('%s: the generated entry binds every streaming route of the host', async (host) => {
    // Prepare: the real manifest's entries, as `cdk synth` writes them.
    const { entriesDir } = synthPlatform();
    installStreamingShim();

    // Act: importing runs streamingHandler, which throws when a streaming route of the host has no handler.
    const mod = (await import(join(entriesDir, `stream-host-${host}.entry.ts`))) as { handler: unknown };

    // Assess
    expect(typeof mod.handler).toBe('function');
  });
});
