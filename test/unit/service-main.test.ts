/**
 * The main of a service container: the health check the load balancer polls is answered before the
 * service, everything else reaches the service, and SIGTERM (ECS stopping the task) drains it,
 * closing open WebSockets cleanly before the process exits.
 */
import { EventEmitter } from 'node:events';
import { WebSocket } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../functions/core/clock.ts';
import type { ServiceSpec } from '../../lib/manifest/types.ts';
import { createLogger } from '../../functions/core/logger.ts';
import { drainOnSignals, serveService, SERVICE_HEALTH_PATH, type ServedService } from '../../functions/service-main.ts';
import type { Ports } from '../../functions/ports.ts';
import voiceEcho from '../fixtures/sample-area/handlers/voice-echo.server.ts';
import { sampleArea } from '../fixtures/sample-area/sample.module.ts';

const spec = sampleArea.entryPoints.find((e): e is ServiceSpec => e.kind === 'service')!;

/** Just the ports the sample service touches, and a log the test reads. */
function fakePorts(lines: string[]): Ports {
  return {
    log: createLogger('debug', {}, (line) => lines.push(line)),
    clock: systemClock,
    agents: { listPublic: async () => ({ items: [{}, {}, {}], nextCursor: null }) },
  } as unknown as Ports;
}

/** Signals the test sends, and the exit code the main asks for. */
class FakeProcess extends EventEmitter {
  readonly exited: Promise<number>;
  exit!: (code: number) => void;
  constructor() {
    super();
    this.exited = new Promise((resolve) => (this.exit = resolve));
  }
}

describe('a service container', () => {
  let served: ServedService | undefined;
  afterEach(() => served?.drain());

  it('answers the health check itself and hands every other request to the service', async () => {
    // Prepare
    served = await serveService({ spec, definition: voiceEcho, area: sampleArea }, fakePorts([]), { port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${served.port}`;

    // Act
    const health = await fetch(base + SERVICE_HEALTH_PATH);
    const agents = await fetch(base + '/public-agents');
    const unknown = await fetch(base + '/nothing-here');

    // Assess
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect(await agents.json()).toEqual({ publicAgents: 3, path: '/public-agents' });
    expect(unknown.status).toBe(404);
  });

  it('drains on SIGTERM: the signal is aborted, open sockets are closed with 1001, then the process exits 0', async () => {
    // Prepare
    const lines: string[] = [];
    const ports = fakePorts(lines);
    served = await serveService({ spec, definition: voiceEcho, area: sampleArea }, ports, { port: 0, host: '127.0.0.1' });
    const control = new FakeProcess();
    drainOnSignals(served, ports, control);
    const socket = new WebSocket(`ws://127.0.0.1:${served.port}/echo`);
    await new Promise((resolve, reject) => {
      socket.addEventListener('open', resolve, { once: true });
      socket.addEventListener('error', reject, { once: true });
    });
    const closed = new Promise<number>((resolve) => socket.addEventListener('close', (event) => resolve(event.code), { once: true }));

    // Act
    control.emit('SIGTERM');
    const code = await control.exited;
    const closeCode = await closed;
    const afterwards = await fetch(`http://127.0.0.1:${served.port}${SERVICE_HEALTH_PATH}`).then(
      () => 'answered',
      () => 'refused',
    );

    // Assess
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(code).toBe(0);
    expect(closeCode).toBe(1001);
    expect(logged.find((l) => l['message'] === 'sample: voice service closing')).toMatchObject({ openSockets: 1, signalAborted: true });
    expect(logged.map((l) => l['message'])).toEqual(expect.arrayContaining(['service draining', 'service stopped']));
    expect(afterwards).toBe('refused');
  });
});
