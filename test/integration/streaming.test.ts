import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { requireUser } from '../../functions/core/auth/actor.ts';
import { defineStreamRoute } from '../../functions/core/http/route.ts';
import { defineArea } from '../../lib/manifest/define.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';
import { boundRoute } from '../../lib/local/handlers.ts';
import { createLocalServer } from '../../lib/local/server.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

/** A streaming route that exists only in this test, to exercise the shim without a product feature. */
const spec: RouteSpec = {
  id: 'test.stream-echo',
  method: 'POST',
  path: '/echo/{name}',
  host: 'stream',
  area: 'test',
  handler: 'stream-echo',
  auth: 'required',
  callers: 'role',
  mode: 'streaming',
  style: 'B',
  timeoutSec: 10,
  maxBodyBytes: 1024,
};

describe('streaming through the local streamifyResponse shim', () => {
  let platform: TestPlatform;
  let server: Server;
  let baseUrl: string;
  let token: string;
  let releaseSecondChunk: () => void = () => undefined;

  const definition = defineStreamRoute({
    params: z.object({ name: z.string() }),
    body: z.object({ parts: z.number().int().min(1).max(5) }),
    async run({ actor, params, body }, stream) {
      const user = requireUser(actor);
      stream.start(200, { 'content-type': 'text/plain; charset=utf-8', 'x-conversation-id': 'conv-1' });
      await stream.write(`hello ${params.name} from ${user.alias};`);
      // Only continue once the client has seen the first chunk: proves it was not buffered.
      await new Promise<void>((resolve) => (releaseSecondChunk = resolve));
      for (let i = 1; i < body.parts; i++) await stream.write(`part ${i};`);
      await stream.end();
    },
  });

  beforeAll(async () => {
    platform = await startTestPlatform();
    token = (await createUser(platform, { alias: 'streamer' })).token;
    server = createLocalServer({
      routes: [],
      streamRoutes: [boundRoute({ spec, definition, area: defineArea({ name: 'test' }) })],
      ports: () => platform.running.ports,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await platform.stop({ removeData: true });
  });

  it('delivers the first chunk before the handler writes the rest', async () => {
    // Act
    const received: string[] = [];
    const result = await new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
      const req = request(
        `${baseUrl}/stream/echo/world`,
        { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } },
        (res) => {
          res.on('data', (chunk: Buffer) => {
            received.push(chunk.toString());
            if (received.length === 1) releaseSecondChunk();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ parts: 3 }));
    });
    // Assess
    expect(result.status).toBe(200);
    expect(result.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(result.headers['x-conversation-id']).toBe('conv-1');
    expect(result.headers['x-request-id']).toEqual(expect.any(String));
    expect(received[0]).toBe('hello world from streamer;');
    expect(received.join('')).toBe('hello world from streamer;part 1;part 2;');
  });

  it('answers failures before the stream starts with an error envelope', async () => {
    // Act
    const anonymous = await fetch(`${baseUrl}/stream/echo/x`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    const invalid = await fetch(`${baseUrl}/stream/echo/x`, {
      method: 'POST',
      body: JSON.stringify({ parts: 9 }),
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    const wrongMethod = await fetch(`${baseUrl}/stream/echo/x`, { method: 'GET', headers: { authorization: `Bearer ${token}` } });
    // Assess
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { code: string }).code).toBe('AUTHENTICATION_REQUIRED');
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: string }).error).toContain('parts');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
  });
});
