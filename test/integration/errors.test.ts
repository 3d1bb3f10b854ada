import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

/** Every error response is envelope B: error text, code, request ids, and nothing internal. */
function expectEnvelopeB(body: Record<string, unknown>, code: string) {
  expect(body).toMatchObject({ code, error: expect.any(String), requestId: expect.any(String), rootRequestId: expect.any(String), parentRequestId: null });
  expect(JSON.stringify(body)).not.toMatch(/\bat .+\.ts:\d+|node_modules|stack/);
}

describe('error envelopes for bad input', () => {
  let platform: TestPlatform;
  let token: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    token = (await createUser(platform, { alias: 'errs' })).token;
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('answers an unknown route with a 404 envelope', async () => {
    const res = await platform.api('GET', '/no/such/endpoint', { token });
    expect(res.status).toBe(404);
    expectEnvelopeB(res.body, 'NOT_FOUND');
    expect(res.headers.get('x-request-id')).toBe(res.body.requestId);
  });

  it('answers a wrong method with 405 and the allowed methods', async () => {
    const res = await platform.api('DELETE', '/user/info', { token });
    expect(res.status).toBe(405);
    expectEnvelopeB(res.body, 'METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toBe('GET');
  });

  it('names malformed JSON', async () => {
    const res = await platform.api('POST', '/user/token/create', { token, rawBody: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expectEnvelopeB(res.body, 'MALFORMED_JSON');
    expect(res.body.error).toMatch(/not valid JSON/);
  });

  it('names a wrong content type', async () => {
    const res = await platform.api('POST', '/user/token/create', {
      token,
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(400);
    expectEnvelopeB(res.body, 'UNSUPPORTED_CONTENT_TYPE');
    expect(res.body.error).toContain('application/json');
    expect(res.body.error).toContain('application/x-www-form-urlencoded');
  });

  it('names every invalid field', async () => {
    const res = await platform.api('POST', '/user/token/create', { token, body: { name: '', expiresInDays: 0 } });
    expect(res.status).toBe(400);
    expectEnvelopeB(res.body, 'INVALID_PARAMETERS');
    expect(res.body.error).toContain('name');
    expect(res.body.error).toContain('expiresInDays');
  });

  it('says which required field is missing', async () => {
    const res = await platform.api('POST', '/user/alias', { token, body: {} });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('alias: is required');
  });

  it('refuses a body over the limit before reading it, by declared length', async () => {
    const res = await platform.api('PUT', '/user/profile', { token, rawBody: 'x'.repeat(300 * 1024), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(413);
    expectEnvelopeB(res.body, 'PAYLOAD_TOO_LARGE');
  });

  it('refuses a chunked body once it passes the limit', async () => {
    // Prepare: chunked transfer has no Content-Length, so the limit must hold while reading.
    const url = new URL('/user/profile', platform.url);
    // Act
    const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        url,
        { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 40; i++) req.write('y'.repeat(8 * 1024));
      req.end();
    });
    // Assess
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers 401 on required routes without credentials and 403 on admin routes for users', async () => {
    const anonymous = await platform.api('GET', '/user/token/list');
    const user = await platform.api('POST', '/admin/users', { token, body: {} });
    expect(anonymous.status).toBe(401);
    expectEnvelopeB(anonymous.body, 'AUTHENTICATION_REQUIRED');
    expect(user.status).toBe(403);
    expectEnvelopeB(user.body, 'ACCESS_DENIED');
  });

  it('carries lineage from the platform header into the envelope', async () => {
    const res = await platform.api('GET', '/user/info', { token, headers: { 'X-Svc-Lineage': 'root=root-1;parent=parent-2' } });
    expect(res.body).toMatchObject({ rootRequestId: 'root-1', parentRequestId: 'parent-2' });
    expect(res.body.requestId).not.toBe('parent-2');
  });

  it('answers CORS preflight', async () => {
    const res = await platform.api('OPTIONS', '/user/info', { headers: { origin: 'https://example.com', 'access-control-request-method': 'GET' } });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toContain('authorization');
    // Browser MCP clients send this after initialize.
    expect(res.headers.get('access-control-allow-headers')).toContain('mcp-protocol-version');
  });
});
