import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RUNTIME_SOURCE_DIR, RUNTIME_PORT, RuntimeFunction, stageRuntimeAsset } from '../../lib/cloud/runtime-function.ts';
import { areaNamed, resourcesOf, routes } from '../../lib/manifest/index.ts';
import { json, logicalIdOf, roleStatements, synthPlatform, withScratchOutdir } from './synth-platform.ts';

/** The runtime function's resource in the platform template. */
function runtime() {
  const platform = synthPlatform();
  const template = json(platform.main);
  const fnId = logicalIdOf(platform, platform.stack.runtime.function);
  const roleId = logicalIdOf(platform, platform.stack.runtime.role);
  return { platform, template, fnId, roleId, props: template.Resources[fnId]!.Properties! };
}

describe('runtime function', () => {
  it('runs the Python runtime on 3.12, arm64, behind the Lambda Web Adapter in response-stream mode', () => {
    // Prepare
    const { props } = runtime();

    // Act
    const variables = props['Environment'].Variables;

    // Assess
    expect(props).toMatchObject({ Runtime: 'python3.12', Architectures: ['arm64'], Handler: 'run.sh', MemorySize: 3008, Timeout: 900 });
    expect(props['Layers']).toEqual([{ 'Fn::Join': ['', ['arn:aws:lambda:', { Ref: 'AWS::Region' }, ':753240598075:layer:LambdaAdapterLayerArm64:30']] }]);
    expect(variables).toEqual({
      AWS_LAMBDA_EXEC_WRAPPER: '/opt/bootstrap',
      AWS_LWA_INVOKE_MODE: 'response_stream',
      AWS_LWA_PORT: String(RUNTIME_PORT),
      AWS_LWA_READINESS_CHECK_PATH: '/health',
    });
  });

  it('isolates tenants: one execution environment per tenant id, and no function URL', () => {
    // Prepare
    const { props, template, fnId } = runtime();

    // Act
    const urls = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Url' && JSON.stringify(r.Properties).includes(`"${fnId}"`));

    // Assess
    expect(props['TenancyConfig']).toEqual({ TenantIsolationMode: 'PER_TENANT' });
    expect(urls).toEqual([]);
  });

  it('takes the adapter layer version as a prop', () => {
    // Prepare
    const layers = withScratchOutdir((outdir) => {
      const stack = new Stack(new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } }), 'RuntimeOnly');
      new RuntimeFunction(stack, 'Runtime', { webAdapterLayerVersion: 31 });

      // Act
      return Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function')).map((f) => f['Properties'].Layers);
    });

    // Assess
    expect(JSON.stringify(layers)).toContain(':753240598075:layer:LambdaAdapterLayerArm64:31"');
  });

  it("has a role that can write its own logs and nothing else (no model calls: runs use their owner's keys)", () => {
    // Prepare
    const { template, roleId } = runtime();
    const role = template.Resources[roleId]!;

    // Act
    const statements = roleStatements(template, roleId);

    // Assess
    expect(role.Properties?.['ManagedPolicyArns']).toBeUndefined();
    expect(role.Properties?.['Policies']).toBeUndefined();
    expect(statements).toEqual([
      { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [expect.stringMatching(/^RuntimeLogs/), 'Arn'] } },
    ]);
  });

  it('is given no access to the tables, bucket or key: only its own policy and function name the role', () => {
    // Prepare
    const { template, roleId, fnId } = runtime();

    // Act
    const naming = Object.entries(template.Resources)
      .filter(([id]) => id !== roleId)
      .filter(([, r]) => JSON.stringify(r).includes(`"${roleId}"`))
      .map(([id, r]) => `${r.Type} ${id}`);

    // Assess
    const policies = Object.entries(template.Resources).filter(
      ([, r]) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties?.['Roles']).includes(`"${roleId}"`),
    );
    expect(policies).toHaveLength(1);
    expect(naming.sort()).toEqual([`AWS::IAM::Policy ${policies[0]![0]}`, `AWS::Lambda::Function ${fnId}`].sort());
  });

  it('may be invoked by the functions of areas using the compute port, which know its name; no other', () => {
    // Prepare
    const { platform, template, fnId } = runtime();
    const { areas, streams, fallback } = platform.stack.functions;
    const mcpRuntimeId = logicalIdOf(platform, platform.stack.mcpRuntime.function);
    const agentRunsId = logicalIdOf(platform, areas.get('agents')!.function);
    const uses = (routes: readonly { area: string }[]) => resourcesOf([...new Set(routes.map((r) => r.area))].map(areaNamed)).runtimes.has('python');
    const all = [
      ...[...areas].map(([area, fn]) => ({ fn, invokes: uses([{ area }]) })),
      ...[...streams].map(([host, s]) => ({ fn: s.function, invokes: uses(routes.filter((r) => r.host === host && r.mode === 'streaming')) })),
    ];
    const invokers = all.filter((f) => f.invokes).map((f) => f.fn);
    const others = [fallback, ...all.filter((f) => !f.invokes).map((f) => f.fn)];
    const lambdaActions = (fn: (typeof invokers)[number]) =>
      roleStatements(template, logicalIdOf(platform, fn.function.role!)).filter((s) => [s.Action].flat().some((a) => a.startsWith('lambda:')));

    // Act: the MCP runtime, which the mcp area may also invoke, and the agents function, which cron
    // and channels invoke to run agents, left aside (their own tests).
    const variables = (fn: (typeof invokers)[number]) => template.Resources[logicalIdOf(platform, fn.function)]!.Properties?.['Environment'].Variables;
    const invoked = (fn: (typeof invokers)[number]) =>
      lambdaActions(fn)
        .flatMap((s) => [s.Resource].flat().map((resource) => ({ action: s.Action, resource })))
        .filter((r) => !JSON.stringify(r.resource).includes(`"${mcpRuntimeId}"`) && !JSON.stringify(r.resource).includes(`"${agentRunsId}"`));

    // Assess: lambda:InvokeFunction also authorizes InvokeWithResponseStream, which has no IAM action.
    expect(invokers.length).toBeGreaterThan(0);
    for (const fn of invokers) {
      expect(variables(fn).RUNTIME_FUNCTION_NAME).toEqual({ Ref: fnId });
      expect(invoked(fn)).toEqual([
        { action: 'lambda:InvokeFunction', resource: { 'Fn::GetAtt': [fnId, 'Arn'] } },
        { action: 'lambda:InvokeFunction', resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [fnId, 'Arn'] }, ':*']] } },
      ]);
    }
    // The platform MCP server runs actions (run_action) through the same execution service.
    expect(invokers.map((fn) => fn.node.id).sort()).toEqual(['Area-actions', 'Area-agents', 'Area-platform-tools', 'Stream-stream']);
    for (const fn of others) {
      expect(variables(fn).RUNTIME_FUNCTION_NAME).toBeUndefined();
      expect(invoked(fn)).toEqual([]);
    }
  });
});

