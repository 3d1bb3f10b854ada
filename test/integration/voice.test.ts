import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { mulawToPcm, pcmToMulaw } from '../../functions/voice/audio.ts';
import { outsideTwilioSchema, twilioMediaStream } from '../support/channel-signing.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { descendantProcesses } from '../support/processes.ts';
import { voiceAgentSource } from '../support/voice-agents.ts';

/** A plain-Python voice agent with Strands' BidiAgent interface (see the file for what it does). */
const ECHO = readFileSync(new URL('../../python-runtime/tests/fixtures/bidi_echo_agent.py', import.meta.url), 'utf8');
const TEXT_ECHO = readFileSync(new URL('../../python-runtime/tests/fixtures/echo_agent.py', import.meta.url), 'utf8');

interface Received {
  readonly json: Record<string, any>[];
  readonly binary: Buffer[];
  /** In arrival order: a JSON frame or a binary one. */
  readonly all: ({ kind: 'json'; value: Record<string, any> } | { kind: 'binary'; value: Buffer })[];
}

/** A WebSocket client that keeps every frame and can wait for one. */
class Client {
  /** A client on a new socket to `url`, once it is open (every frame is kept from the start). */
  static connect(url: string): Promise<Client> {
    const client = new Client(new WebSocket(url));
    return new Promise((resolve, reject) => {
      client.ws.once('open', () => resolve(client));
      client.ws.once('error', reject);
    });
  }

