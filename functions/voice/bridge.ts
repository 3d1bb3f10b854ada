/**
 * The voice bridge (SPEC 4.2): WebSockets from browsers (`/ws/{agentId}`, PCM16LE 16 kHz in and
 * 24 kHz out) and from Twilio Media Streams (`/ws/twilio/{agentId}`, μ-law 8 kHz JSON frames), each
 * joined to one agent process (`Compute.openBidiSession`) for the length of the call.
 *
 * Robustness first: every session has bounded queues of its own (audio to the caller is paced to
 * real time plus a short lead and capped; caller audio to a process that does not keep up is
 * dropped), so one slow client or agent never holds up another; frames are capped in size; a
 * session ends at its maximum length, after an idle spell, when its balance runs out, or when
 * either side goes away, and whatever ends it, the process is stopped, the session is billed and
 * one usage record is written.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { resolveActor } from '../core/auth/resolve-actor.ts';
import { AccessDeniedError, AuthenticationRequiredError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import { lineageOf, LINEAGE_HEADER } from '../core/http/lineage.ts';
import type { Logger } from '../core/logger.ts';
import type { Ports } from '../ports.ts';
import type { BidiEvent } from '../runtimes/compute.ts';
import { mulawToPcm, pcmBytes, pcmSamples, pcmToMulaw, Resampler } from './audio.ts';
import { createRendezvous } from './handoff.ts';
import { authorizeVoice, channelInitialPrompt, CLOSE, startVoiceSession, VoiceRefusal, type VoiceSession } from './voice-session.service.ts';

/** The bridge's limits (voice.module.ts settings). */
export interface BridgeSettings {
  readonly maxSessionSec: number;
  readonly idleTimeoutSec: number;
  readonly maxFrameBytes: number;
  readonly maxSessionsPerUser: number;
  readonly billingTickSec: number;
  /** How long a caller has to authenticate with a first message (SPEC: 10 s). */
  readonly authTimeoutMs?: number;
  /** Sockets not yet authenticated, from one address and in all: one more is answered 429 before the handshake (16 and 256 by default). */
  readonly maxUnauthenticatedPerAddress?: number;
  readonly maxUnauthenticated?: number;
  /** How long the agent's process may take to start (`started`) before the session ends; 30 s by default. */
  readonly startTimeoutSec?: number;
  /**
   * This task's `host:port` as the other bridge tasks reach it, where sessions are handed to the
   * runtime function and several tasks may run: connect-backs that reach the wrong task are passed on.
   */
  readonly peerAddress?: string;
}

const INPUT_RATE = 16000;
const BROWSER_OUTPUT_RATE = 24000;
const PHONE_RATE = 8000;
/** Audio sent ahead of real time: enough to ride out jitter, little enough that barge-in cuts speech short. */
const LEAD_MS = 400;
/** Audio a session may hold for its caller; beyond it the oldest is dropped (a client far behind). */
const MAX_QUEUED_MS = 120_000;
/** Bytes a socket may have unsent before the session stops writing to it and waits. */
const MAX_SOCKET_BUFFER = 256 * 1024;
/** Browser frames: at most 20 ms each, so an interruption cuts within a frame. */
const FRAME_MS = 20;
/** After the caller ends, how long the agent has to stop by itself before its process is killed. */
const STOP_GRACE_MS = 3000;
/** Largest frame read from a Twilio socket before its `start` (a `start` with its parameters is well under it). */
const MAX_UNAUTHENTICATED_FRAME_BYTES = 16 * 1024;
/** Caller frames kept while the session starts (about 5 s of 20 ms frames); more are dropped. */
const MAX_EARLY_FRAMES = 250;
/** How long a refused socket stays open (not read) after its close frame, before it is cut. */
const REFUSED_SOCKET_GRACE_MS = 1000;
/** Past the end of a phone call's last audio, how long to wait for Twilio's echo of the end mark. */
const END_MARK_GRACE_MS = 2000;

/** What `/metrics` shows operators: counts only, no tenant data. */
interface BridgeCounters {
  activeConnections: number;
  activeSessions: number;
  totalSessions: number;
  refusedSessions: number;
  audioFramesIn: number;
  audioFramesOut: number;
  droppedFramesIn: number;
  droppedFramesOut: number;
  interruptions: number;
  /** Upgrades answered 429: too many sockets not yet authenticated, from one address or in all. */
  refusedUnauthenticated: number;
}