describe('runtime asset', () => {
  function staged(): string {
    const dir = mkdtempSync(join(tmpdir(), 'runtime-asset-'));
    stageRuntimeAsset(DEFAULT_RUNTIME_SOURCE_DIR, dir);
    return dir;
  }

  function allPaths(dir: string, prefix = ''): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? [`${prefix}${e.name}/`, ...allPaths(join(dir, e.name), `${prefix}${e.name}/`)] : [`${prefix}${e.name}`],
    );
  }

  it('is the runtime package without tests, README and byte code, plus an executable run.sh', () => {
    // Prepare
    const dir = staged();
    try {
      // Act
      const paths = allPaths(dir);

      // Assess
      expect(paths).toContain('platform_runtime/server.py');
      expect(paths).toContain('run.sh');
      expect(paths.filter((p) => p.startsWith('tests/') || p === 'README.md' || p.includes('__pycache__') || p.endsWith('.pyc'))).toEqual([]);
      expect(statSync(join(dir, 'run.sh')).mode & 0o111).toBe(0o111);
      const script = readFileSync(join(dir, 'run.sh'), 'utf8');
      expect(script).toMatch(/^#!\/bin\/sh\n/);
      expect(script).toContain('exec python3 -m platform_runtime.server --port "${AWS_LWA_PORT:-8080}" --host 127.0.0.1');
      expect(spawnSync('sh', ['-n', join(dir, 'run.sh')]).status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts the runtime server from run.sh alone, answering the adapter readiness check', async () => {
    // Prepare: a free port, as the adapter would pass it in AWS_LWA_PORT.
    const dir = staged();
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const server = spawn(join(dir, 'run.sh'), [], {
      cwd: tmpdir(),
      env: { PATH: process.env['PATH'], AWS_LWA_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      // Act: asked until it answers or exits, however long a loaded machine takes to start Python.
      let status = 0;
      while (status !== 200 && server.exitCode === null && server.signalCode === null) {
        status = await fetch(`http://127.0.0.1:${port}/health`).then(
          (r) => r.status,
          () => 0,
        );
        if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      }

      // Assess
      expect(status).toBe(200);
    } finally {
      server.kill('SIGTERM');
      await new Promise((resolve) => (server.exitCode !== null ? resolve(null) : server.once('exit', resolve)));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is bundled by `cdk synth` only: tests synthesize it without staging', () => {
    // Prepare
    const { outdir } = synthPlatform();

    // Act: what the synth staged (the voice service's image and CDK's own custom-resource handlers are staged at synth by design)
    const staged = readdirSync(outdir).filter((name) => name.startsWith('asset.'));

    // Assess: none of it is the Python runtime, which stays the source directory until `cdk synth` bundles it
    expect(staged.filter((name) => existsSync(join(outdir, name, 'platform_runtime')))).toEqual([]);
    expect(existsSync(join(DEFAULT_RUNTIME_SOURCE_DIR, 'platform_runtime', 'server.py'))).toBe(true);
  });
});
