import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import type { LocalCompute } from '../../functions/adapters/compute/local.ts';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { STRANDS_VOICE_AGENT } from '../support/voice-agents.ts';
import { elapsedSince, type BenchContext, type BenchModule } from './harness.ts';
import { measured, versus, type MeasuredRow } from './stats.ts';

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

/** Sessions per connect-to-ready figure: warm ones reuse the platform's spare, cold ones start a process each. */
const READY_SAMPLES = { warm: 12, cold: 6 };
/** The interpreter with Strands, when the framework tier's is configured (test/frameworks/strands.ts). */
const STRANDS_PYTHON = process.env['STRANDS_PYTHON'] || null;

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
    const platform = await startTestPlatform({ ...DEFAULT_SPARES, env: { VOICE_MAX_SESSIONS_PER_USER: String(HELD_TARGET) } });
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
    // Its session counts against the user's limit until the bridge has ended it: all 24 must fit.
    for (;;) {
      // The session count is the operators' (`/metrics`); `/health` says only whether the host is up.
      const metrics = (await fetch(`${voiceUrl.replace(/^ws/, 'http')}/metrics`, { headers: { authorization: `Bearer ${platform.adminToken}` } }).then((r) =>
        r.json(),
      )) as { activeSessions: number };
      if (metrics.activeSessions === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

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
    const readyRows = await connectToReady(progress);
    return [versus(versus(bridgeRow, bareRow), pipeRow), bareRow, pipeRow, heldRow, ...readyRows];
  },
};

/**
 * Connect to `ready` (the agent's `start()` returned), one session at a time: the echo agent and,
 * when STRANDS_PYTHON names an interpreter with Strands, a real `BidiAgent`; each with the
 * platform's spare session process waiting (warm: the platform is given time to start the next one
 * between sessions, as between calls) and with none (cold, VOICE_SPARES=0: an interpreter start
 * and the framework's imports per call). Warm rows are related to their cold ones.
 */
async function connectToReady(progress: BenchContext['progress']): Promise<MeasuredRow[]> {
  const python = STRANDS_PYTHON ?? 'python3';
  const kinds = [{ name: 'echo agent', source: ECHO }, ...(STRANDS_PYTHON !== null ? [{ name: 'Strands BidiAgent', source: STRANDS_VOICE_AGENT }] : [])];
  const samples = new Map<string, number[]>();
  for (const mode of ['warm', 'cold'] as const) {
    progress(`voice: connect to ready, ${mode} (${python})`);
    // Stopped before the next one starts: two platforms' spares would compete for the cores.
    const platform = await startTestPlatform({ python, ...DEFAULT_SPARES, voiceSpares: mode === 'warm' ? 1 : 0 });
    try {
      const voiceUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.voiceUrl as string;
      const user = await createUser(platform, { alias: `benchready${mode}`, credits: 100_000 });
      // The spare is waiting once warm() resolves; the cold platform has none to wait for.
      const compute = platform.running.ports.compute as LocalCompute;
      for (const kind of kinds) {
        const agentId = await createBidiAgent(platform, user.token, kind.source);
        const times: number[] = [];
        for (let i = 0; i < READY_SAMPLES[mode]; i++) {
          await compute.warm();
          times.push(await timeToReady(`${voiceUrl}/ws/${agentId}?token=${user.token}`));
        }
        samples.set(`${kind.name} ${mode}`, times);
      }
    } finally {
      await platform.stop({ removeData: true });
    }
  }
  return kinds.flatMap((kind) => {
    const cold = measured(`connect to ready, ${kind.name}, no spare (cold)`, samples.get(`${kind.name} cold`)!, {
      note: `a new sandboxed ${python} per call, which imports the runtime's and the voice framework's modules first`,
    });
    const warm = measured(`connect to ready, ${kind.name}, spare waiting (warm)`, samples.get(`${kind.name} warm`)!, {
      note: 'the call claims a process started ahead with the framework imported; the sandbox and the agent start per call',
    });
    return [versus(warm, cold), cold];
  });
}

async function createBidiAgent(platform: TestPlatform, token: string, source: string): Promise<string> {
  const created = await platform.api('POST', '/agent/create', {
    token,
    body: { agentName: `ready-${Math.random().toString(36).slice(2, 8)}`, description: 'bench', sourceCode: source, agentType: 'bidi' },
  });
  if (created.status !== 200) throw new Error(`agent create failed: ${created.status} ${created.text}`);
  return created.body.data.agentId as string;
}

/** Milliseconds from opening the socket to the `ready` frame; the session is then ended and its end awaited. */
async function timeToReady(url: string): Promise<number> {
  const t = performance.now();
  const ws = new WebSocket(url);
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  const ms = await new Promise<number>((resolve, reject) => {
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const frame = JSON.parse(data.toString()) as { type: string; code?: string; message?: string };
      if (frame.type === 'ready') resolve(elapsedSince(t));
      if (frame.type === 'error') reject(new Error(`session failed: ${frame.code} ${frame.message}`));
    });
    ws.once('close', (code) => reject(new Error(`session closed with ${code} before ready`)));
  });
  ws.send(JSON.stringify({ type: 'end' }));
  await closed;
  return ms;
}
