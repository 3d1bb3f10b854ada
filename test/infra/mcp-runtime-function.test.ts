import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/cloud/function-entries.ts';
import {
  DEFAULT_MCP_HOST_DIR,
  DEFAULT_MCP_LAYER_DIR,
  DEFAULT_MCP_MODULES_DIR,
  layerEntries,
  layerPackages,
  MCP_RUNTIME_NODE_OPTIONS,
  McpRuntimeFunction,
  readAllowedModules,
  stageMcpHostAsset,
  stageMcpLayerAsset,
  type LayerPackage,
} from '../../lib/cloud/mcp-runtime-function.ts';
import { PlatformStack } from '../../lib/cloud/platform-stack.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { json, logicalIdOf, roleStatements, synthPlatform, withScratchOutdir, syntheticRoute, scratchEntriesDir } from './synth-platform.ts';

/** The MCP runtime function's resources in the platform template. */
function mcpRuntime() {
  const platform = synthPlatform();
  const template = json(platform.main);
  const fnId = logicalIdOf(platform, platform.stack.mcpRuntime.function);
  const roleId = logicalIdOf(platform, platform.stack.mcpRuntime.role);
  const layerId = logicalIdOf(platform, platform.stack.mcpRuntime.layer);
  return { platform, template, fnId, roleId, layerId, props: template.Resources[fnId]!.Properties! };
}

