/**
 * Sessions handed to the runtime function (the cloud, docs/ARCHITECTURE.md "Voice agents"): the
 * bridge opens a slot with a one-time token, the runtime connects back on `/runtime/{sessionId}`
 * with it, and the session's JSON lines then travel over that WebSocket as they would over a local
 * process's stdin and stdout.
 *
 * With several bridge tasks the load balancer may bring the connect-back to a task that does not
 * hold the session. Each task records the sessions it opens in a directory (rendezvous.store.ts);
 * a task that gets a connect-back it has no slot for looks the session up and passes the upgrade,
 * bytes unchanged, to the holding task's private address, which checks the token as usual.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { SecretSet } from '../core/secret-scope.ts';
import { bidiEventQueue, parseBidiLine } from '../runtimes/bidi-local.ts';
import { PUBLIC_RUN_ENV, type BidiHandoff, type BidiSession } from '../runtimes/compute.ts';
import type { RendezvousDirectory } from './rendezvous.store.ts';

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
  /** A slot for the session (recorded in the directory first, when there are peers). */
  open(sessionId: string): Promise<HandoffSlot>;
  /** An upgrade on `/runtime/{sessionId}`: a runtime connecting back, with its token as a bearer credential. */
  accept(sessionId: string, req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

/** The other bridge tasks: this task's own address as they reach it, and where sessions are recorded. */
export interface RendezvousPeers {
  /** `host:port`. */
  readonly self: string;
  readonly directory: RendezvousDirectory;
  readonly now: () => number;
}

export function createRendezvous(wss: WebSocketServer, voiceUrl: string, options: { timeoutMs?: number; peers?: RendezvousPeers } = {}): Rendezvous {
  const { timeoutMs = 30_000, peers } = options;
  const slots = new Map<string, { token: Buffer; resolve(ws: WebSocket): void; reject(error: Error): void }>();
  const refuse = (socket: Duplex) => socket.end('HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  /** A connect-back with no slot here: to the task holding the session, or refused. */
  const passOn = async (peers: RendezvousPeers, sessionId: string, req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const address = await peers.directory.find(sessionId, peers.now()).catch(() => null);
    if (address === null || address === peers.self) return refuse(socket);
    relayUpgrade(address, req, socket, head);
  };
  return {
    async open(sessionId) {
      // Recorded before the runtime is invoked, so its connect-back finds the session from any task.
      if (peers !== undefined) await peers.directory.put(sessionId, peers.self, peers.now() + timeoutMs);
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
      if (slot === undefined && peers !== undefined) return void passOn(peers, sessionId, req, socket, head);
      if (slot === undefined || presented.length !== slot.token.length || !timingSafeEqual(presented, slot.token)) return refuse(socket);
      slots.delete(sessionId);
      wss.handleUpgrade(req, socket, head, (ws) => slot.resolve(ws));
    },
  };
}

/** Replays the upgrade request to `address` and joins the two connections byte for byte. */
function relayUpgrade(address: string, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const at = address.lastIndexOf(':');
  const upstream = connect({ host: address.slice(0, at), port: Number(address.slice(at + 1)) });
  const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1`];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
  upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
  if (head.length > 0) upstream.write(head);
  socket.pipe(upstream).pipe(socket);
  const close = () => {
    socket.destroy();
    upstream.destroy();
  };
  upstream.once('error', close).once('close', close);
  socket.once('error', close).once('close', close);
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
