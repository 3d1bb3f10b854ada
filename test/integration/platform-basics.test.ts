import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

describe('local platform basics', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('answers health once ready', async () => {
    // Act
    const res = await platform.api('GET', '/health');
    // Assess
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('ok');
    expect(res.headers.get('x-request-id')).toBe(res.body.requestId);
  });

  it('publishes the discovery document with every host', async () => {
    const res = await platform.api('GET', '/.well-known/platform.json');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      baseUrl: platform.url,
      streamUrl: `${platform.url}/stream`,
      mcpUrl: platform.url,
      voiceUrl: `${platform.url.replace('http', 'ws')}/voice`,
      cdnUrl: `${platform.url}/cdn`,
      siteUrl: `${platform.url}/sites`,
      codeUrl: `${platform.url}/code`,
      openApiUrl: `${platform.url}/openapi.json`,
      docsUrl: `${platform.url}/docs`,
      version: expect.any(String),
    });
  });
});

describe('request logging', () => {
  it('logs requests to unknown routes like any other, with status and request id', async () => {
    // Prepare
    const logLines: string[] = [];
    const platform = await startTestPlatform({ logLines });
    try {
      // Act
      const res = await platform.api('GET', '/no/such/thing');
      // Assess
      const line = logLines.map((l) => JSON.parse(l)).find((r) => r.message === 'request' && r.path === '/no/such/thing');
      expect(line).toMatchObject({ route: 'fallback', method: 'GET', status: 404, requestId: res.body.requestId });
    } finally {
      await platform.stop({ removeData: true });
    }
  });
});