describe('MCP runtime function', () => {
  it('runs the MCP host on Node 22, arm64, with ES module sources enabled and the modules layer', () => {
    // Prepare
    const { props, template, layerId } = mcpRuntime();

    // Act
    const layer = template.Resources[layerId]!;

    // Assess
    expect(props).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'lambda.handler', MemorySize: 1024, Timeout: 120 });
    expect(props['Environment'].Variables).toEqual({ NODE_OPTIONS: '--experimental-vm-modules' });
    expect(props['Layers']).toEqual([{ Ref: layerId }]);
    expect(layer.Type).toBe('AWS::Lambda::LayerVersion');
    expect(layer.Properties).toMatchObject({ CompatibleRuntimes: ['nodejs22.x'], CompatibleArchitectures: expect.arrayContaining(['arm64']) });
    // No tracing: X-Ray would be one more permission for the role of untrusted code.
    expect(props['TracingConfig']).toBeUndefined();
  });

  it('isolates tenants: one execution environment per tenant id, and no function URL or resource policy', () => {
    // Prepare
    const { props, template, fnId } = mcpRuntime();

    // Act
    const reaching = Object.values(template.Resources).filter(
      (r) => (r.Type === 'AWS::Lambda::Url' || r.Type === 'AWS::Lambda::Permission') && JSON.stringify(r.Properties).includes(`"${fnId}"`),
    );

    // Assess
    expect(props['TenancyConfig']).toEqual({ TenantIsolationMode: 'PER_TENANT' });
    expect(reaching).toEqual([]);
  });

  it('takes its memory as a prop and refuses what Lambda would refuse', () => {
    // Prepare
    const build = (memorySize: number) =>
      withScratchOutdir((outdir) => {
        const stack = new Stack(new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } }), 'McpRuntimeOnly');
        new McpRuntimeFunction(stack, 'McpRuntime', { memorySize });
        return Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function')).map((f) => f['Properties'].MemorySize);
      });

    // Act
    const sizes = build(2048);

    // Assess
    expect(sizes).toEqual([2048]);
    for (const wrong of [64, 10241, 1536.5]) expect(() => build(wrong)).toThrow(/Invalid MCP runtime memory/);
  });

  it('has a role that can write its own logs, and nothing else', () => {
    // Prepare
    const { template, roleId, fnId } = mcpRuntime();
    const role = template.Resources[roleId]!;

    // Act
    const statements = roleStatements(template, roleId);
    const naming = Object.entries(template.Resources)
      .filter(([id]) => id !== roleId)
      .filter(([, r]) => JSON.stringify(r).includes(`"${roleId}"`))
      .map(([id, r]) => `${r.Type} ${id}`);

    // Assess: no managed policy (AWSLambdaBasicExecutionRole would allow every log group of the account).
    expect(role.Properties?.['ManagedPolicyArns']).toBeUndefined();
    expect(role.Properties?.['Policies']).toBeUndefined();
    expect(statements).toEqual([
      { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [expect.stringMatching(/^McpRuntimeLogs/), 'Arn'] } },
    ]);
    const policies = Object.entries(template.Resources).filter(
      ([, r]) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties?.['Roles']).includes(`"${roleId}"`),
    );
    expect(policies).toHaveLength(1);
    expect(naming.sort()).toEqual([`AWS::IAM::Policy ${policies[0]![0]}`, `AWS::Lambda::Function ${fnId}`].sort());
  });

  it('may be invoked by the functions of the areas using its port only (the hosted endpoint, the platform MCP server), which alone know its name', () => {
    // Prepare
    const { platform, template, fnId } = mcpRuntime();
    const users = ['mcp', 'platform-tools'].map((area) => platform.stack.functions.areas.get(area));
    const functionIds = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');

    // Act: every policy statement of the template that names the function, with the roles it is attached to.
    const grants = Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((p) =>
        (p.Properties?.['PolicyDocument'].Statement as { Action: string | string[]; Resource: unknown }[])
          .filter((s) => JSON.stringify(s.Resource).includes(`"${fnId}"`))
          .map((s) => ({ roles: p.Properties?.['Roles'], actions: [s.Action].flat() })),
      );
    const knowing = functionIds.filter(([, r]) => r.Properties?.['Environment']?.Variables?.MCP_RUNTIME_FUNCTION_NAME !== undefined).map(([id]) => id);

    // Assess
    expect(users.every((user) => user !== undefined)).toBe(true);
    const byRole = (grant: { roles: unknown }) => JSON.stringify(grant.roles);
    expect(grants.sort((a, b) => byRole(a).localeCompare(byRole(b)))).toEqual(
      users
        .map((user) => ({ roles: [{ Ref: logicalIdOf(platform, user!.function.role!) }], actions: ['lambda:InvokeFunction'] }))
        .sort((a, b) => byRole(a).localeCompare(byRole(b))),
    );
    expect(knowing.sort()).toEqual(users.map((user) => logicalIdOf(platform, user!.function)).sort());
    for (const id of knowing) expect(template.Resources[id]!.Properties?.['Environment'].Variables.MCP_RUNTIME_FUNCTION_NAME).toEqual({ Ref: fnId });
  });

  it('lends its modules layer to the function of the platform MCP server alone, which the API serves /mcp/platform from', () => {
    // Prepare: the layer holds the SDK that functions/platform-tools/platform-mcp.service.ts requires
    // at run time (from /opt/nodejs/node_modules, on Lambda's NODE_PATH).
    const { platform, template, layerId, fnId } = mcpRuntime();
    const serverFunction = logicalIdOf(platform, platform.stack.functions.areas.get('platform-tools')!.function);
    const segment = json(platform.segments.get('mcp')!);
    const segmentStack = template.Resources[platform.segmentStackIds.get('mcp')!]!;

    // Act
    const withLayer = Object.entries(template.Resources)
      .filter(([, r]) => r.Type === 'AWS::Lambda::Function' && JSON.stringify(r.Properties?.['Layers'] ?? []).includes(`"${layerId}"`))
      .map(([id]) => id);
    const top = Object.entries(segment.Resources).find(([, r]) => r.Type === 'AWS::ApiGateway::Resource' && r.Properties?.['PathPart'] === 'mcp');
    const platformPath = Object.entries(segment.Resources).find(
      ([, r]) => r.Type === 'AWS::ApiGateway::Resource' && r.Properties?.['PathPart'] === 'platform' && r.Properties['ParentId']?.Ref === top?.[0],
    );
    // Each method on /mcp/platform but the CORS preflight, with the function its integration invokes,
    // followed through the nested stack's parameters.
    const methods = Object.values(segment.Resources)
      .filter(
        (r) => r.Type === 'AWS::ApiGateway::Method' && r.Properties?.['ResourceId']?.Ref === platformPath?.[0] && r.Properties?.['HttpMethod'] !== 'OPTIONS',
      )
      .map((r) => {
        const parts = r.Properties?.['Integration']?.Uri?.['Fn::Join']?.[1] as unknown[];
        const invoked = parts
          .flatMap((part) => {
            const parameter = (part as { Ref?: string }).Ref;
            return parameter === undefined ? [] : [segmentStack.Properties?.['Parameters'][parameter]];
          })
          .find((value) => value?.['Fn::GetAtt']?.[1] === 'Arn');
        return { method: r.Properties?.['HttpMethod'], type: r.Properties?.['Integration']?.Type, invoked };
      });

    // Assess
    expect(withLayer.sort()).toEqual([fnId, serverFunction].sort());
    expect(template.Resources[serverFunction]!.Properties?.['Layers']).toEqual([{ Ref: layerId }]);
    expect(platformPath).toBeDefined();
    expect(methods.sort((a, b) => String(a.method).localeCompare(String(b.method)))).toEqual(
      ['GET', 'POST'].map((method) => ({ method, type: 'AWS_PROXY', invoked: { 'Fn::GetAtt': [serverFunction, 'Arn'] } })),
    );
  });

  // Entries of the synthetic stack go to their own directory inside the project, not among the real ones.
  const scratchEntries = scratchEntriesDir('mcp-entries-');
  afterAll(() => rmSync(scratchEntries, { recursive: true, force: true }));

  it('is also given to a streaming function serving a route of the mcp area, and to no function when none does', () => {
    // Prepare
    const demo = syntheticRoute({ method: 'GET', path: '/demo/{id}', area: 'demo', handler: 'get' });
    const watch = syntheticRoute({ method: 'GET', path: '/demo/{id}/watch', area: 'demo', handler: 'watch', host: 'site', mode: 'streaming' });
    const mcpStream = syntheticRoute({
      method: 'POST',
      path: '/mcp-live/{serverId}',
      area: 'mcp',
      handler: 'live',
      host: 'stream',
      mode: 'streaming',
      timeoutSec: 120,
    });
    const knowing = (routes: RouteSpec[]) =>
      withScratchOutdir((outdir) => {
        const app = new App({ outdir, analyticsReporting: false, context: { 'aws:cdk:bundling-stacks': [] } });
        const stack = new PlatformStack(app, 'mcp-test', { stage: 'test', version: '0', routes, entriesDir: scratchEntries });
        const fns = [
          ...[...stack.functions.areas].map(([area, f]) => [`area ${area}`, f] as const),
          ...[...stack.functions.streams].map(([host, s]) => [`stream ${host}`, s.function] as const),
        ];
        const template = Template.fromStack(stack).toJSON() as ReturnType<typeof json>;
        return fns
          .filter(
            ([, f]) =>
              template.Resources[stack.getLogicalId(f.function.node.defaultChild as never)]!.Properties?.['Environment'].Variables.MCP_RUNTIME_FUNCTION_NAME !==
              undefined,
          )
          .map(([name]) => name);
      });

    // Act / Assess
    expect(knowing([demo, watch, mcpStream])).toEqual(['stream stream']);
    expect(knowing([demo, watch])).toEqual([]);
  });
});

