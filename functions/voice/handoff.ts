/**
 * Sessions handed to the runtime function (the cloud, docs/ARCHITECTURE.md "Voice agents"): the
 * bridge opens a slot with a one-time token, the runtime connects back on `/runtime/{sessionId}`
 * with it, and the session's JSON lines then travel over that WebSocket as they would over a local
 * process's stdin and stdout.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { SecretSet } from '../core/secret-scope.ts';
import { bidiEventQueue, parseBidiLine } from '../runtimes/bidi-local.ts';
import { PUBLIC_RUN_ENV, type BidiHandoff, type BidiSession } from '../runtimes/compute.ts';

/** Caller audio queued for a runtime that does not keep up, beyond which frames are dropped. */
const MAX_BUFFERED_BYTES = 1_300_000;

export interface HandoffSlot {
  readonly handoff: BidiHandoff;
  /** The runtime's socket once it connected; rejects after `timeoutMs` or on `cancel`. */
  readonly connected: Promise<WebSocket>;
  cancel(reason: Error): void;
}

/** Where handed-over sessions meet their runtime. */
export interface Rendezvous {
  open(sessionId: string): HandoffSlot;
  /** An upgrade on `/runtime/{sessionId}`: a runtime connecting back, with its token as a bearer credential. */
  accept(sessionId: string, req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

export function createRendezvous(wss: WebSocketServer, voiceUrl: string, timeoutMs = 30_000): Rendezvous {
  const slots = new Map<string, { token: Buffer; resolve(ws: WebSocket): void; reject(error: Error): void }>();
  return {
    open(sessionId) {
      const token = randomBytes(32).toString('base64url');
      let slot!: { resolve(ws: WebSocket): void; reject(error: Error): void };
      const connected = new Promise<WebSocket>((resolve, reject) => (slot = { resolve, reject }));
      const timer = setTimeout(() => fail(new Error('the voice runtime did not connect back in time')), timeoutMs);
      timer.unref();
      const fail = (error: Error) => {
        clearTimeout(timer);
        if (slots.delete(sessionId)) slot.reject(error);
      };
      slots.set(sessionId, {
        token: Buffer.from(token),
        resolve: (ws) => {
          clearTimeout(timer);
          slots.delete(sessionId);
          slot.resolve(ws);
        },
        reject: fail,
      });
      return { handoff: { url: `${voiceUrl.replace(/\/+$/, '')}/runtime/${sessionId}`, token }, connected, cancel: fail };
    },
    accept(sessionId, req, socket, head) {
      const slot = slots.get(sessionId);
      const presented = Buffer.from(/^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
      if (slot === undefined || presented.length !== slot.token.length || !timingSafeEqual(presented, slot.token)) {
        socket.end('HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      slots.delete(sessionId);
      wss.handleUpgrade(req, socket, head, (ws) => slot.resolve(ws));
    },
  };
}

/** A session whose process runs in the runtime function, joined over `ws`; `invocation` ends with it. */
export function remoteBidiSession(ws: WebSocket, invocation: Promise<void>, env: Readonly<Record<string, string>>): BidiSession {
  const secrets = new SecretSet();
  secrets.addValuesOf(env, PUBLIC_RUN_ENV);
  const { push, sawEnd, events } = bidiEventQueue();
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    const event = parseBidiLine(data.toString(), secrets);
    if (event !== null) push(event);
  });
  ws.on('error', () => undefined);
  const exited = new Promise<void>((resolve) =>
    ws.once('close', () => {
      if (!sawEnd()) push({ type: 'error', code: 'RUNTIME_CRASHED', message: 'the voice runtime went away' });
      push({ type: 'end' });
      resolve();
    }),
  );
  const send = (message: object) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  };
  return {
    events,
    sendAudio(pcm) {
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) return false;
      send({ type: 'audio', audio: pcm.toString('base64') });
      return true;
    },
    sendText: (text) => send({ type: 'text', text }),
    end: () => send({ type: 'end' }),
    async kill() {
      if (ws.readyState !== ws.CLOSED) ws.terminate();
      await exited;
      // The runtime's invocation ends once its socket is gone (its process is stopped within
      // seconds); its outcome is not the session's, and the bill does not wait long for it.
      await Promise.race([invocation.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
    },
    exited,
  };
}
