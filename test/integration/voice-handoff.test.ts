/**
 * The voice bridge as it runs in the cloud: sessions handed to the runtime function (Lambda, tenant
 * isolation) through the real LambdaClient against the loopback Lambda stand-in running the
 * function's code (python-runtime behind the Web Adapter, run.sh); the runtime connects back to the
 * bridge over a WebSocket for the audio. The rest (agents, credits, keys, usage records) is the
 * local platform's.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLambdaCompute } from '../../functions/adapters/compute/aws.ts';
import { createVoiceBridge, type VoiceBridge } from '../../functions/voice/bridge.ts';
import type { Ports } from '../../functions/ports.ts';
import { startLambdaStandIn } from '../support/lambda-stand-in.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ECHO = readFileSync(join(ROOT, 'python-runtime/tests/fixtures/bidi_echo_agent.py'), 'utf8');

describe('voice sessions handed to the runtime function (the cloud path)', () => {
  let platform: TestPlatform;
  let standIn: Awaited<ReturnType<typeof startLambdaStandIn>>;
  let code: string;
  let server: Server;
  let bridge: VoiceBridge;
  let voiceUrl: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    code = mkdtempSync(join(tmpdir(), 'runtime-function-'));
    cpSync(join(ROOT, 'python-runtime'), code, { recursive: true, filter: (path) => !path.includes('__pycache__') });
    copyFileSync(join(ROOT, 'lib/cloud/runtime-assets/run.sh'), join(code, 'run.sh'));
    chmodSync(join(code, 'run.sh'), 0o755);
    const python = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim();
    standIn = await startLambdaStandIn({
      'platform-runtime': {
        runtime: 'web-adapter',
        codeDir: code,
        handler: 'run.sh',
        timeoutMs: 60_000,
        tenantIsolation: true,
        runtimePath: [dirname(python)],
        environment: { AWS_LWA_INVOKE_MODE: 'response_stream', AWS_LWA_READINESS_CHECK_PATH: '/health' },
      },
    });
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    voiceUrl = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ports: Ports = {
      ...platform.running.ports,
      compute: createLambdaCompute({ lambda: standIn.client(), functionName: 'platform-runtime' }),
      config: { ...platform.running.ports.config, VOICE_URL: voiceUrl } as unknown as Ports['config'],
    };
    bridge = createVoiceBridge(ports, platform.running.ports.log, {
      maxSessionSec: 60,
      idleTimeoutSec: 30,
      maxFrameBytes: 65536,
      maxSessionsPerUser: 3,
      billingTickSec: 10,
    });
    server.on('request', (req, res) => bridge.request(req, res));
    server.on('upgrade', (req, socket, head) => bridge.upgrade(req, socket, head));
  }, 120_000);

  afterAll(async () => {
    await bridge?.close();
    server?.close();
    await standIn?.close();
    if (code) rmSync(code, { recursive: true, force: true });
    await platform?.stop({ removeData: true });
  });

  it('runs the agent in the runtime function, in the owner’s environment, and relays audio and text both ways', async () => {
    // Prepare
    const owner = await createUser(platform, { alias: 'cloud-voice', credits: 100 });
    const created = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName: 'cloud-echo', description: 'd', sourceCode: ECHO, agentType: 'bidi', initialPrompt: 'hello from the cloud' },
    });
    const ws = new WebSocket(`${voiceUrl}/ws/${created.body.data.agentId}?token=${owner.token}`);
    const json: Record<string, any>[] = [];
    const audio: Buffer[] = [];
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    let wake = () => {};
    ws.on('message', (data, isBinary) => {
      if (isBinary) audio.push(data as Buffer);
      else json.push(JSON.parse(data.toString()));
      wake();
    });
    const until = async (condition: () => boolean) => {
      while (!condition()) await new Promise<void>((resolve) => (wake = resolve));
    };

    // Act
    await until(() => json.some((f) => f.type === 'ready'));
    await until(() => json.some((f) => f.type === 'transcript' && f.role === 'assistant'));
    ws.send(Buffer.alloc(3200, 1), { binary: true });
    await until(() => json.some((f) => f.type === 'transcript' && f.text === 'heard 3200 bytes') && audio.length > 0);
    ws.send(JSON.stringify({ type: 'end' }));
    await until(() => json.some((f) => f.type === 'session_end'));
    const code = await closed;

    // Assess
    expect(json.find((f) => f.type === 'transcript' && f.role === 'assistant')?.text).toBe('echo: hello from the cloud');
    expect(audio.length).toBeGreaterThan(0);
    expect(json.find((f) => f.type === 'session_end')?.credits).toBeGreaterThanOrEqual(2);
    expect(code).toBe(1000);
    // Lambda's tenant isolation: the session ran in an environment of the agent's owner.
    expect(standIn.environments('platform-runtime').map((env) => env.tenantId)).toEqual([owner.userId]);
  });

  it('passes a connect-back that reaches another bridge task on to the task holding the call', async () => {
    // Prepare: two bridge tasks; the runtime's connect-back goes to the address every task
    // publishes (here always task B, as a load balancer may), while the call is held by task A
    const servers = [createServer(), createServer()];
    for (const each of servers) await new Promise<void>((resolve) => each.listen(0, '127.0.0.1', resolve));
    const [addressA, addressB] = servers.map((each) => `127.0.0.1:${(each.address() as AddressInfo).port}`);
    const bridges = servers.map((each, i) => {
      const taskPorts: Ports = {
        ...platform.running.ports,
        compute: createLambdaCompute({ lambda: standIn.client(), functionName: 'platform-runtime' }),
        config: { ...platform.running.ports.config, VOICE_URL: `ws://${addressB}` } as unknown as Ports['config'],
      };
      const taskBridge = createVoiceBridge(taskPorts, platform.running.ports.log, {
        maxSessionSec: 60,
        idleTimeoutSec: 30,
        maxFrameBytes: 65536,
        maxSessionsPerUser: 3,
        billingTickSec: 10,
        peerAddress: i === 0 ? addressA! : addressB!,
      });
      each.on('request', (req, res) => taskBridge.request(req, res));
      each.on('upgrade', (req, socket, head) => taskBridge.upgrade(req, socket, head));
      return taskBridge;
    });
    const owner = await createUser(platform, { alias: 'two-tasks', credits: 100 });
    const created = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName: 'two-task-echo', description: 'd', sourceCode: ECHO, agentType: 'bidi' },
    });

    try {
      // Act: a call on task A, typed text, the end
      const ws = new WebSocket(`ws://${addressA}/ws/${created.body.data.agentId}?token=${owner.token}`);
      const json: Record<string, any>[] = [];
      let wake = () => {};
      ws.on('message', (data, isBinary) => {
        if (!isBinary) json.push(JSON.parse(data.toString()));
        wake();
      });
      const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
      const until = async (condition: () => boolean) => {
        while (!condition()) await new Promise<void>((resolve) => (wake = resolve));
      };
      await until(() => json.some((f) => f.type === 'ready'));
      ws.send(JSON.stringify({ type: 'text', text: 'across tasks' }));
      await until(() => json.some((f) => f.type === 'transcript' && f.role === 'assistant'));
      ws.send(JSON.stringify({ type: 'end' }));
      const code = await closed;
      const metricsA = await fetch(`http://${addressA}/metrics`, { headers: { authorization: `Bearer ${platform.adminToken}` } }).then(
        (r) => r.json() as Promise<Record<string, number>>,
      );

      // Assess: the runtime reached task A through task B, and the call ran there
      expect(json.find((f) => f.type === 'transcript' && f.role === 'assistant')?.text).toBe('echo: across tasks');
      expect(json.some((f) => f.type === 'session_end')).toBe(true);
      expect(code).toBe(1000);
      expect(metricsA.totalSessions).toBe(1);
    } finally {
      await Promise.all(bridges.map((each) => each.close()));
      for (const each of servers) each.close();
    }
  });

  it('refuses a runtime connecting back without the session’s token', async () => {
    // Act
    const ws = new WebSocket(`${voiceUrl}/runtime/00000000-0000-4000-8000-000000000000`, { headers: { authorization: 'Bearer guess' } });
    const status = await new Promise<number>((resolve) => ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));

    // Assess
    expect(status).toBe(401);
  });
});
