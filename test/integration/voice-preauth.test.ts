/**
 * Strangers on the voice host (issue 30): sockets that have not authenticated are capped per
 * address and in all (one more is answered 429 before the handshake), and their Twilio `media`
 * frames are never decoded: audio before `start` closes the socket, and audio after a `start`
 * whose token fails is dropped unread (the bridge's `audioFramesIn` counter does not move).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { connect as tcpConnect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const PER_ADDRESS = 3;

let platform: TestPlatform;
let voiceUrl: string;

beforeAll(async () => {
  platform = await startTestPlatform({ env: { VOICE_MAX_UNAUTHENTICATED_PER_ADDRESS: String(PER_ADDRESS) } });
  voiceUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.voiceUrl;
});
afterAll(() => platform.stop({ removeData: true }));

/** One 20 ms Twilio media frame of μ-law silence. */
const media = JSON.stringify({
  event: 'media',
  streamSid: 'MZ1',
  media: { track: 'inbound', chunk: '1', timestamp: '0', payload: Buffer.alloc(160, 0xff).toString('base64') },
});

/** A socket to `path`: open, or refused before the handshake with the status it got. */
function connect(path: string): Promise<{ ws: WebSocket; status: null } | { ws: null; status: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${voiceUrl}${path}`);
    ws.once('open', () => resolve({ ws, status: null }));
    ws.once('unexpected-response', (_req, res) => resolve({ ws: null, status: res.statusCode ?? 0 }));
    ws.once('error', reject);
  });
}

/**
 * A WebSocket client by hand that never answers a close frame (as a flooding caller busy sending
 * does not): an open TCP socket to `path` after the handshake, and the bytes it receives after it.
 */
function rawSocket(path: string): Promise<{ socket: Socket; received: Buffer[] }> {
  const url = new URL(`${voiceUrl}${path}`);
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(Number(url.port), url.hostname);
    const received: Buffer[] = [];
    let head = Buffer.alloc(0);
    socket.once('error', reject);
    socket.once('connect', () =>
      socket.write(
        `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      ),
    );
    const onHead = (data: Buffer) => {
      head = Buffer.concat([head, data]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onHead);
      if (!head.subarray(0, 12).toString().includes(' 101')) return reject(new Error(head.toString()));
      received.push(head.subarray(end + 4));
      socket.on('data', (more: Buffer) => received.push(more));
      resolve({ socket, received });
    };
    socket.on('data', onHead);
  });
}

/** A masked text frame, as a client sends it. */
function clientFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const length = payload.length < 126 ? Buffer.from([0x80 | payload.length]) : Buffer.from([0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  const mask = randomBytes(4);
  return Buffer.concat([Buffer.from([0x81]), length, mask, payload.map((byte, i) => byte ^ mask[i % 4]!)]);
}

function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

async function metrics(): Promise<Record<string, number>> {
  const response = await fetch(`${voiceUrl.replace(/^ws/, 'http')}/metrics`, { headers: { authorization: `Bearer ${platform.adminToken}` } });
  return (await response.json()) as Record<string, number>;
}

describe('voice sockets before authentication', () => {
  it('answers 429 to one socket more than an address may hold unauthenticated, and takes one again once a place is free', async () => {
    // Prepare
    const open = [];
    for (let i = 0; i < PER_ADDRESS; i++) open.push(await connect(`/ws/twilio/${randomUUID()}`));
    const refusedBefore = (await metrics()).refusedUnauthenticated ?? 0;

    // Act
    const extra = await connect(`/ws/twilio/${randomUUID()}`);
    const first = open[0]!.ws!;
    const firstClosed = closed(first);
    first.close();
    await firstClosed;
    const again = await connect(`/ws/twilio/${randomUUID()}`);

    // Assess
    expect(open.every((socket) => socket.ws !== null)).toBe(true);
    expect(extra).toEqual({ ws: null, status: 429 });
    expect((await metrics()).refusedUnauthenticated).toBe(refusedBefore + 1);
    expect(again.ws).not.toBeNull();
    await Promise.all(
      [...open.slice(1), again].map((socket) => {
        const done = closed(socket.ws!);
        socket.ws!.close();
        return done;
      }),
    );
  });

  it('closes a Twilio socket whose audio comes before its start, without decoding the audio', async () => {
    // Prepare
    const { ws } = await connect(`/ws/twilio/${randomUUID()}`);
    const framesBefore = (await metrics()).audioFramesIn;
    const closing = closed(ws!);
    // Twilio takes only `media`, `mark` and `clear` from a server: a refused stream gets its close frame alone.
    const sent: string[] = [];
    ws!.on('message', (data) => sent.push(String(data)));

    // Act
    for (let i = 0; i < 20; i++) ws!.send(media);
    const close = await closing;

    // Assess
    expect(close).toEqual({ code: 4401, reason: 'authenticate first' });
    expect((await metrics()).audioFramesIn).toBe(framesBefore);
    expect(sent).toEqual([]);
  });

  it('drops the audio that follows a start with a bad token unread, and refuses the socket', async () => {
    // Prepare
    const { ws } = await connect(`/ws/twilio/${randomUUID()}`);
    const framesBefore = (await metrics()).audioFramesIn;
    const closing = closed(ws!);
    // Twilio takes only `media`, `mark` and `clear` from a server: a refused stream gets its close frame alone.
    const sent: string[] = [];
    ws!.on('message', (data) => sent.push(String(data)));

    // Act
    ws!.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
    ws!.send(JSON.stringify({ event: 'start', streamSid: 'MZ1', start: { streamSid: 'MZ1', callSid: 'CA1', customParameters: { token: 'svc_ut_forged' } } }));
    for (let i = 0; i < 50; i++) ws!.send(media);
    const close = await closing;

    // Assess
    expect(close.code).toBe(4401);
    expect((await metrics()).audioFramesIn).toBe(framesBefore);
    expect(sent).toEqual([]);
  });

  it('cuts the connection of a refused caller that does not answer the close, instead of reading on', async () => {
    // Prepare
    const { socket, received } = await rawSocket(`/ws/twilio/${randomUUID()}`);
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);

    // Act: audio before start, then more audio; the client never sends its close frame
    socket.write(clientFrame(media));
    for (let i = 0; i < 50; i++) socket.write(clientFrame(media));
    await ended;

    // Assess: the server closed with 4401 and then ended the TCP connection itself (ws would
    // otherwise wait 30 s, the test's own time limit, for the close frame this client never sends)
    const bytes = Buffer.concat(received);
    expect(bytes[0]).toBe(0x88);
    expect(bytes.readUInt16BE(2)).toBe(4401);
    expect(bytes.subarray(4, 2 + bytes[1]!).toString()).toBe('authenticate first');
  }, 15_000);
});
