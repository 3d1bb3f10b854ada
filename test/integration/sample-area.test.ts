/**
 * Adding an area is its folder and its entry in the module list: a sample area (test/fixtures)
 * joins the real ones on the local platform, serves its route, runs its schedule through the
 * in-process scheduler and its service on the voice host, with its declared port and nothing else.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { areas } from '../../lib/manifest/index.ts';
import { sampleArea, serviceOnRoutedHostArea, undeclaredSampleArea } from '../fixtures/sample-area/sample.module.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

/** Settles when the socket opens, or fails on its error. */
function opened(socket: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error('WebSocket failed to open')), { once: true });
  });
}

/** The data of the socket's next message. */
function nextMessage(socket: WebSocket): Promise<unknown> {
  return new Promise((resolve) => socket.addEventListener('message', (event) => resolve(event.data), { once: true }));
}

/** The code the socket closes with. */
function closeCode(socket: WebSocket): Promise<number> {
  return new Promise((resolve) => socket.addEventListener('close', (event) => resolve(event.code), { once: true }));
}

/** Where discovery says the voice host is (ws://.../voice locally). */
async function voiceUrl(platform: TestPlatform): Promise<string> {
  const discovery = await platform.api('GET', '/.well-known/platform.json');
  return discovery.body.data.voiceUrl as string;
}

describe('a sample area added to the module list', () => {
  let platform: TestPlatform;
  const logLines: string[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform({ areas: [...areas.filter((area) => area.name !== 'voice'), sampleArea], logLines });
  });
  afterAll(() => platform.stop({ removeData: true }));

  it('serves its route and runs its schedule with the port it declares', async () => {
    // Prepare: one public agent for the sample to count
    const user = await createUser(platform, { alias: 'sample-owner' });
    const created = await platform.api('POST', '/agent/create', {
      token: user.token,
      body: {
        agentName: 'counted',
        description: 'public',
        sourceCode: readFileSync(new URL('../../python-runtime/tests/fixtures/echo_agent.py', import.meta.url), 'utf8'),
        visibility: 'public',
      },
    });

    // Act
    const counted = await platform.api('GET', '/sample/public-agents', { token: user.token });
    // The schedule's own timer may have run it before (every 5 minutes): only this run's lines count.
    const linesBefore = logLines.length;
    const outcome = await platform.running.scheduler.trigger('sample.log-public-agents');

    // Assess
    expect(created.status).toBe(200);
    expect(counted.status).toBe(200);
    expect(counted.body.data).toEqual({ publicAgents: 1 });
    expect(outcome).toBe('succeeded');
    const line = logLines
      .slice(linesBefore)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['message'] === 'sample: public agents counted');
    expect(line).toMatchObject({ publicAgents: 1, entryPoint: 'sample.log-public-agents' });
  });

  it('fails a scheduled run that uses a port its module does not declare, and logs why', async () => {
    // Prepare
    const lines: string[] = [];
    const other = await startTestPlatform({ areas: [...areas, undeclaredSampleArea], logLines: lines });

    // Act
    const outcome = await other.running.scheduler.trigger('sample.log-public-agents').finally(() => other.stop({ removeData: true }));

    // Assess
    expect(outcome).toBe('failed');
    expect(lines.join('\n')).toContain('The sample area used the agents port without declaring it');
  });

  it('serves the voice host from its service: HTTP through its declared port and a WebSocket echo, at the URL discovery reports', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'voice-caller' });
    const voice = await voiceUrl(platform);
    const socket = new WebSocket(`${voice}/echo`);
    const open = opened(socket);

    // Act
    const viaService = await fetch(`${voice.replace(/^ws/, 'http')}/public-agents`);
    const viaRoute = await platform.api('GET', '/sample/public-agents', { token: user.token });
    await open;
    const echoed = nextMessage(socket);
    socket.send('hello over the voice host');
    const message = await echoed;
    const closed = closeCode(socket);
    socket.close(1000);
    const code = await closed;

    // Assess: the service saw the host-relative path, and counts what the route counts
    expect(voice).toBe(`${platform.url.replace(/^http/, 'ws')}/voice`);
    expect(viaService.status).toBe(200);
    expect(await viaService.json()).toEqual({ publicAgents: viaRoute.body.data.publicAgents, path: '/public-agents' });
    expect(message).toBe('hello over the voice host');
    expect(code).toBe(1000);
  });

  it('drains its service when the platform closes: the signal is aborted, then close() ends the open sockets', async () => {
    // Prepare
    const lines: string[] = [];
    const other = await startTestPlatform({ areas: [...areas.filter((area) => area.name !== 'voice'), sampleArea], logLines: lines });
    const socket = new WebSocket(`${await voiceUrl(other)}/echo`);
    await opened(socket);
    const closed = closeCode(socket);

    // Act
    await other.stop({ removeData: true });
    const code = await closed;

    // Assess
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(code).toBe(1001);
    expect(logged.find((l) => l['message'] === 'sample: voice service closing')).toMatchObject({
      openSockets: 1,
      signalAborted: true,
      entryPoint: 'sample.voice-echo',
    });
    expect(logged.find((l) => l['message'] === 'service stopped')).toMatchObject({ entryPoint: 'sample.voice-echo' });
  });

  it('refuses to start when a service shares its host with routes, naming both', async () => {
    // Prepare
    const dataDir = await mkdtemp(join(tmpdir(), 'platform-test-'));

    // Act
    const started = startTestPlatform({ dataDir, areas: [...areas, serviceOnRoutedHostArea] });
    const outcome = await started.then(
      (running) => running.stop().then(() => null),
      (error: unknown) => error as Error,
    );
    await rm(dataDir, { recursive: true, force: true });

    // Assess
    expect(outcome?.message).toMatch(/^Service sample\.voice-echo serves the stream host, which also has routes \(agents\.[a-z-]+ (GET|POST) \/agent\//);
    expect(outcome?.message).toContain('a host is served either by routes or by one service');
  });
});
