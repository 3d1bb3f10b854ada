import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { descendantProcesses } from '../support/processes.ts';
import { STRANDS_VOICE_AGENT } from '../support/voice-agents.ts';
import { describeWithStrands, STRANDS_PYTHON } from './strands.ts';

/**
 * A voice agent as users write it with the real Strands SDK (`BidiAgent`, a `@tool`, a bidi model
 * class in the source: STRANDS_VOICE_AGENT says what it does), on the platform's voice WebSocket.
 */

type Frame = Record<string, any>;

/** A caller on the voice WebSocket that keeps every frame. */
async function call(url: string): Promise<{ ws: WebSocket; json: Frame[]; audio: Buffer[]; next: (match: (frame: Frame) => boolean) => Promise<Frame> }> {
  const ws = new WebSocket(url);
  const json: Frame[] = [];
  const audio: Buffer[] = [];
  let wake: () => void = () => {};
  ws.on('message', (data, isBinary) => {
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
    if (isBinary) audio.push(bytes);
    else json.push(JSON.parse(bytes.toString('utf8')) as Frame);
    wake();
  });
  ws.on('close', () => wake());
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const next = async (match: (frame: Frame) => boolean): Promise<Frame> => {
    for (;;) {
      const found = json.find(match);
      if (found) return found;
      if (ws.readyState === WebSocket.CLOSED) throw new Error(`closed without the frame; got ${JSON.stringify(json)}`);
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  return { ws, json, audio, next };
}

const samplesOf = (bytes: Buffer) => Array.from({ length: bytes.length / 2 }, (_, i) => bytes.readInt16LE(i * 2));
/** Pids of this file's voice session processes (the interpreters, not bubblewrap around them). */
const sessionPids = () =>
  descendantProcesses(([program, ...args]) => program !== undefined && !program.endsWith('bwrap') && args.includes('platform_runtime.bidi_session'));

describeWithStrands('Strands voice agents (BidiAgent) on the voice WebSocket', () => {
  let platform: TestPlatform;
  let voiceUrl: string;
  let owner: Awaited<ReturnType<typeof createUser>>;
  let agentId: string;

  beforeAll(async () => {
    // A call takes the session process started ahead with Strands imported, as on a running platform (a test below checks it).
    platform = await startTestPlatform({ python: STRANDS_PYTHON!, voiceSpares: 1 });
    voiceUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.voiceUrl;
    owner = await createUser(platform, { alias: 'strands-voice', credits: 1000 });
    const created = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName: 'strands-voice', description: 'a BidiAgent', sourceCode: STRANDS_VOICE_AGENT, agentType: 'bidi' },
    });
    expect(created.status, created.text).toBe(200);
    agentId = created.body.data.agentId as string;
  });

  /** Waits until the bridge holds no session (a call's process has exited once it is released). */
  async function sessionsGone(): Promise<void> {
    for (;;) {
      // The session count is the operators' (`/metrics`); `/health` says only whether the host is up.
      const metrics = (await fetch(`${voiceUrl.replace(/^ws/, 'http')}/metrics`, { headers: { authorization: `Bearer ${platform.adminToken}` } }).then((r) =>
        r.json(),
      )) as { activeSessions: number };
      if (metrics.activeSessions === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  afterAll(async () => {
    await platform?.stop({ removeData: true });
  });

  it('answers with audio and a transcript, and calls a @tool whose result it speaks', async () => {
    // Prepare
    const caller = await call(`${voiceUrl}/ws/${agentId}?token=${owner.token}`);
    await caller.next((f) => f.type === 'ready' || f.type === 'error');

    // Act: typed text, caller audio, then a question that takes the tool
    caller.ws.send(JSON.stringify({ type: 'text', text: 'hello' }));
    const answer = await caller.next((f) => f.type === 'transcript' && f.role === 'assistant');
    caller.ws.send(Buffer.alloc(3200, 0), { binary: true });
    const heard = await caller.next((f) => f.type === 'transcript' && f.role === 'user' && String(f.text).startsWith('heard'));
    caller.ws.send(JSON.stringify({ type: 'text', text: 'what is the weather in Paris?' }));
    const tool = await caller.next((f) => f.type === 'tool');
    const weather = await caller.next((f) => f.type === 'transcript' && String(f.text).startsWith('the weather'));
    caller.ws.send(JSON.stringify({ type: 'end' }));
    const end = await caller.next((f) => f.type === 'session_end');

    // Assess: the SDK's agent put the typed text in its history before the model saw it (one
    // message); the audio is the model's tone (the filter's first samples aside)
    expect(caller.json.find((f) => f.type === 'error')).toBeUndefined();
    expect(answer).toEqual({ type: 'transcript', text: 'you said: hello (1 messages)', role: 'assistant', is_final: true });
    expect(heard).toEqual({ type: 'transcript', text: 'heard 3200 bytes', role: 'user', is_final: true });
    expect(tool).toEqual({ type: 'tool', name: 'lookup_weather' });
    expect(weather).toEqual({ type: 'transcript', text: 'the weather: sunny in Paris', role: 'assistant', is_final: true });
    const samples = samplesOf(Buffer.concat(caller.audio));
    expect(samples.length).toBeGreaterThanOrEqual(2 * 2400 - 100);
    expect(samples.slice(100, 2300).every((sample) => Math.abs(sample - 1000) <= 2)).toBe(true);
    expect(end).toMatchObject({ type: 'session_end', credits: expect.any(Number) });
  });

  it('gives a call a process started before it connected, with Strands already imported, and starts the next one', async () => {
    // Prepare: the spare the platform keeps (started when the last call took the one before)
    const waiting = sessionPids();
    expect(waiting.length).toBeGreaterThan(0);

    // Act
    const caller = await call(`${voiceUrl}/ws/${agentId}?token=${owner.token}`);
    await caller.next((f) => f.type === 'ready');
    caller.ws.send(JSON.stringify({ type: 'text', text: 'hi' }));
    const answer = await caller.next((f) => f.type === 'transcript' && f.role === 'assistant');
    const during = sessionPids();
    caller.ws.send(JSON.stringify({ type: 'end' }));
    await caller.next((f) => f.type === 'session_end');
    await sessionsGone();
    const after = sessionPids();

    // Assess: the process that was waiting ran the call and ended with it (a spare left unused
    // would still be there); the one started meanwhile waits for the next call
    expect(answer.text).toBe('you said: hi (1 messages)');
    expect(waiting.every((pid) => during.includes(pid))).toBe(true);
    expect(after.filter((pid) => waiting.includes(pid))).toEqual([]);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((pid) => during.includes(pid))).toBe(true);
  });
});