export interface VoiceBridge {
  request(req: IncomingMessage, res: ServerResponse): void;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): Promise<void>;
}

type Channel = 'browser' | 'twilio';

/**
 * Everything a server may send Twilio on a Media Stream ("Send WebSocket messages to Twilio",
 * https://www.twilio.com/docs/voice/media-streams/websocket-messages); nothing else reaches it.
 */
type TwilioMessage =
  | { readonly event: 'media'; readonly streamSid: string; readonly media: { readonly payload: string } }
  | { readonly event: 'mark'; readonly streamSid: string; readonly mark: { readonly name: string } }
  | { readonly event: 'clear'; readonly streamSid: string };

export function createVoiceBridge(ports: Ports, log: Logger, settings: BridgeSettings): VoiceBridge {
  const wss = new WebSocketServer({ noServer: true, maxPayload: settings.maxFrameBytes });
  const counters: BridgeCounters = {
    refusedUnauthenticated: 0,
    activeConnections: 0,
    activeSessions: 0,
    totalSessions: 0,
    refusedSessions: 0,
    audioFramesIn: 0,
    audioFramesOut: 0,
    droppedFramesIn: 0,
    droppedFramesOut: 0,
    interruptions: 0,
  };
  // Runtimes of handed-over sessions (the cloud) connect back here; the URL is the host's own.
  const peers = settings.peerAddress === undefined ? undefined : { self: settings.peerAddress, directory: ports.voiceRendezvous, now: () => ports.clock.now() };
  const rendezvous = ports.config.VOICE_URL !== undefined ? createRendezvous(wss, ports.config.VOICE_URL, peers === undefined ? {} : { peers }) : undefined;
  const sessionsByUser = new Map<string, number>();
  const connections = new Set<Connection>();
  /** Sockets not yet authenticated, by remote address (a caller may open them for free, so they are capped). */
  const unauthenticated = new Map<string, number>();
  let unauthenticatedTotal = 0;
  let closing = false;

  /**
   * `/health` tells anyone whether this task takes calls, and nothing else; `/metrics` (the counters,
   * which describe the whole platform's voice traffic) answers platform operators only (401
   * without credentials, 403 for other accounts).
   */
  function request(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://voice').pathname;
    const json = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res
        .writeHead(status, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        })
        .end(text);
    };
    if (req.method === 'GET' && path === '/health') return json(closing ? 503 : 200, { status: closing ? 'draining' : 'ok' });
    if (req.method === 'GET' && path === '/metrics') {
      void authorizeOperator(req, ports).then(
        (refusal) =>
          refusal === null ? json(200, { ...counters, uptimeSec: Math.round(process.uptime()) }) : json(refusal.status, { error: refusal.message }),
        (error: unknown) => {
          log.error('voice metrics request failed', { error });
          json(500, { error: 'Internal error' });
        },
      );
      return;
    }
    json(404, { error: 'Not found' });
  }

  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://voice');
    const runtime = /^\/runtime\/([0-9a-f-]{36})$/.exec(url.pathname);
    if (runtime !== null && rendezvous !== undefined) return rendezvous.accept(runtime[1]!, req, socket, head);
    const match = /^\/ws\/(?:(twilio)\/)?([^/]+)$/.exec(url.pathname);
    if (match === null || closing) {
      socket.end(`HTTP/1.1 ${closing ? '503 Service Unavailable' : '404 Not Found'}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    const channel: Channel = match[1] === 'twilio' ? 'twilio' : 'browser';
    const agentId = decodeURIComponent(match[2]!);
    const address = req.socket.remoteAddress ?? 'unknown';
    const fromAddress = unauthenticated.get(address) ?? 0;
    if (fromAddress >= (settings.maxUnauthenticatedPerAddress ?? 16) || unauthenticatedTotal >= (settings.maxUnauthenticated ?? 256)) {
      counters.refusedUnauthenticated++;
      socket.end('HTTP/1.1 429 Too Many Requests\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    // Counted from the upgrade, so sockets still in their handshake count too.
    unauthenticated.set(address, fromAddress + 1);
    unauthenticatedTotal++;
    let counted = true;
    const authenticated = () => {
      if (!counted) return;
      counted = false;
      unauthenticatedTotal--;
      const left = (unauthenticated.get(address) ?? 1) - 1;
      if (left === 0) unauthenticated.delete(address);
      else unauthenticated.set(address, left);
    };
    socket.once('close', authenticated);
    wss.handleUpgrade(req, socket, head, (ws) => {
      const connection = new Connection(ws, channel, agentId, url.searchParams.get('token'), req.headers[LINEAGE_HEADER], authenticated);
      connections.add(connection);
      counters.activeConnections++;
      ws.once('close', () => {
        counters.activeConnections--;
        connections.delete(connection);
      });
      connection.begin();
    });
  }

  /** One WebSocket: authentication, then one session, then the close. */
  class Connection {
    private session: VoiceSession | null = null;
    private state: 'auth' | 'starting' | 'live' | 'ending' | 'closed' = 'auth';
    private authTimer: NodeJS.Timeout | null = null;
    private startTimer: NodeJS.Timeout | null = null;
    private idleTimer: NodeJS.Timeout | null = null;
    private lengthTimer: NodeJS.Timeout | null = null;
    private userId: string | null = null;
    private streamSid: string | null = null;
    /** The phone channel the call came through (the TwiML's `channelId` parameter), for its initialPrompt. */
    private channelId: string | null = null;
    private error: { code: string; message: string } | undefined;
    private closeWith: { code: number; reason: string } = { code: 1000, reason: 'session ended' };
    private turns = 0;
    private readonly inbound: Resampler | null;
    private outbound: Resampler | null = null;
    private readonly out: PacedAudio;
    private mulawTail: Buffer = Buffer.alloc(0);
    /** Frames that came before the session started (bounded), sent once it runs. */
    private early: Buffer[] = [];
    /**
     * Caller audio between the credentials and their check, kept as it came (base64 μ-law from
     * Twilio, PCM from browsers) and decoded only once they are good: no audio work for strangers.
     */
    private unverified: (string | Buffer)[] = [];
    private verified = false;
    private ended: Promise<void> | null = null;
    /** Twilio marks the bridge waits for, by name: Twilio echoes a mark once the audio before it has played. */
    private readonly marks = new Map<string, () => void>();
    private callerStopped = false;

    constructor(
      private readonly ws: WebSocket,
      private readonly channel: Channel,
      private readonly agentId: string,
      private readonly queryToken: string | null,
      private readonly lineageHeader: string | string[] | undefined,
      /** Releases the socket's place among the unauthenticated ones (idempotent). */
      private readonly onAuthenticated: () => void,
    ) {
      this.inbound = channel === 'twilio' ? new Resampler(PHONE_RATE, INPUT_RATE) : null;
      const bytesPerMs = channel === 'twilio' ? PHONE_RATE / 1000 : (BROWSER_OUTPUT_RATE * 2) / 1000;
      this.out = new PacedAudio(
        bytesPerMs,
        (frame) => this.sendAudioFrame(frame),
        () => ws.bufferedAmount < MAX_SOCKET_BUFFER,
        () => counters.droppedFramesOut++,
      );
    }

    begin(): void {
      this.ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
      this.ws.on('close', () => this.onClose());
      this.ws.on('error', (error) => log.debug('voice socket error', { error }));
      if (this.queryToken !== null) {
        void this.authorize(this.queryToken);
        return;
      }
      this.authTimer = setTimeout(() => this.refuse(new VoiceRefusal(CLOSE.unauthenticated, 'authentication timed out')), settings.authTimeoutMs ?? 10_000);
      this.authTimer.unref();
    }

    private onMessage(data: RawData, isBinary: boolean): void {
      if (this.state === 'closed' || this.state === 'ending') return;
      this.touch();
      if (this.channel === 'twilio') return this.onTwilio(data, isBinary);
      if (isBinary) {
        if (this.state === 'auth') return this.refuse(new VoiceRefusal(CLOSE.unauthenticated, 'authenticate first'));
        if (!this.verified) return this.keepUnverified(Buffer.from(toBuffer(data)));
        return this.audioIn(toBuffer(data));
      }
      let message: { type?: unknown; token?: unknown; text?: unknown };
      try {
        message = JSON.parse(toBuffer(data).toString('utf8')) as typeof message;
      } catch {
        return this.sendJson({ type: 'error', code: 'INVALID_MESSAGE', message: 'text frames must be JSON' });
      }
      if (this.state === 'auth') {
        if (message.type !== 'auth' || typeof message.token !== 'string') return this.refuse(new VoiceRefusal(CLOSE.unauthenticated, 'authenticate first'));
        void this.authorize(message.token);
        return;
      }
      if (message.type === 'text' && typeof message.text === 'string' && message.text.length > 0) {
        this.turns++;
        if (this.session !== null) this.session.process.sendText(message.text.slice(0, 10_000));
        return;
      }
      if (message.type === 'end') return void this.end();
      if (message.type === 'auth') return;
      this.sendJson({ type: 'error', code: 'INVALID_MESSAGE', message: 'expected {"type":"text","text"} or {"type":"end"}' });
    }

    private onTwilio(data: RawData, isBinary: boolean): void {
      if (isBinary) return;
      // Before the token, only Twilio's small `connected` and `start` frames are due: a larger one is not parsed.
      if (this.state === 'auth' && rawLength(data) > MAX_UNAUTHENTICATED_FRAME_BYTES)
        return this.refuse(new VoiceRefusal(CLOSE.unauthenticated, 'authenticate first'));
      let message: {
        event?: unknown;
        streamSid?: unknown;
        start?: { streamSid?: unknown; customParameters?: Record<string, unknown> };
        media?: { payload?: unknown };
        mark?: { name?: unknown };
      };
      try {
        message = JSON.parse(toBuffer(data).toString('utf8')) as typeof message;
      } catch {
        return;
      }
      switch (message.event) {
        case 'mark': {
          const name = message.mark?.name;
          if (typeof name === 'string') this.marks.get(name)?.();
          return;
        }
        case 'connected':
        case 'dtmf':
          return;
        case 'start': {
          const sid = message.start?.streamSid ?? message.streamSid;
          if (typeof sid === 'string') this.streamSid = sid;
          if (this.state !== 'auth') return;
          const token = message.start?.customParameters?.['token'];
          const channelId = message.start?.customParameters?.['channelId'];
          if (typeof channelId === 'string') this.channelId = channelId;
          if (typeof token !== 'string') return this.refuse(new VoiceRefusal(CLOSE.unauthenticated, 'no token in start.customParameters or the query'));
          void this.authorize(token);
          return;
        }
        case 'media': {
          // Twilio sends `start` (with the token) before any audio: audio first is not a call.
          if (this.state === 'auth') return this.refuse(new VoiceRefusal(CLOSE.unauthenticated, 'authenticate first'));
          if (typeof message.media?.payload !== 'string') return;
          if (!this.verified) return this.keepUnverified(message.media.payload);
          return this.twilioAudioIn(message.media.payload);
        }
        case 'stop':
          // The call is over: nothing more will be played, so the end does not wait for it.
          this.callerStopped = true;
          return void this.end();
        default:
          return;
      }
    }

    private twilioAudioIn(payload: string): void {
      const pcm = this.inbound!.push(mulawToPcm(Buffer.from(payload, 'base64')));
      this.audioIn(pcmBytes(pcm));
    }

    private keepUnverified(frame: string | Buffer): void {
      if (this.unverified.length < MAX_EARLY_FRAMES) this.unverified.push(frame);
      else counters.droppedFramesIn++;
    }

    /** The credentials are good: the audio that came meanwhile is decoded now, in order. */
    private verify(): void {
      this.verified = true;
      this.onAuthenticated();
      const frames = this.unverified;
      this.unverified = [];
      for (const frame of frames) {
        if (typeof frame === 'string') this.twilioAudioIn(frame);
        else this.audioIn(frame);
      }
    }

    private audioIn(pcm: Buffer): void {
      if (pcm.length === 0) return;
      counters.audioFramesIn++;
      if (this.session === null) {
        // Caller audio while the agent starts: kept (up to about 5 s) rather than lost.
        if (this.early.length < MAX_EARLY_FRAMES) this.early.push(Buffer.from(pcm));
        else counters.droppedFramesIn++;
        return;
      }
      if (!this.session.process.sendAudio(pcm)) counters.droppedFramesIn++;
    }

    private async authorize(token: string): Promise<void> {
      if (this.state !== 'auth') return;
      this.state = 'starting';
      if (this.authTimer) clearTimeout(this.authTimer);
      const lineage = lineageOf(uuid(), typeof this.lineageHeader === 'string' ? this.lineageHeader : undefined);
      let userCounted = false;
      try {
        const { actor, agent, maxSessionSec: embedLimitSec } = await authorizeVoice(token, this.agentId, ports);
        this.verify();
        const open = sessionsByUser.get(actor.userId) ?? 0;
        if (open >= settings.maxSessionsPerUser)
          throw new VoiceRefusal(CLOSE.tooManySessions, `at most ${settings.maxSessionsPerUser} voice sessions at once per user`);
        sessionsByUser.set(actor.userId, open + 1);
        this.userId = actor.userId;
        userCounted = true;
        const initialPrompt = this.channelId === null ? null : await channelInitialPrompt(this.channelId, actor, agent.agentId, ports);
        if (this.isGone()) return this.release();
        const session = await startVoiceSession(actor, agent, ports, settings, lineage, log.child({ requestId: lineage.requestId }), {
          ...(rendezvous !== undefined ? { rendezvous } : {}),
          ...(initialPrompt !== null ? { initialPrompt } : {}),
        });
        this.session = session;
        counters.activeSessions++;
        counters.totalSessions++;
        session.exhausted.addEventListener('abort', () =>
          this.endWith(
            { code: 'INSUFFICIENT_CREDITS', message: 'the balance cannot pay for more voice time' },
            { code: CLOSE.noCredits, reason: 'insufficient credits' },
          ),
        );
        // An embed's remaining voice minutes end the session sooner than the bridge's own limit.
        const quotaFirst = embedLimitSec !== undefined && embedLimitSec < settings.maxSessionSec;
        this.lengthTimer = setTimeout(
          () =>
            this.endWith(
              quotaFirst
                ? { code: 'QUOTA_EXCEEDED', message: 'this widget has used up its voice minutes' }
                : { code: 'SESSION_LIMIT', message: `a voice session lasts at most ${settings.maxSessionSec} s` },
            ),
          (quotaFirst ? embedLimitSec : settings.maxSessionSec) * 1000,
        );
        this.lengthTimer.unref();
        // The idle countdown starts once the session is live, so a start that hangs is ended here.
        const startTimeoutSec = settings.startTimeoutSec ?? 30;
        this.startTimer = setTimeout(
          () =>
            this.endWith(
              { code: 'RUNTIME_UNAVAILABLE', message: `the voice agent did not start within ${startTimeoutSec} s` },
              { code: CLOSE.unavailable, reason: 'the agent did not start' },
            ),
          startTimeoutSec * 1000,
        );
        this.startTimer.unref();
        void this.pump(session);
        if (this.isGone()) return void this.end(true);
      } catch (error) {
        if (userCounted) this.release();
        if (error instanceof VoiceRefusal) return this.refuse(error);
        log.error('voice session failed to open', { error });
        return this.refuse(new VoiceRefusal(CLOSE.unavailable, 'internal error'));
      }
    }

    /** Forwards the process's events to the caller until its `end`; then the session ends. */
    private async pump(session: VoiceSession): Promise<void> {
      try {
        for await (const event of session.process.events) {
          if (event.type === 'end') break;
          this.onAgentEvent(event, session);
        }
      } catch (error) {
        log.error('voice session stream failed', { error });
      }
      await this.end(true);
    }

    private onAgentEvent(event: BidiEvent, session: VoiceSession): void {
      switch (event.type) {
        case 'started':
          if (this.state !== 'starting') return;
          this.state = 'live';
          if (this.startTimer) clearTimeout(this.startTimer);
          this.touch();
          if (this.channel === 'browser') this.sendJson({ type: 'ready', sessionId: session.sessionId });
          for (const frame of this.early) if (!session.process.sendAudio(frame)) counters.droppedFramesIn++;
          this.early = [];
          return;
        case 'audio':
          return this.audioOut(event.audio, event.sampleRate);
        case 'transcript':
          if (this.channel === 'browser') this.sendJson({ type: 'transcript', text: event.text, role: event.role, is_final: event.isFinal });
          return;
        case 'interruption':
          counters.interruptions++;
          // Barge-in: nothing queued for the interrupted turn reaches the caller.
          this.out.clear();
          this.mulawTail = Buffer.alloc(0);
          this.outbound = null;
          if (this.channel === 'browser') this.sendJson({ type: 'interrupted' });
          else if (this.streamSid !== null) this.sendTwilio({ event: 'clear', streamSid: this.streamSid });
          return;
        case 'responseComplete':
          if (this.channel === 'twilio') this.flushMulaw();
          return;
        case 'tool':
          if (this.channel === 'browser') this.sendJson({ type: 'tool', name: event.name });
          return;
        case 'error':
          // Once the platform is ending the session it kills the process: the caller has been sent
          // the reason (endWith), and the kill's own report is not the agent's error.
          if (this.state === 'ending' || this.state === 'closed') return;
          this.error ??= { code: event.code, message: event.message };
          if (this.channel === 'browser') this.sendJson({ type: 'error', code: event.code, message: event.message });
          return;
        case 'log':
          log.debug('voice agent output', { stream: event.stream, data: event.data.slice(0, 1000) });
          return;
        default:
          return;
      }
    }

    private audioOut(pcm: Buffer, rate: number): void {
      const target = this.channel === 'twilio' ? PHONE_RATE : BROWSER_OUTPUT_RATE;
      if (this.outbound === null || this.outbound.fromRate !== rate) this.outbound = new Resampler(rate, target);
      const samples = this.outbound.push(pcmSamples(pcm));
      if (this.channel === 'browser') {
        const bytes = pcmBytes(samples);
        const frameBytes = (BROWSER_OUTPUT_RATE * 2 * FRAME_MS) / 1000;
        for (let at = 0; at < bytes.length; at += frameBytes) this.out.push(Buffer.from(bytes.subarray(at, at + frameBytes)));
        return;
      }
      // Twilio: exactly 20 ms (160 bytes) per media frame; a tail waits for the next audio.
      let mulaw = Buffer.concat([this.mulawTail, pcmToMulaw(samples)]);
      const frameBytes = (PHONE_RATE * FRAME_MS) / 1000;
      while (mulaw.length >= frameBytes) {
        this.out.push(mulaw.subarray(0, frameBytes));
        mulaw = mulaw.subarray(frameBytes);
      }
      this.mulawTail = Buffer.from(mulaw);
    }

    private flushMulaw(): void {
      if (this.mulawTail.length === 0) return;
      const frame = Buffer.alloc((PHONE_RATE * FRAME_MS) / 1000, 0xff); // μ-law silence
      this.mulawTail.copy(frame);
      this.mulawTail = Buffer.alloc(0);
      this.out.push(frame);
    }

    private sendAudioFrame(frame: Buffer): void {
      if (this.ws.readyState !== this.ws.OPEN) return;
      counters.audioFramesOut++;
      if (this.channel === 'browser') this.ws.send(frame, { binary: true });
      else if (this.streamSid !== null) this.sendTwilio({ event: 'media', streamSid: this.streamSid, media: { payload: frame.toString('base64') } });
    }

    /**
     * Ends the session at once for `error`; `close` replaces the normal close (1000). A browser is
     * sent the error first. A Twilio stream is not: a server may send Twilio only `media`, `mark`
     * and `clear`, so a call ends with the end mark and the close, and the reason stays in the log
     * and the session record.
     */
    private endWith(error: { code: string; message: string }, close?: { code: number; reason: string }): void {
      this.error = error;
      if (close) this.closeWith = close;
      log.info('voice session ended by the platform', { code: error.code, reason: error.message, channel: this.channel, sessionId: this.session?.sessionId });
      if (this.channel === 'browser') this.sendJson({ type: 'error', ...error });
      void this.end(true);
    }

    private sendJson(message: object): void {
      if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
    }

    private sendTwilio(message: TwilioMessage): void {
      this.sendJson(message);
    }

    /**
     * Restarts the idle countdown. It runs only while the session is live: the caller is not idle
     * while the agent's process starts (the start timer bounds a start that never finishes).
     */
    private touch(): void {
      if (this.idleTimer) clearTimeout(this.idleTimer);
      if (this.state !== 'live') return;
      this.idleTimer = setTimeout(
        () =>
          this.endWith(
            { code: 'IDLE_TIMEOUT', message: `nothing from the caller for ${settings.idleTimeoutSec} s` },
            { code: CLOSE.idle, reason: 'idle timeout' },
          ),
        settings.idleTimeoutSec * 1000,
      );
      this.idleTimer.unref();
    }

    private refuse(refusal: VoiceRefusal): void {
      if (this.state === 'closed') return;
      counters.refusedSessions++;
      this.state = 'closed';
      this.clearTimers();
      if (this.ws.readyState !== this.ws.OPEN) return;
      this.ws.close(refusal.closeCode, closeReason(refusal.message));
      // A refused caller may have megabytes of frames already sent, which `ws` would read and unmask
      // until the caller answers the close, after all of them: reading stops now, and the socket is
      // cut once the close frame has had time to arrive.
      this.ws.pause();
      setTimeout(() => this.ws.terminate(), REFUSED_SOCKET_GRACE_MS).unref();
    }

    private isGone(): boolean {
      return this.ws.readyState !== this.ws.OPEN;
    }

    private onClose(): void {
      this.clearTimers();
      this.out.clear();
      // A caller that vanished mid-call: the session still ends properly (process stopped, billed).
      if (this.session !== null) void this.end(false);
      else if (this.state !== 'starting') this.state = 'closed';
    }

    /**
     * Ends the session once: the agent is asked to stop (its process is killed if it does not),
     * the session is settled and recorded, the caller gets `session_end` and the close.
     * `now`: kill at once rather than letting the agent stop by itself (limits, credits, the agent's own end).
     */
    end(now = false): Promise<void> {
      const session = this.session;
      if (session === null) {
        if (this.state === 'auth') this.refuse(new VoiceRefusal(1000, 'ended before authentication'));
        return Promise.resolve();
      }
      this.ended ??= (async () => {
        this.state = 'ending';
        this.clearTimers();
        session.process.end();
        // The agent gets a moment to stop by itself (its `stop()`), unless the session must end now.
        if (!now) await Promise.race([session.process.exited, new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())]);
        await session.process.kill();
        const bill = await session.finish({ error: this.error, channel: this.channel, turns: this.turns });
        counters.activeSessions--;
        this.release();
        const unplayedMs = this.out.unplayedMs();
        if (this.channel === 'twilio') this.flushMulaw();
        this.out.flushAll();
        if (this.channel === 'browser') this.sendJson({ type: 'session_end', seconds: bill.seconds, credits: bill.credits });
        else if (this.streamSid !== null) {
          // Twilio drops audio it has not played when the stream closes: the agent's last words
          // would be cut off. It echoes the mark once they have played; close then (or when they
          // must have, should the echo not come). A stream that never said `start` has no
          // streamSid to mark, nor audio of ours: it is just closed.
          this.sendTwilio({ event: 'mark', streamSid: this.streamSid, mark: { name: 'session_end' } });
          if (!this.callerStopped) await this.markPlayed('session_end', unplayedMs + END_MARK_GRACE_MS);
        }
        this.state = 'closed';
        if (this.ws.readyState === this.ws.OPEN) this.ws.close(this.closeWith.code, this.closeWith.reason);
      })();
      return this.ended;
    }

    /** Resolves when Twilio echoes the mark, the socket closes, or `withinMs` passes. */
    private markPlayed(name: string, withinMs: number): Promise<void> {
      if (this.ws.readyState !== this.ws.OPEN) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.marks.delete(name);
          this.ws.off('close', done);
          resolve();
        };
        const timer = setTimeout(done, withinMs);
        this.marks.set(name, done);
        this.ws.once('close', done);
      });
    }

    private release(): void {
      if (this.userId === null) return;
      const left = (sessionsByUser.get(this.userId) ?? 1) - 1;
      if (left <= 0) sessionsByUser.delete(this.userId);
      else sessionsByUser.set(this.userId, left);
      this.userId = null;
    }

    private clearTimers(): void {
      for (const timer of [this.authTimer, this.startTimer, this.idleTimer, this.lengthTimer]) if (timer) clearTimeout(timer);
      this.authTimer = this.startTimer = this.idleTimer = this.lengthTimer = null;
    }

    shutdown(): Promise<void> {
      if (this.session === null) {
        this.refuse(new VoiceRefusal(1001, 'the server is shutting down'));
        return Promise.resolve();
      }
      this.closeWith = { code: 1001, reason: 'the server is shutting down' };
      return this.end(true);
    }
  }

  return {
    request,
    upgrade,
    async close() {
      closing = true;
      await Promise.all([...connections].map((connection) => connection.shutdown()));
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/** Null when the request carries a platform operator's credentials, else the refusal to answer with. */
async function authorizeOperator(req: IncomingMessage, ports: Ports): Promise<{ status: number; message: string } | null> {
  const headers = Object.fromEntries(Object.entries(req.headers).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value]] : [])));
  try {
    await resolveActor(
      'admin',
      { headers, query: {} },
      { credentials: ports.credentials, identity: ports.identity, runTokens: ports.runTokens, now: ports.clock.now() },
    );
    return null;
  } catch (error) {
    if (error instanceof AccessDeniedError) return { status: 403, message: 'Metrics are for platform operators only.' };
    if (error instanceof AuthenticationRequiredError) return { status: 401, message: "Metrics need a platform operator's credentials." };
    throw error;
  }
}

function rawLength(data: RawData): number {
  return Array.isArray(data) ? data.reduce((sum, piece) => sum + piece.length, 0) : data.byteLength;
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/**
 * Audio to one caller, paced: frames go out as long as less than LEAD_MS of sent audio is still
 * unplayed (by the bridge's monotonic clock), so the queue holds what was produced ahead of real
 * time and an interruption can drop it. Bounded: beyond MAX_QUEUED_MS the oldest frames go.
 */
class PacedAudio {
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private playheadAt = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly bytesPerMs: number,
    private readonly send: (frame: Buffer) => void,
    private readonly writable: () => boolean,
    private readonly dropped: () => void,
  ) {}

  push(frame: Buffer): void {
    this.queue.push(frame);
    this.queuedBytes += frame.length;
    while (this.queuedBytes > MAX_QUEUED_MS * this.bytesPerMs && this.queue.length > 1) {
      this.queuedBytes -= this.queue.shift()!.length;
      this.dropped();
    }
    this.pump();
  }

  clear(): void {
    this.queue = [];
    this.queuedBytes = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Audio sent or queued that the caller has not heard yet, by the bridge's clock. */
  unplayedMs(): number {
    return this.queuedBytes / this.bytesPerMs + Math.max(0, this.playheadAt - performance.now());
  }

  /** At the end of a session: what is queued goes out now (the caller's client buffers it). */
  flushAll(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const frame of this.queue) this.send(frame);
    this.clear();
  }

  private pump(): void {
    if (this.timer !== null) return;
    const now = performance.now();
    while (this.queue.length > 0 && Math.max(this.playheadAt, now) - now < LEAD_MS) {
      if (!this.writable()) return this.later(20);
      const frame = this.queue.shift()!;
      this.queuedBytes -= frame.length;
      this.send(frame);
      this.playheadAt = Math.max(this.playheadAt, now) + frame.length / this.bytesPerMs;
    }
    if (this.queue.length > 0) this.later(Math.max(1, this.playheadAt - now - LEAD_MS));
  }

  private later(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pump();
    }, ms);
    this.timer.unref();
  }
}

/**
 * A WebSocket close reason: at most 123 bytes of UTF-8 (RFC 6455), cut between characters. ws
 * throws past that, and a refusal's message can carry the caller's input (an agent id from the
 * path), so `slice` by characters let a path of multi-byte characters end the process.
 */
function closeReason(text: string): string {
  const bytes = new Uint8Array(123);
  const { written } = new TextEncoder().encodeInto(text, bytes);
  return new TextDecoder().decode(bytes.subarray(0, written));
}