describe('MCP runtime assets', () => {
  let dir = '';
  let packages: LayerPackage[] = [];
  const layerModules = () => join(dir, 'opt', 'nodejs', 'node_modules');

  // The real bundling steps, once for the file: what `cdk synth` writes as the layer and the code.
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-runtime-assets-'));
    packages = stageMcpLayerAsset(join(dir, 'opt'), { layerDir: DEFAULT_MCP_LAYER_DIR, modulesDir: DEFAULT_MCP_MODULES_DIR });
    stageMcpHostAsset(DEFAULT_MCP_HOST_DIR, join(dir, 'task'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const allFiles = (root: string, prefix = ''): string[] =>
    readdirSync(root, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? allFiles(join(root, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]));

  it('puts the MCP SDK and zod, as the platform installed them, in nodejs/node_modules of the layer', () => {
    // Prepare
    const rootLock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8'));
    const version = (name: string) => JSON.parse(readFileSync(join(layerModules(), name, 'package.json'), 'utf8')).version;
    const licenses = (root: string, path: string) => readdirSync(join(root, path)).filter((f) => /^(licen[cs]e|notice|copying)/i.test(f));

    // Act
    const files = allFiles(layerModules());

    // Assess
    for (const name of ['@modelcontextprotocol/sdk', 'zod']) {
      expect(version(name), name).toBe(rootLock.packages[`node_modules/${name}`].version);
      expect(existsSync(join(layerModules(), name, 'LICENSE')), name).toBe(true);
    }
    expect(files).toContain('@modelcontextprotocol/sdk/dist/cjs/server/mcp.js');
    // The nested package.json that makes the SDK's dist/cjs CommonJS.
    expect(files).toContain('@modelcontextprotocol/sdk/dist/cjs/package.json');
    // Never loaded at run time: type declarations, source maps, documentation, TypeScript sources, and
    // the ES module builds (the host loads every package through require).
    expect(files.filter((f) => /\.d\.[cm]?ts$|\.map$|\.md$/i.test(f) && !/\/licen[cs]e[^/]*$/i.test(f))).toEqual([]);
    expect(files.filter((f) => f.startsWith('zod/src/') || f.startsWith('@modelcontextprotocol/sdk/dist/esm/'))).toEqual([]);
    expect(files.filter((f) => f.startsWith('.bin/'))).toEqual([]);
    // Each staged package keeps its license texts, whatever their names.
    for (const p of packages) expect(licenses(layerModules(), p.path), p.path).toEqual(licenses(DEFAULT_MCP_MODULES_DIR, p.path));
  });

  it('holds only packages layers/mcp-node/package-lock.json locks, at the same versions, and none only refused modules use', () => {
    // Prepare: npm ci --omit=dev on the layer's lock file would install these.
    const lock = JSON.parse(readFileSync(join(DEFAULT_MCP_LAYER_DIR, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; dev?: boolean }>;
    };
    const locked = new Set(
      Object.entries(lock.packages)
        .filter(([path, entry]) => path !== '' && entry.dev !== true)
        .map(([path, entry]) => `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${entry.version}`),
    );

    // Act
    const staged = packages.map((p) => `${p.name}@${p.version}`);

    // Assess: the nesting may differ (the platform's install hoists differently), the versions may not.
    expect(staged.filter((p) => !locked.has(p))).toEqual([]);
    for (const p of packages) expect(existsSync(join(layerModules(), p.path, 'package.json')), p.path).toBe(true);
    // Express and its tree, Hono and cross-spawn serve only the SDK subpaths the host refuses.
    for (const name of ['express', 'hono', '@hono/node-server', 'cross-spawn', 'cors', 'raw-body'])
      expect(
        packages.map((p) => p.name),
        name,
      ).not.toContain(name);
  });

  it('loads every module a server may name from the layer alone, as from the installed packages', () => {
    // Prepare: each specifier the host allows, required (as the host does) by a process that finds
    // packages only on NODE_PATH, once with the layer and once with the platform's node_modules.
    const specifiers = layerEntries(DEFAULT_MCP_MODULES_DIR, DEFAULT_MCP_LAYER_DIR, readAllowedModules()).map((e) => e.specifier);
    const failures = (modules: string) => {
      const run = spawnSync(
        process.execPath,
        [
          '-e',
          `const failed = {}; for (const s of ${JSON.stringify(specifiers)}) { try { require(s); } catch (e) { failed[s] = e.code ?? e.name; } } process.stdout.write(JSON.stringify(failed));`,
        ],
        // A guard against a hang (a synchronous child blocks the test's own timeout), not a check of speed.
        { cwd: dir, env: { PATH: process.env['PATH'], NODE_PATH: modules }, encoding: 'utf8', timeout: 600_000 },
      );
      expect(run.status, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as Record<string, string>;
    };

    // Act
    const fromLayer = failures(layerModules());
    const installed = failures(DEFAULT_MCP_MODULES_DIR);

    // Assess: the same modules fail in both (the SDK's cfworker validator needs an optional peer nobody installs).
    expect(specifiers).toEqual(
      expect.arrayContaining(['@modelcontextprotocol/sdk/server/mcp.js', '@modelcontextprotocol/sdk/client/index.js', 'zod', 'zod/v4/core', 'zod/v3']),
    );
    expect(specifiers.filter((s) => s.includes('/examples/') || s.endsWith('/client/stdio.js') || s.endsWith('/server/express.js'))).toEqual([]);
    expect(fromLayer).toEqual(installed);
    expect(Object.keys(fromLayer).length).toBeLessThan(specifiers.length / 10);
  });

  it('answers an inspect from the staged code and layer alone, with the function options', () => {
    // Prepare: an ES module server, as users write them; the process can resolve packages from the
    // layer only (NODE_PATH, as Lambda sets it to include /opt/nodejs/node_modules).
    const sourceCode = `import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
export function createMcpServer() {
  const server = new McpServer({ name: 'weather', version: '1.0.0' });
  server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: city }] }));
  return server;
}
`;
    const event = { op: 'inspect', serverId: 'mcp-weather', version: 1, sourceCode };
    const driver = `import { handler } from ${JSON.stringify(join(dir, 'task', 'lambda.mjs'))};
process.stdout.write(JSON.stringify(await handler(${JSON.stringify(event)}, { getRemainingTimeInMillis: () => 20000 })));`;

    // Act
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', driver], {
      cwd: dir,
      env: { PATH: process.env['PATH'], NODE_PATH: layerModules(), NODE_OPTIONS: MCP_RUNTIME_NODE_OPTIONS },
      encoding: 'utf8',
      timeout: 20_000,
    });

    // Assess
    expect(run.stderr).not.toMatch(/Cannot find module/);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ ok: true, tools: ['forecast'] });
    expect(allFiles(join(dir, 'task'))).toEqual(expect.arrayContaining(['lambda.mjs', 'core.mjs']));
  });

  it('resolves dependencies as Node does: nested copies, scoped packages, optional ones skipped, missing ones refused', () => {
    // Prepare: a made-up install. a needs b and c@2 (nested under a); c@1 at the top is nobody's;
    // a's optional and optional-peer dependencies are not installed.
    const fixture = mkdtempSync(join(tmpdir(), 'mcp-layer-fixture-'));
    const pkg = (path: string, manifest: Record<string, unknown>) => {
      const file = join(fixture, 'node_modules', ...path.split('/'), 'package.json');
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(manifest));
    };
    writeFileSync(join(fixture, 'package.json'), JSON.stringify({ dependencies: { a: '^1', '@s/p': '^1' } }));
    pkg('a', {
      name: 'a',
      version: '1.0.0',
      dependencies: { b: '^1', c: '^2' },
      optionalDependencies: { gone: '^1' },
      peerDependencies: { peer: '^1' },
      peerDependenciesMeta: { peer: { optional: true } },
    });
    pkg('a/node_modules/c', { name: 'c', version: '2.0.0' });
    pkg('b', { name: 'b', version: '1.0.0', dependencies: { '@s/p': '^1' } });
    pkg('c', { name: 'c', version: '1.0.0' });
    pkg('@s/p', { name: '@s/p', version: '1.0.0' });
    const sources = { layerDir: fixture, modulesDir: join(fixture, 'node_modules') };
    try {
      // Act
      const found = layerPackages(sources).map((p) => `${p.path} ${p.name}@${p.version}`);
      pkg('b', { name: 'b', version: '1.0.1', dependencies: { missing: '^1' } });

      // Assess
      expect(found).toEqual(['@s/p @s/p@1.0.0', 'a a@1.0.0', 'a/node_modules/c c@2.0.0', 'b b@1.0.0']);
      expect(() => layerPackages(sources)).toThrow(/missing, a dependency of b, is not installed/);
    } finally {
      rmSync(fixture, { recursive: true, force: true });
    }
  });
});
