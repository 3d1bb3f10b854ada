import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { createUser, startTestPlatform } from '../support/local-platform.ts';
import { elapsedSince, type BenchModule } from './harness.ts';
import { measured, versus } from './stats.ts';

const ECHO = readFileSync(new URL('../../python-runtime/tests/fixtures/bidi_echo_agent.py', import.meta.url), 'utf8');
/** One 20 ms frame of 16 kHz PCM16, as a browser sends it. */
const FRAME = Buffer.alloc(640, 1);
const FRAME_MS = 20;
const WARM_UP = 50;
const SAMPLES = 400;
/** Sessions opened at once for the "held" figure (each is a sandboxed Python process). */
const HELD_TARGET = 24;
const BRIDGE = 'bridge + echo agent, one 20 ms frame';
const BARE = 'bare ws echo server, same frame';
const PIPE = 'bare Python line echo over a pipe, same frame as JSON';
/** A process that echoes lines: the floor of any design with a process per session. */
const PIPE_ECHO = `
import os
buf = b""
while True:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    buf += chunk
    while b"\\n" in buf:
        line, _, buf = buf.partition(b"\\n")
        os.write(1, line + b"\\n")
`;

/** Opens a socket and resolves once it is open. */
function connect(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** Resolves with the next binary frame. */
function nextBinary(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (_data: unknown, isBinary: boolean) => {
      if (!isBinary) return;
      ws.off('message', onMessage);
      resolve();
    };
    ws.on('message', onMessage);
    ws.once('close', () => reject(new Error('closed while waiting for audio')));
  });
}

/**
 * Round trip of one audio frame, caller to caller, at a caller's pace (a frame every 20 ms): through
 * the voice bridge and an echo agent in its sandboxed process, and through a bare `ws` echo server
 * in this process. The difference is what the bridge adds (auth is done once per session, so only
 * the audio path counts): JSON framing, base64, the process's stdin and stdout, the 16 to 24 kHz
 * resampler and the pacing queue. Then how many sessions this machine holds at once, each answering.
 */
export const voiceBench: BenchModule = {
  name: 'voice',
  async run({ progress, defer }) {
    progress('voice: starting the platform');
    const platform = await startTestPlatform({ env: { VOICE_MAX_SESSIONS_PER_USER: String(HELD_TARGET) } });
    defer(() => platform.stop({ removeData: true }));
    const voiceUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.voiceUrl as string;
    const user = await createUser(platform, { alias: 'benchvoice', credits: 100_000 });
    const created = await platform.api('POST', '/agent/create', {
      token: user.token,
      body: { agentName: 'bench-echo', description: 'echo', sourceCode: ECHO, agentType: 'bidi' },
    });
    if (created.status !== 200) throw new Error(`agent create failed: ${created.status} ${created.text}`);
    const agentId = created.body.data.agentId as string;

    const bare = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((resolve) => bare.once('listening', () => resolve()));
    bare.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
    defer(() => new Promise<void>((resolve) => bare.close(() => resolve())));
    const bareUrl = `ws://127.0.0.1:${(bare.address() as AddressInfo).port}`;

    const ready = async (ws: WebSocket) =>
      new Promise<void>((resolve, reject) => {
        ws.on('message', (data, isBinary) => {
          if (!isBinary && (JSON.parse(data.toString()) as { type: string }).type === 'ready') resolve();
        });
        ws.once('close', (code) => reject(new Error(`session refused with ${code}`)));
      });

    progress('voice: one session and the bare echo server');
    const bridgeSocket = await connect(`${voiceUrl}/ws/${agentId}?token=${user.token}`);
    await ready(bridgeSocket);
    const bareSocket = await connect(bareUrl);
    defer(() => bridgeSocket.close());
    defer(() => bareSocket.close());

    const pipe = spawn('python3', ['-u', '-c', PIPE_ECHO], { stdio: ['pipe', 'pipe', 'ignore'] });
    defer(() => void pipe.kill());
    let pipeAnswered: (() => void) | null = null;
    pipe.stdout.on('data', () => pipeAnswered?.());
    const line = `${JSON.stringify({ type: 'audio', audio: FRAME.toString('base64') })}\n`;
    const pipeTrip = async () => {
      const t = performance.now();
      await new Promise<void>((resolve) => {
        pipeAnswered = resolve;
        pipe.stdin.write(line);
      });
      const ms = elapsedSince(t);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, FRAME_MS - ms)));
      return ms;
    };

    const roundTrip = async (ws: WebSocket) => {
      const answered = nextBinary(ws);
      const t = performance.now();
      ws.send(FRAME, { binary: true });
      await answered;
      const ms = elapsedSince(t);
      // A caller speaks in real time: the next frame comes when this one's 20 ms are over.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, FRAME_MS - ms)));
      return ms;
    };
    // The echo's first frames are short (the resampler's delay); warm both paths past that.
    for (let i = 0; i < WARM_UP; i++) {
      await roundTrip(bridgeSocket);
      await roundTrip(bareSocket);
      await pipeTrip();
    }
    progress('voice: measuring the audio path');
    const samples = { bridge: [] as number[], bare: [] as number[], pipe: [] as number[] };
    const steps = [
      async () => samples.bridge.push(await roundTrip(bridgeSocket)),
      async () => samples.bare.push(await roundTrip(bareSocket)),
      async () => samples.pipe.push(await pipeTrip()),
    ];
    for (let i = 0; i < SAMPLES; i++) {
      // Rotated, so none always runs first.
      for (let s = 0; s < steps.length; s++) await steps[(i + s) % steps.length]!();
    }
    bridgeSocket.close();

    progress(`voice: opening ${HELD_TARGET} sessions at once`);
    const opened: WebSocket[] = [];
    defer(() => {
      for (const ws of opened) ws.terminate();
    });
    const readyMs: number[] = [];
    const results = await Promise.allSettled(
      Array.from({ length: HELD_TARGET }, async () => {
        const t = performance.now();
        const ws = await connect(`${voiceUrl}/ws/${agentId}?token=${user.token}`);
        opened.push(ws);
        await ready(ws);
        readyMs.push(elapsedSince(t));
        return ws;
      }),
    );
    const live = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    // Held means answering: every session echoes a frame while all are open.
    const answering = await Promise.allSettled(
      live.map(async (ws) => {
        const answered = nextBinary(ws);
        ws.send(FRAME, { binary: true });
        await answered;
      }),
    );
    const held = answering.filter((r) => r.status === 'fulfilled').length;
    for (const ws of opened) ws.close();

    const bareRow = measured(BARE, samples.bare, { note: 'ws 8 server in this process, echo of the same bytes' });
    const bridgeRow = measured(BRIDGE, samples.bridge, {
      note: 'PCM16 16 kHz in, 24 kHz out; sandboxed Python echo agent; a frame every 20 ms',
    });
    const heldRow = measured(`sessions held at once: ${held} of ${HELD_TARGET}`, readyMs, {
      note: 'time to ready per session, all opened together; each answered a frame with all open',
    });
    const pipeRow = measured(PIPE, samples.pipe, { note: 'a plain python3 process (no sandbox): what a process per session costs at least' });
    return [versus(versus(bridgeRow, bareRow), pipeRow), bareRow, pipeRow, heldRow];
  },
};
