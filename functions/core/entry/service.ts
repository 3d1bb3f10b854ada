import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AreaModule, ServiceSpec } from '../../../lib/manifest/types.ts';
import { portsForArea, type Ports } from '../../ports.ts';
import type { Logger } from '../logger.ts';

/** What a service receives when it starts: its area's view of the platform, a log, and the shutdown signal. */
export interface ServiceContext {
  /** Only the ports the area declares, as for its routes and schedules. */
  readonly ports: Ports;
  readonly log: Logger;
  /** Aborted when the platform begins to stop; `close()` is awaited right after, so long work can end itself first. */
  readonly signal: AbortSignal;
}

/**
 * A started service: how it answers its host, and how it stops. Paths (`req.url`) are relative to
 * the host in both wirings (locally the host's path prefix is removed).
 */
export interface RunningService {
  /** Plain HTTP requests under the host. @default 404 for every request */
  request?(req: IncomingMessage, res: ServerResponse): void | Promise<void>;
  /** Upgrade requests (WebSockets) under the host; the socket is the service's from here on. @default refused with 404 */
  upgrade?(req: IncomingMessage, socket: Duplex, head: Buffer): void | Promise<void>;
  /** Drains: stop taking connections, end the open ones, release what `start` took. Awaited at shutdown. */
  close(): Promise<void>;
}

/** A service entry point's handler module exports one of these (`<handler>.server.ts`). */
export interface ServiceDefinition {
  readonly kind: 'service';
  start(ctx: ServiceContext): Promise<RunningService>;
}

export function defineService(definition: { start(ctx: ServiceContext): RunningService | Promise<RunningService> }): ServiceDefinition {
  return { kind: 'service', start: async (ctx) => definition.start(ctx) };
}

/** A service entry point with its handler's definition and its area, as both wirings bind them. */
export interface BoundService {
  readonly spec: ServiceSpec;
  readonly definition: ServiceDefinition;
  readonly area: AreaModule;
}

/** A started service as the wirings drive it: a failing handler is answered and logged here, once for both. */
export interface StartedService {
  readonly spec: ServiceSpec;
  request(req: IncomingMessage, res: ServerResponse): void;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Aborts the signal, then awaits the service's `close()`; the same promise however often it is called. */
  stop(): Promise<void>;
}

/**
 * Starts one service the same way in both wirings: the area's view of the platform, a log naming
 * the entry point, and a signal aborted at shutdown.
 */
export async function startService(bound: BoundService, ports: Ports): Promise<StartedService> {
  const log = ports.log.child({ entryPoint: bound.spec.id });
  const shutdown = new AbortController();
  const running = await bound.definition.start({ ports: portsForArea(ports, bound.area), log, signal: shutdown.signal });
  log.info('service started', { host: bound.spec.host });
  let stopped: Promise<void> | undefined;
  return {
    spec: bound.spec,
    request(req, res) {
      if (running.request === undefined) return sendStatus(res, 404);
      const failed = (error: unknown) => {
        log.error('service request failed', { error, path: req.url });
        if (!res.headersSent) sendStatus(res, 500);
        else res.destroy();
      };
      try {
        Promise.resolve(running.request(req, res)).catch(failed);
      } catch (error) {
        failed(error);
      }
    },
    upgrade(req, socket, head) {
      if (running.upgrade === undefined) return refuseUpgrade(socket, 404);
      const failed = (error: unknown) => {
        log.error('service upgrade failed', { error, path: req.url });
        socket.destroy();
      };
      try {
        Promise.resolve(running.upgrade(req, socket, head)).catch(failed);
      } catch (error) {
        failed(error);
      }
    },
    stop() {
      stopped ??= (async () => {
        const started = ports.clock.now();
        shutdown.abort(new Error(`service ${bound.spec.id} is stopping`));
        try {
          await running.close();
          log.info('service stopped', { durationMs: ports.clock.now() - started });
        } catch (error) {
          // Shutdown goes on: the stores and the process must still stop.
          log.error('service close failed', { error });
        }
      })();
      return stopped;
    },
  };
}

const STATUS_TEXT: Record<number, string> = { 404: 'Not Found', 500: 'Internal Server Error', 503: 'Service Unavailable' };

function sendStatus(res: ServerResponse, status: number): void {
  const body = JSON.stringify({ error: STATUS_TEXT[status] ?? 'Error' });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Answers an upgrade nobody takes with a plain HTTP status and closes the socket. */
export function refuseUpgrade(socket: Duplex, status: 404 | 500 | 503): void {
  socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
}