  readonly received: Received = { json: [], binary: [], all: [] };
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: (() => void)[] = [];

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const buffer = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
      if (isBinary) {
        this.received.binary.push(buffer);
        this.received.all.push({ kind: 'binary', value: buffer });
      } else {
        const value = JSON.parse(buffer.toString('utf8')) as Record<string, any>;
        this.received.json.push(value);
        this.received.all.push({ kind: 'json', value });
      }
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    void this.closed.then(() => {
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** The first JSON frame matching, waiting for it (fails the test at its timeout otherwise). */
  async json(match: (frame: Record<string, any>) => boolean): Promise<Record<string, any>> {
    for (;;) {
      const found = this.received.json.find(match);
      if (found) return found;
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error(`socket closed without the frame; got ${JSON.stringify(this.received.json)}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async until(condition: () => boolean): Promise<void> {
    while (!condition()) {
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error('socket closed first');
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  send(data: object | Buffer): void {
    this.ws.send(Buffer.isBuffer(data) ? data : JSON.stringify(data), { binary: Buffer.isBuffer(data) });
  }
}

/** PCM16LE of `count` samples all of `value`. */
const pcm = (value: number, count: number) => {
  const out = Buffer.alloc(count * 2);
  for (let i = 0; i < count; i++) out.writeInt16LE(value, i * 2);
  return out;
};
const samplesOf = (bytes: Buffer) => Array.from({ length: bytes.length / 2 }, (_, i) => bytes.readInt16LE(i * 2));

type TwilioSide = ReturnType<typeof twilioMediaStream>;

/**
 * A Twilio Media Stream to the bridge: Twilio's `connected` and `start` (the token among the
 * TwiML's parameters), and every `mark` the bridge sends echoed back, as Twilio does once the
 * audio before it has played.
 */
async function twilioCall(
  url: string,
  seed: string,
  customParameters: Record<string, string> | null,
  options: { echoMarks?: boolean } = {},
): Promise<{ client: Client; twilio: TwilioSide }> {
  const twilio = twilioMediaStream({ seed });
  const client = await Client.connect(url);
  if (options.echoMarks !== false)
    client.ws.on('message', (data, isBinary) => {
      const frame = isBinary ? null : (JSON.parse(String(data)) as Record<string, any>);
      if (frame?.event === 'mark' && client.ws.readyState === WebSocket.OPEN) client.send(twilio.mark(frame.mark.name));
    });
  client.send(twilio.connected());
  if (customParameters !== null) client.send(twilio.start(customParameters));
  return { client, twilio };
}

/** The mark the bridge ends a call with, which Twilio echoes once the audio before it has played. */
const endMarkOf = (twilio: TwilioSide) => ({ event: 'mark', streamSid: twilio.streamSid, mark: { name: 'session_end' } });

/** The caller's side of a call the platform ends: 20 ms of silence every 200 ms until the close. */
async function talkUntilClosed(client: Client, twilio: TwilioSide): Promise<{ code: number; reason: string }> {
  const silence = Buffer.alloc(160, 0xff);
  const talking = setInterval(() => client.send(twilio.media(silence)), 200);
  try {
    return await client.closed;
  } finally {
    clearInterval(talking);
  }
}

/** Every frame the bridge sent a Twilio stream is one Twilio takes from a server (`media`, `mark`, `clear`), as text. */
function expectOnlyTwilioMessages(client: Client): void {
  expect(outsideTwilioSchema(client.received.json)).toEqual([]);
  expect(client.received.binary).toEqual([]);
}

/** The session record of `userId`'s one voice session, as the owner's logs show it. */
async function voiceRecord(platform: TestPlatform, token: string): Promise<Record<string, any> | undefined> {
  const logs = await platform.api('GET', '/logs', { token });
  return (logs.body.data.logs as Record<string, any>[]).find((log) => log.resourceType === 'voice');
}

describe('voice agents over the WebSocket bridge', () => {
  let platform: TestPlatform;
  let voiceUrl: string;
  let owner: Awaited<ReturnType<typeof createUser>>;
  let echoId: string;

  const credits = async (token: string): Promise<number> => (await platform.api('GET', '/user/credits', { token })).body.data.credits;

  async function createAgent(token: string, body: Record<string, unknown>): Promise<string> {
    const res = await platform.api('POST', '/agent/create', {
      token,
      body: { description: 'voice test agent', sourceCode: ECHO, agentType: 'bidi', ...body },
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data.agentId as string;
  }

  function open(path: string): Promise<Client> {
    return Client.connect(`${voiceUrl}${path}`);
  }

  /** The bridge's counters, as a platform operator reads them. */
  const metrics = async () =>
    (await fetch(`${voiceUrl.replace(/^ws/, 'http')}/metrics`, { headers: { authorization: `Bearer ${platform.adminToken}` } }).then((r) =>
      r.json(),
    )) as Record<string, number>;

  /** Waits until the bridge holds no session (a closed one ends, is billed and recorded, after its socket). */
  async function sessionsGone(): Promise<void> {
    while ((await metrics()).activeSessions !== 0) await new Promise((r) => setTimeout(r, 50));
  }

  /** A new user with `credits` and a voice agent of theirs, and a session with it that is ready. */
  async function readySession(alias: string, credits: number) {
    const user = await createUser(platform, { alias, credits });
    const agentId = await createAgent(user.token, { agentName: `${alias}-agent` });
    const client = await open(`/ws/${agentId}?token=${user.token}`);
    await client.json((f) => f.type === 'ready');
    return { user, agentId, client };
  }

  beforeAll(async () => {
    // Calls take the waiting session process, as on a running platform (a test below counts on it).
    platform = await startTestPlatform({ voiceSpares: 1, env: { VOICE_BILLING_TICK_SEC: '1', VOICE_MAX_SESSIONS_PER_USER: '2' } });
    voiceUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.voiceUrl;
    owner = await createUser(platform, { alias: 'voice-owner', credits: 1000 });
    echoId = await createAgent(owner.token, { agentName: 'echo-voice', voice: 'voice_2' });
  });

  afterAll(async () => {
    await platform?.stop({ removeData: true });
  });

  describe('agents', () => {
    it('creates a voice agent with its voice and initial prompt; the checker asks each type for its own entry point', async () => {
      // Act
      const got = await platform.api('GET', `/agent/${echoId}`, { token: owner.token });
      const textAsVoice = await platform.api('POST', '/agent/create', {
        token: owner.token,
        body: { agentName: 'wrong-entry', description: 'd', sourceCode: TEXT_ECHO, agentType: 'bidi' },
      });
      const voiceAsText = await platform.api('POST', '/agent/create', {
        token: owner.token,
        body: { agentName: 'wrong-entry-2', description: 'd', sourceCode: ECHO },
      });
      const badVoice = await platform.api('POST', '/agent/create', {
        token: owner.token,
        body: { agentName: 'bad-voice', description: 'd', sourceCode: ECHO, agentType: 'bidi', voice: 'voice_9' },
      });

      // Assess
      expect(got.body.data).toMatchObject({ agentType: 'bidi', voice: 'voice_2', initialPrompt: null });
      expect(textAsVoice.status).toBe(400);
      expect(JSON.stringify(textAsVoice.body)).toContain('must define create_bidi_agent() at the top level');
      expect(voiceAsText.status).toBe(400);
      expect(JSON.stringify(voiceAsText.body)).toContain('must define create_agent() at the top level');
      expect(badVoice.status).toBe(400);
    });

    it('updates a voice agent: initial prompt and voice', async () => {
      // Prepare
      const agentId = await createAgent(owner.token, { agentName: 'updated-voice' });

      // Act
      const updated = await platform.api('PUT', '/agent/update', { token: owner.token, body: { agentId, initialPrompt: 'Say hello', voice: 'voice_3' } });
      const toText = await platform.api('PUT', '/agent/update', { token: owner.token, body: { agentId, agentType: 'text' } });

      // Assess
      expect(updated.status).toBe(200);
      expect(updated.body.data).toMatchObject({ initialPrompt: 'Say hello', voice: 'voice_3' });
      expect(toText.status).toBe(400);
    });

    it('refuses chat with a voice agent', async () => {
      const res = await platform.api('POST', `/agent/${echoId}/chat`, { token: owner.token, body: { prompt: 'hi' } });
      expect(res.status).toBe(400);
    });
  });

  describe('a browser session', () => {
    it('echoes audio at 24 kHz, with transcripts, and ends with session_end', async () => {
      // Prepare
      const client = await open(`/ws/${echoId}?token=${owner.token}`);
      const ready = await client.json((f) => f.type === 'ready');

      // Act: three 100 ms frames of a constant level at 16 kHz
      for (let i = 0; i < 3; i++) client.send(pcm(1000, 1600));
      await client.until(() => client.received.json.filter((f) => f.type === 'transcript' && f.text === 'heard 3200 bytes').length === 3);
      await client.until(() => client.received.binary.reduce((n, b) => n + b.length, 0) >= 14_400 - 96);
      client.send({ type: 'end' });
      const end = await client.json((f) => f.type === 'session_end');
      const closed = await client.closed;

      // Assess: 300 ms at 24 kHz is 7200 samples (less the filter's delay of 24 samples, which waits for more audio)
      expect(ready.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const out = Buffer.concat(client.received.binary);
      expect(out.length).toBeGreaterThanOrEqual(14_400 - 96);
      expect(out.length).toBeLessThanOrEqual(14_400);
      const middle = samplesOf(out).slice(200, 7000);
      expect(Math.min(...middle)).toBeGreaterThanOrEqual(998);
      expect(Math.max(...middle)).toBeLessThanOrEqual(1002);
      expect(client.received.binary.every((frame) => frame.length <= 960)).toBe(true);
      expect(client.received.json.find((f) => f.type === 'transcript')).toEqual({ type: 'transcript', text: 'heard 3200 bytes', role: 'user', is_final: true });
      expect(end).toEqual({ type: 'session_end', seconds: expect.any(Number), credits: expect.any(Number) });
      expect(end.credits).toBe(Math.max(2, Math.round(((end.seconds * 50) / 60) * 10_000) / 10_000));
      expect(closed.code).toBe(1000);
    });

    it('answers typed text with transcripts, and reports tools', async () => {
      // Prepare
      const client = await open(`/ws/${echoId}?token=${owner.token}`);
      await client.json((f) => f.type === 'ready');

      // Act
      client.send({ type: 'text', text: 'hello there' });
      const answer = await client.json((f) => f.type === 'transcript' && f.role === 'assistant');
      client.send({ type: 'text', text: 'tool' });
      const tool = await client.json((f) => f.type === 'tool');
      client.send({ type: 'end' });
      await client.closed;

      // Assess
      expect(client.received.json.find((f) => f.type === 'transcript' && f.role === 'user')).toMatchObject({ text: 'hello there', is_final: true });
      expect(answer).toEqual({ type: 'transcript', text: 'echo: hello there', role: 'assistant', is_final: true });
      expect(tool).toEqual({ type: 'tool', name: 'lookup_weather' });
    });

    it('lets the agent speak first when it has an initial prompt', async () => {
      // Prepare
      const agentId = await createAgent(owner.token, { agentName: 'greeter', initialPrompt: 'Greet the caller' });

      // Act: nothing is sent
      const client = await open(`/ws/${agentId}?token=${owner.token}`);
      const greeting = await client.json((f) => f.type === 'transcript' && f.role === 'assistant');
      client.send({ type: 'end' });
      await client.closed;

      // Assess
      expect(greeting.text).toBe('echo: Greet the caller');
    });

    it('drops queued audio on barge-in and says interrupted; later audio still comes', async () => {
      // Prepare: 20 s of speech produced at once, paced out to the caller
      const client = await open(`/ws/${echoId}?token=${owner.token}`);
      await client.json((f) => f.type === 'ready');
      client.send({ type: 'text', text: 'long:200' });
      await client.until(() => client.received.binary.length > 0);

      // Act: the caller talks over it
      client.send({ type: 'text', text: 'barge' });
      await client.json((f) => f.type === 'interrupted');
      await client.json((f) => f.type === 'transcript' && f.text === 'after interruption');
      await client.until(() => {
        const at = client.received.all.findIndex((f) => f.kind === 'json' && f.value.type === 'interrupted');
        return client.received.all.slice(at).some((f) => f.kind === 'binary');
      });
      client.send({ type: 'end' });
      await client.closed;

      // Assess
      const at = client.received.all.findIndex((f) => f.kind === 'json' && f.value.type === 'interrupted');
      const before = client.received.all.slice(0, at).filter((f) => f.kind === 'binary');
      const after = client.received.all.slice(at).filter((f) => f.kind === 'binary');
      const beforeBytes = before.reduce((n, f) => n + f.value.length, 0);
      expect(beforeBytes).toBeLessThan(200 * 4800);
      expect(after.length).toBeGreaterThan(0);
      for (const frame of after) expect(samplesOf(frame.value as Buffer).every((s) => s === 7)).toBe(true);
    });

    it('authenticates by a first auth message', async () => {
      // Act
      const client = await open(`/ws/${echoId}`);
      client.send({ type: 'auth', token: owner.token });
      const ready = await client.json((f) => f.type === 'ready');
      client.send({ type: 'end' });
      await client.closed;

      // Assess
      expect(ready.type).toBe('ready');
    });
  });

  describe("the owner's keys", () => {
    const KEY = 'sk-voice-OWNERS-KEY-0123456789';
    /** `note: ` is 6 bytes, so the key's base64 begins on a character: this is the key's part of it. */
    const encodedKey = Buffer.from(`note: ${KEY}`).toString('base64').slice(8, 40);
    /** Says the key every way user code can: whole, in base64, cut across two deltas, as a tool's name and in an error. */
    const LEAKY = voiceAgentSource({
      preamble: 'import base64\nimport json',
      send: `
        key = json.loads(SVC_KEYS_JSON)["svc"]
        said = [
            {"type": "bidi_transcript_stream", "role": "assistant", "text": "the key is " + key, "is_final": True},
            {"type": "bidi_transcript_stream", "role": "assistant", "is_final": True,
             "text": "encoded " + base64.b64encode(("note: " + key).encode()).decode()},
            {"type": "bidi_transcript_stream", "role": "assistant", "text": "cut " + key[:9], "is_final": False},
            {"type": "bidi_transcript_stream", "role": "assistant", "text": key[9:] + " end", "is_final": False},
            {"type": "tool_use_stream", "current_tool_use": {"toolUseId": "t1", "name": "tool_" + key}},
            {"type": "bidi_error", "message": "boom " + key},
            {"type": "bidi_transcript_stream", "role": "assistant", "text": "done", "is_final": True},
        ]
        for event in said:
            await self.events.put(event)`,
    });

    /** The frames one caller gets from the leaky agent after saying something. */
    async function framesFor(token: string, agentId: string): Promise<Record<string, any>[]> {
      const client = await open(`/ws/${agentId}?token=${token}`);
      await client.json((f) => f.type === 'ready');
      client.send({ type: 'text', text: 'go' });
      await client.json((f) => f.type === 'transcript' && f.text === 'done');
      client.send({ type: 'end' });
      await client.closed;
      return client.received.json;
    }

    it('stay out of every frame a caller who is not the owner gets: transcripts (whole, base64, cut across deltas), tools and errors', async () => {
      // Prepare: a public voice agent whose owner stored a key
      const keyOwner = await createUser(platform, { alias: 'voice-key-owner', credits: 100 });
      const caller = await createUser(platform, { alias: 'voice-key-caller', credits: 100 });
      const stored = await platform.api('POST', '/keys/store', { token: keyOwner.token, body: { serviceName: 'svc', apiKey: KEY } });
      expect(stored.status, stored.text).toBe(200);
      const agentId = await createAgent(keyOwner.token, { agentName: 'leaky-voice', visibility: 'public', sourceCode: LEAKY });

      // Act
      const callers = await framesFor(caller.token, agentId);
      const owners = await framesFor(keyOwner.token, agentId);

      // Assess: the caller gets none of it, in any form
      const text = JSON.stringify(callers);
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(KEY.slice(0, 12));
      expect(text).not.toContain(encodedKey);
      const transcripts = callers.filter((f) => f.type === 'transcript').map((f) => f.text as string);
      expect(transcripts[0]).toBe('the key is [REDACTED]');
      expect(transcripts[1]).toMatch(/^encoded \S*\[REDACTED\]/);
      expect(transcripts.slice(2, -1).join('')).toBe('cut [REDACTED] end');
      expect(callers.find((f) => f.type === 'tool')).toEqual({ type: 'tool', name: 'tool_[REDACTED]' });
      expect(callers.find((f) => f.type === 'error')).toMatchObject({ message: 'boom [REDACTED]' });
      // The owner hears their own key, as in text chat; an error is scrubbed for everyone.
      expect(owners.find((f) => f.type === 'transcript')?.text).toBe(`the key is ${KEY}`);
      expect(owners.find((f) => f.type === 'error')).toMatchObject({ message: 'boom [REDACTED]' });
    });
  });

  describe('refusals close the socket with a code and a reason', () => {
    it('4401 bad or missing credentials, 4404 no such agent, 4403 private agent of someone else, 4400 not a voice agent, 4402 no credits', async () => {
      // Prepare
      const stranger = await createUser(platform, { alias: 'voice-stranger', credits: 1000 });
      const poor = await createUser(platform, { alias: 'voice-poor', credits: 1 });
      const textAgent = await platform.api('POST', '/agent/create', {
        token: owner.token,
        body: { agentName: 'text-agent', description: 'd', sourceCode: TEXT_ECHO, visibility: 'public' },
      });
      const publicVoice = await createAgent(owner.token, { agentName: 'public-voice', visibility: 'public' });
      const closeOf = async (path: string, first?: object | Buffer) => {
        const client = await open(path);
        if (first !== undefined) client.send(first);
        return client.closed;
      };

      // Act
      const results = await Promise.all([
        closeOf(`/ws/${echoId}?token=svc_ut_notatoken`),
        closeOf(`/ws/${echoId}`, { type: 'text', text: 'no auth first' }),
        closeOf(`/ws/${echoId}`, pcm(0, 160)),
        closeOf(`/ws/${randomUUID()}?token=${owner.token}`),
        closeOf(`/ws/not-a-uuid?token=${owner.token}`),
        closeOf(`/ws/${echoId}?token=${stranger.token}`),
        closeOf(`/ws/${textAgent.body.data.agentId}?token=${owner.token}`),
        closeOf(`/ws/${publicVoice}?token=${poor.token}`),
      ]);

      // Assess
      expect(results.map((r) => r.code)).toEqual([4401, 4401, 4401, 4404, 4404, 4403, 4400, 4402]);
      for (const result of results) expect(result.reason.length).toBeGreaterThan(0);
      expect(await credits(poor.token)).toBe(1);
    });

    it('1009 for a message over the frame size cap', async () => {
      // Prepare
      const client = await open(`/ws/${echoId}?token=${owner.token}`);
      await client.json((f) => f.type === 'ready');

      // Act: 64 KiB is the cap
      client.send(Buffer.alloc(64 * 1024 + 2));
      const closed = await client.closed;

      // Assess
      expect(closed.code).toBe(1009);
      await sessionsGone();
    });

    it('4429 past the per-user limit of sessions at once', async () => {
      // Prepare: the platform allows two
      const first = await open(`/ws/${echoId}?token=${owner.token}`);
      const second = await open(`/ws/${echoId}?token=${owner.token}`);
      await first.json((f) => f.type === 'ready');
      await second.json((f) => f.type === 'ready');

      // Act
      const third = await open(`/ws/${echoId}?token=${owner.token}`);
      const refused = await third.closed;
      first.send({ type: 'end' });
      second.send({ type: 'end' });
      await Promise.all([first.closed, second.closed]);

      // Assess
      expect(refused.code).toBe(4429);
    });
  });

  describe('phones (Twilio Media Streams)', () => {
    it('takes μ-law in, sends 20 ms μ-law frames out, and clears the caller’s buffer on barge-in', async () => {
      // Prepare: the agent speaks first, 10 s of it
      const agentId = await createAgent(owner.token, { agentName: 'phone-voice', initialPrompt: 'long:100' });
      const { client, twilio } = await twilioCall(`${voiceUrl}/ws/twilio/${agentId}`, 'barge-in', { token: owner.token });
      await client.until(() => client.received.json.some((f) => f.event === 'media'));

      // Act: the caller speaks loudly over the agent (20 ms μ-law frames)
      const loud = pcmToMulaw(Int16Array.from({ length: 160 }, (_, i) => (i % 2 ? 30000 : -30000)));
      for (let i = 0; i < 5; i++) client.send(twilio.media(loud));
      const clear = await client.json((f) => f.event === 'clear');
      client.send(twilio.stop());
      const closed = await client.closed;

      // Assess
      expect(clear).toEqual({ event: 'clear', streamSid: twilio.streamSid });
      const media = client.received.json.filter((f) => f.event === 'media');
      expect(media.length).toBeGreaterThan(0);
      expect(media.length).toBeLessThan(500);
      for (const frame of media) {
        expect(frame.streamSid).toBe(twilio.streamSid);
        expect(Buffer.from(frame.media.payload, 'base64').length).toBe(160);
      }
      const level = mulawToPcm(Buffer.from(media[5]!.media.payload, 'base64'));
      expect(Math.abs(level[80]! - 1000)).toBeLessThan(64);
      expect(closed.code).toBe(1000);
      expectOnlyTwilioMessages(client);
    });

    it('echoes phone audio back as phone audio, token in the query, and ends the call the caller ends with the end mark', async () => {
      // Prepare
      const { client, twilio } = await twilioCall(`${voiceUrl}/ws/twilio/${echoId}?token=${owner.token}`, 'echo', {});
      const tone = pcmToMulaw(Int16Array.from({ length: 160 }, () => 2000));

      // Act: 200 ms in 20 ms frames
      for (let i = 0; i < 10; i++) client.send(twilio.media(tone));
      await client.until(() => client.received.json.filter((f) => f.event === 'media').length >= 8);
      client.send(twilio.stop());
      const closed = await client.closed;

      // Assess
      const media = client.received.json.filter((f) => f.event === 'media');
      const level = mulawToPcm(Buffer.from(media[4]!.media.payload, 'base64'));
      expect(Math.abs(level[80]! - 2000)).toBeLessThan(100);
      expect(client.received.json.at(-1)).toEqual(endMarkOf(twilio));
      expect(closed.code).toBe(1000);
      expectOnlyTwilioMessages(client);
    });
  });

  describe('billing and the end of a session', () => {
    it('bills 50 credits a minute per second, debited while the session runs, and records the session', async () => {
      // Prepare
      const { user, agentId, client } = await readySession('voice-billed', 500);

      // Act: 90 s pass on the platform's clock; the meter pays for them while the session runs
      platform.clock.advance(90_000);
      for (let balance = await credits(user.token); balance > 500 - 75; balance = await credits(user.token)) await new Promise((r) => setTimeout(r, 100));
      client.send({ type: 'end' });
      const end = await client.json((f) => f.type === 'session_end');
      await client.closed;
      const logs = await platform.api('GET', '/logs', { token: user.token });

      // Assess
      expect(end.seconds).toBeGreaterThanOrEqual(90);
      expect(end.credits).toBe(Math.round(((end.seconds * 50) / 60) * 10_000) / 10_000);
      expect(await credits(user.token)).toBeCloseTo(500 - end.credits, 3);
      const record = logs.body.data.logs.find((log: any) => log.resourceType === 'voice');
      expect(record).toMatchObject({ resourceId: agentId, requestType: 'VOICE_SESSION', status: 'success', creditsUsed: end.credits });
      expect(record.metrics.durationMs).toBeGreaterThanOrEqual(90_000);
      expect(record.rootRequestId).toBe(record.requestId);
    });

    it('charges the minimum of 2 credits for a short session', async () => {
      // Prepare
      const user = await createUser(platform, { alias: 'voice-short', credits: 100 });
      const agentId = await createAgent(user.token, { agentName: 'short-voice' });

      // Act
      const client = await open(`/ws/${agentId}?token=${user.token}`);
      await client.json((f) => f.type === 'ready');
      client.send({ type: 'end' });
      const end = await client.json((f) => f.type === 'session_end');

      // Assess
      expect(end.credits).toBe(Math.max(2, Math.round(((end.seconds * 50) / 60) * 10_000) / 10_000));
      expect(end.credits).toBeGreaterThanOrEqual(2);
      expect(await credits(user.token)).toBeCloseTo(100 - end.credits, 3);
    });

    it('stops a session whose balance runs out: an error frame, then close 4402', async () => {
      // Prepare: 3 credits pay the minimum and 1.2 s more
      const { user, client } = await readySession('voice-runs-out', 3);

      // Act
      platform.clock.advance(30_000);
      const error = await client.json((f) => f.type === 'error');
      const end = await client.json((f) => f.type === 'session_end');
      const closed = await client.closed;

      // Assess
      expect(error).toMatchObject({ type: 'error', code: 'INSUFFICIENT_CREDITS' });
      expect(closed.code).toBe(4402);
      // Billed by the whole seconds the balance paid for: 3 of the 3.6 s.
      expect(end).toMatchObject({ seconds: 3, credits: 2.5 });
      expect(await credits(user.token)).toBeCloseTo(0.5, 3);
    });

    it('ends a phone call whose balance runs out with the end mark and close 4402, never a frame outside Twilio’s schema', async () => {
      // Prepare: 3 credits; the agent speaks first, so its first audio shows the session is live
      const user = await createUser(platform, { alias: 'voice-phone-runs-out', credits: 3 });
      const agentId = await createAgent(user.token, { agentName: 'phone-runs-out', initialPrompt: 'long:1' });
      const { client, twilio } = await twilioCall(`${voiceUrl}/ws/twilio/${agentId}`, 'runs-out', { token: user.token });
      await client.json((f) => f.event === 'media');

      // Act
      platform.clock.advance(30_000);
      const closed = await client.closed;

      // Assess: Twilio hears the end mark and the close; the reason is in the session record
      expect(closed.code).toBe(4402);
      expect(client.received.json.at(-1)).toEqual(endMarkOf(twilio));
      expectOnlyTwilioMessages(client);
      expect(await voiceRecord(platform, user.token)).toMatchObject({ status: 'error', error: { code: 'INSUFFICIENT_CREDITS' } });
    });

    it('ends the process and bills the session when the client vanishes mid-stream', async () => {
      // Prepare: the platform keeps a spare session process; the call is given the one waiting
      // before it connects (a new spare is started meanwhile, and stays)
      const sessionProcesses = () => descendantProcesses((args) => args.includes('platform_runtime.bidi_session'));
      const waitingBefore = sessionProcesses();
      const { user, agentId, client } = await readySession('voice-vanish', 100);
      for (let i = 0; i < 5; i++) client.send(pcm(500, 320));
      await client.until(() => client.received.binary.length > 0);
      const session = sessionProcesses().filter((pid) => waitingBefore.includes(pid));
      expect(session.length).toBeGreaterThan(0);

      // Act: the connection drops without a close frame
      client.ws.terminate();
      await sessionsGone();
      const logs = await platform.api('GET', '/logs', { token: user.token });

      // Assess
      expect(sessionProcesses().filter((pid) => session.includes(pid))).toEqual([]);
      const record = logs.body.data.logs.find((log: any) => log.resourceType === 'voice');
      expect(record).toMatchObject({ resourceId: agentId, creditsUsed: expect.any(Number) });
      expect(record.creditsUsed).toBeGreaterThanOrEqual(2);
      expect(await credits(user.token)).toBeCloseTo(100 - record.creditsUsed, 3);
    });
  });

  describe('a stalled caller', () => {
    it('is held to a bounded queue and never holds up another session', async () => {
      // Prepare: a caller that stops reading its socket, and another caller
      const stalled = await readySession('voice-stalled', 100);
      const other = await readySession('voice-unstalled', 100);
      const droppedBefore = (await metrics()).droppedFramesOut!;
      (stalled.client.ws as unknown as { _socket: { pause(): void } })._socket.pause();

      // Act: the stalled caller's agent produces 130 s of speech at once (more than a session
      // may queue); meanwhile the other caller talks
      stalled.client.send({ type: 'text', text: 'long:1300' });
      for (;;) {
        if ((await metrics()).droppedFramesOut! > droppedBefore) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      other.client.send(pcm(1234, 1600));
      await other.client.until(() => other.client.received.binary.length > 0);
      const active = (await metrics()).activeSessions;
      stalled.client.ws.terminate();
      other.client.send({ type: 'end' });
      await other.client.closed;
      await sessionsGone();

      // Assess: the oldest audio of the stalled session was dropped at its bound; the other
      // session's echo came through meanwhile, at 24 kHz (1600 samples at 16 kHz are 2400)
      expect((await metrics()).droppedFramesOut).toBeGreaterThan(droppedBefore);
      expect(active).toBe(2);
      const echoed = other.client.received.binary.reduce((n, frame) => n + frame.length, 0);
      expect(echoed).toBeGreaterThan(0);
      expect(other.client.received.json.some((f) => f.type === 'transcript' && f.text === 'heard 3200 bytes')).toBe(true);
    });
  });

  describe('health and metrics', () => {
    it('tells anyone only whether the host is up; the counters go to platform operators alone', async () => {
      // Prepare
      const http = voiceUrl.replace(/^ws/, 'http');
      const user = await createUser(platform, { alias: 'voice-metrics-user', credits: 1 });

      // Act
      const health = await fetch(`${http}/health`);
      const anonymous = await fetch(`${http}/metrics`);
      const asUser = await fetch(`${http}/metrics`, { headers: { authorization: `Bearer ${user.token}` } });
      const asOperator = await fetch(`${http}/metrics`, { headers: { authorization: `Bearer ${platform.adminToken}` } });

      // Assess
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      expect(health.headers.get('x-content-type-options')).toBe('nosniff');
      expect(anonymous.status).toBe(401);
      expect(JSON.stringify(await anonymous.json())).not.toMatch(/Sessions|Frames/);
      expect(asUser.status).toBe(403);
      expect(asOperator.status).toBe(200);
      const body = (await asOperator.json()) as Record<string, number>;
      expect(body).toMatchObject({ activeConnections: expect.any(Number), activeSessions: 0, totalSessions: expect.any(Number) });
      expect(body.totalSessions).toBeGreaterThan(0);
      expect(Object.values(body).every((v) => typeof v === 'number')).toBe(true);
    });
  });
});

describe('voice session limits', () => {
  let platform: TestPlatform;
  let voiceUrl: string;
  let user: Awaited<ReturnType<typeof createUser>>;
  let agentId: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform({ voiceSpares: 1, env: { VOICE_IDLE_TIMEOUT_SEC: '1', VOICE_MAX_SESSION_SEC: '3' }, logLines });
    voiceUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.voiceUrl;
    user = await createUser(platform, { alias: 'voice-limits', credits: 100 });
    const created = await platform.api('POST', '/agent/create', {
      token: user.token,
      body: { agentName: 'limits-voice', description: 'd', sourceCode: ECHO, agentType: 'bidi' },
    });
    agentId = created.body.data.agentId;
  });

  afterAll(async () => {
    await platform?.stop({ removeData: true });
  });

  /** A new user and a voice agent of theirs, so the session record read back is the one of the test. */
  const callerWithAgent = async (alias: string) => {
    const caller = await createUser(platform, { alias, credits: 100 });
    const created = await platform.api('POST', '/agent/create', {
      token: caller.token,
      body: { agentName: `${alias}-agent`, description: 'd', sourceCode: ECHO, agentType: 'bidi' },
    });
    expect(created.status, created.text).toBe(200);
    return { caller, agentId: created.body.data.agentId as string };
  };

  const session = async () => {
    const client = await Client.connect(`${voiceUrl}/ws/${agentId}?token=${user.token}`);
    await client.json((f) => f.type === 'ready');
    return client;
  };

  it('ends a session the caller leaves silent with IDLE_TIMEOUT and close 4408, billed', async () => {
    // Act: nothing is sent
    const client = await session();
    const closed = await client.closed;

    // Assess
    expect(client.received.json.find((f) => f.type === 'error')).toMatchObject({ code: 'IDLE_TIMEOUT' });
    expect(client.received.json.find((f) => f.type === 'session_end')?.credits).toBeGreaterThanOrEqual(2);
    expect(closed.code).toBe(4408);
  });

  it('on a phone call, ends an idle call with the end mark alone and closes after Twilio says the last audio was played (its echo)', async () => {
    // Prepare: a Twilio stream left silent, so the bridge ends it; its marks are echoed by hand
    const { caller, agentId } = await callerWithAgent('voice-phone-idle');
    const { client, twilio } = await twilioCall(`${voiceUrl}/ws/twilio/${agentId}`, 'idle', { token: caller.token }, { echoMarks: false });
    const { ws } = client;

    // Act: the end mark comes; the socket stays open until the mark is echoed back
    const mark = await client.json((f) => f.event === 'mark');
    // A round trip after the mark: had the bridge closed right after it, its close would come first.
    await new Promise<void>((resolve, reject) => {
      ws.once('pong', () => resolve());
      ws.once('close', () => reject(new Error('closed before the mark was echoed')));
      ws.ping();
    });
    const openWhenMarked = ws.readyState === WebSocket.OPEN;
    client.send(twilio.mark('session_end'));
    const closed = await client.closed;

    // Assess: Twilio got nothing but its own kinds of message; the reason stays with the platform
    expect(mark).toEqual(endMarkOf(twilio));
    expect(openWhenMarked).toBe(true);
    expect(closed.code).toBe(4408);
    expectOnlyTwilioMessages(client);
    expect(await voiceRecord(platform, caller.token)).toMatchObject({ status: 'error', error: { code: 'IDLE_TIMEOUT' } });
    const ended = logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line['message'] === 'voice session ended by the platform');
    expect(ended).toContainEqual(expect.objectContaining({ code: 'IDLE_TIMEOUT', channel: 'twilio' }));
  });

  it('on a phone call, ends it at its maximum length with the end mark and the close, never a frame outside Twilio’s schema', async () => {
    // Prepare
    const { caller, agentId } = await callerWithAgent('voice-phone-length');
    const { client, twilio } = await twilioCall(`${voiceUrl}/ws/twilio/${agentId}`, 'length', { token: caller.token });

    // Act: the caller keeps talking, past the 3 s limit
    const closed = await talkUntilClosed(client, twilio);

    // Assess
    expect(closed.code).toBe(1000);
    expect(client.received.json.at(-1)).toEqual(endMarkOf(twilio));
    expectOnlyTwilioMessages(client);
    expect(await voiceRecord(platform, caller.token)).toMatchObject({ status: 'error', error: { code: 'SESSION_LIMIT' } });
  });

  it('on a stream that never said `start` (token in the query), ends it with the close alone: a mark needs a streamSid', async () => {
    // Prepare: Twilio's `connected` and nothing more
    const { caller, agentId } = await callerWithAgent('voice-phone-no-start');
    const { client } = await twilioCall(`${voiceUrl}/ws/twilio/${agentId}?token=${caller.token}`, 'no-start', null);

    // Act: the caller stays silent past the idle limit
    const closed = await client.closed;

    // Assess
    expect(closed.code).toBe(4408);
    expect(client.received.json).toEqual([]);
    expect(client.received.binary).toEqual([]);
  });

  it('ends a session at its maximum length with SESSION_LIMIT, and with no other error', async () => {
    // Act: the caller keeps talking, past the 3 s limit. The limit counts from the session's open,
    // its start included: not waiting for `ready` keeps the test true on a machine where the agent
    // takes longer than the limit to start (it then ends starting, as it should).
    const client = await Client.connect(`${voiceUrl}/ws/${agentId}?token=${user.token}`);
    const talking = setInterval(() => client.send(pcm(0, 320)), 200);
    const closed = await client.closed;
    clearInterval(talking);

    // Assess: the kill that ends the agent's process is the platform's, not a crash to report
    expect(client.received.json.filter((f) => f.type === 'error')).toEqual([
      { type: 'error', code: 'SESSION_LIMIT', message: 'a voice session lasts at most 3 s' },
    ]);
    expect(client.received.json.find((f) => f.type === 'session_end')).toBeDefined();
    expect(closed.code).toBe(1000);
  });
});

/** A voice agent whose `start()` takes `seconds` (forever when negative) before it listens. */
const slowStarting = (seconds: number) => voiceAgentSource({ preamble: 'from asyncio import sleep', start: `await sleep(${seconds < 0 ? '10**6' : seconds})` });

describe('voice agents that start slowly', () => {
  let platform: TestPlatform;
  let voiceUrl: string;
  let user: Awaited<ReturnType<typeof createUser>>;

  beforeAll(async () => {
    platform = await startTestPlatform({ voiceSpares: 1, env: { VOICE_IDLE_TIMEOUT_SEC: '1', VOICE_START_TIMEOUT_SEC: '10' } });
    voiceUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.voiceUrl;
    user = await createUser(platform, { alias: 'voice-slow', credits: 100 });
  });

  afterAll(async () => {
    await platform?.stop({ removeData: true });
  });

  const credits = async (): Promise<number> => (await platform.api('GET', '/user/credits', { token: user.token })).body.data.credits;

  const agentOf = async (agentName: string, sourceCode: string, token = user.token): Promise<string> => {
    const created = await platform.api('POST', '/agent/create', {
      token,
      body: { agentName, description: 'd', sourceCode, agentType: 'bidi' },
    });
    expect(created.status, created.text).toBe(200);
    return created.body.data.agentId as string;
  };
  const open = async (agentName: string, seconds: number) =>
    Client.connect(`${voiceUrl}/ws/${await agentOf(agentName, slowStarting(seconds))}?token=${user.token}`);

  it('counts the caller idle only once the session is live, not while the agent starts', async () => {
    // Act: a silent caller, an agent that takes twice the 1 s idle limit to start
    const client = await open('voice-slow-start', 2);
    const ready = await client.json((f) => f.type === 'ready' || f.type === 'error');
    const closed = await client.closed;

    // Assess: it became ready, and only then ended as idle
    expect(ready.type).toBe('ready');
    expect(client.received.json.find((f) => f.type === 'error')).toMatchObject({ code: 'IDLE_TIMEOUT' });
    expect(closed.code).toBe(4408);
  });

  // The two agents that never start each wait out the 10 s start limit: side by side, not one after the other.
  it.concurrent('ends a session whose agent never starts with RUNTIME_UNAVAILABLE and close 1011, at no cost to the caller', async () => {
    // Prepare
    const before = await credits();

    // Act: the caller keeps talking; the agent's start never returns
    const client = await open('voice-never-starts', -1);
    const talking = setInterval(() => client.send(pcm(0, 320)), 200);
    const closed = await client.closed;
    clearInterval(talking);
    const after = await credits();

    // Assess
    expect(client.received.json.some((f) => f.type === 'ready')).toBe(false);
    expect(client.received.json.find((f) => f.type === 'error')).toMatchObject({ code: 'RUNTIME_UNAVAILABLE', message: expect.stringContaining('10 s') });
    expect(client.received.json.find((f) => f.type === 'session_end')).toEqual({ type: 'session_end', seconds: 0, credits: 0 });
    expect(after).toBe(before);
    expect(closed.code).toBe(1011);
  });

  it.concurrent('ends a phone call whose agent never starts with the end mark and close 1011, never a frame outside Twilio’s schema', async () => {
    // Prepare
    const caller = await createUser(platform, { alias: 'voice-phone-never-starts', credits: 100 });
    const agentId = await agentOf('phone-never-starts', slowStarting(-1), caller.token);
    const { client, twilio } = await twilioCall(`${voiceUrl}/ws/twilio/${agentId}`, 'never-starts', { token: caller.token });

    // Act: the caller keeps talking; the agent's start never returns
    const closed = await talkUntilClosed(client, twilio);

    // Assess
    expect(closed.code).toBe(1011);
    expect(client.received.json).toEqual([endMarkOf(twilio)]);
    expectOnlyTwilioMessages(client);
    expect(await voiceRecord(platform, caller.token)).toMatchObject({ status: 'error', error: { code: 'RUNTIME_UNAVAILABLE' } });
  });

  it('ends a phone call whose agent fails with the end mark and the close, never a frame outside Twilio’s schema', async () => {
    // Prepare: an agent that raises as it starts
    const failing = await createUser(platform, { alias: 'voice-phone-fails', credits: 100 });
    const agentId = await agentOf('phone-fails', voiceAgentSource({ start: 'raise RuntimeError("the model is down")' }), failing.token);

    // Act
    const { client, twilio } = await twilioCall(`${voiceUrl}/ws/twilio/${agentId}`, 'fails', { token: failing.token });
    const closed = await client.closed;

    // Assess
    expect(closed.code).toBe(1000);
    expect(client.received.json).toEqual([endMarkOf(twilio)]);
    expectOnlyTwilioMessages(client);
    expect(await voiceRecord(platform, failing.token)).toMatchObject({ status: 'error' });
  });
});
