import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { areas } from '../../lib/manifest/areas.ts';
import { routes } from '../../lib/manifest/routes.ts';
import { LOCAL_HOST_PREFIX } from '../../lib/local/server.ts';
import { callApi, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

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

  it('publishes the discovery document with the hosts the areas serve, and no others', async () => {
    const res = await platform.api('GET', '/.well-known/platform.json');
    expect(res.status).toBe(200);
    // No area serves the code host yet: its URL would answer only 404. Sites are served on a port of
    // their own, another origin than the API's; the voice bridge's WebSockets are ws(s); the CDN host
    // serves the embed widget.
    expect(res.body.data).toEqual({
      baseUrl: platform.url,
      cdnUrl: `${platform.url}/cdn`,
      streamUrl: `${platform.url}/stream`,
      mcpUrl: platform.url,
      siteUrl: platform.siteUrl,
      // Each user's site on an origin of its own under the site host (issue 30).
      siteUrlTemplate: `http://{alias}.localhost:${new URL(platform.siteUrl!).port}/`,
      voiceUrl: `${platform.url.replace(/^http/, 'ws')}/voice`,
      openApiUrl: `${platform.url}/openapi.json`,
      docsUrl: `${platform.url}/docs`,
      version: expect.any(String),
    });
  });

  it('lists only URLs that answer: each host has a route that is not the 404 of an unknown path', async () => {
    // Prepare
    const discovery = (await platform.api('GET', '/.well-known/platform.json')).body.data as Record<string, string>;
    const isFallback = (status: number, body: unknown) =>
      status === 404 && typeof body === 'object' && body !== null && String((body as { error?: unknown }).error).startsWith('No endpoint at');
    for (const [key, url] of Object.entries(discovery)) {
      if (!key.endsWith('Url')) continue;
      const host = key.slice(0, -'Url'.length);
      const service = areas.flatMap((area) => area.entryPoints).find((entry) => entry.kind === 'service' && entry.host === host);
      const asset = areas.flatMap((area) => area.assets).find((a) => a.host === host);
      if (asset !== undefined) {
        // Act: a host of browser assets (the widget on the CDN host)
        const answer = await fetch(`${url}/${asset.name}`);
        // Assess
        expect(answer.status, `${key}: GET ${url}/${asset.name}`).toBe(200);
      } else if (service !== undefined) {
        // Act: a service owns the host whole (the voice bridge): its health answers over HTTP
        const answer = await callApi(url.replace(/^ws/, 'http'), 'GET', '/health');
        // Assess
        expect(answer.status, `${key}: GET ${url}/health answered ${answer.status} ${answer.text}`).toBe(200);
      } else if (host in LOCAL_HOST_PREFIX) {
        // Act: one route of the host, at the listed URL (a GET when there is one; unauthenticated, so it changes nothing)
        const onHost = routes.filter((r) => r.host === host).sort((a, b) => Number(b.method === 'GET') - Number(a.method === 'GET'));
        expect(onHost.length, `${key} is listed but no route serves the ${host} host`).toBeGreaterThan(0);
        const route = onHost[0]!;
        const path = route.path.replace(/\{[^}]+\}/g, 'x');
        const answer = await callApi(url, route.method, path);
        // Assess
        expect(isFallback(answer.status, answer.body), `${key}: ${route.method} ${url}${path} answered ${answer.status} ${answer.text}`).toBe(false);
      } else {
        // Act: the document's own endpoints
        const answer = await callApi(url, 'GET', '');
        // Assess
        expect(answer.status, `${key}: GET ${url}`).toBe(200);
      }
    }
  });

  it('names the path the client asked for, host prefix included, in a 404', async () => {
    const res = await platform.api('GET', '/cdn/nothing-here.js');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', error: 'No endpoint at GET /cdn/nothing-here.js.' });
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
