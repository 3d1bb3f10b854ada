/**
 * The typed client (clients/typescript) against the running platform: calls of the walkthrough made
 * through it, their answers typed by the generated types (tsc checks this file with the rest) and
 * their values as the platform gives them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient, dataOf, PlatformApiError, type PlatformClient } from '../../clients/typescript/src/index.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

describe('the typed client', () => {
  let platform: TestPlatform;
  let client: PlatformClient;

  beforeAll(async () => {
    platform = await startTestPlatform();
    const user = await createUser(platform, { alias: 'typed', credits: 100 });
    client = createPlatformClient({ baseUrl: platform.url, token: user.token });
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
  });

  it('stores, lists, searches and deletes knowledge files, and uploads through the PUT URL', async () => {
    // Act
    const uploaded = await dataOf(
      client.POST('/knowledge/upload', { body: { fileName: 'notes.md', content: '# Typed\nclients are checked', folder: 'docs' } }),
    );
    const url = await dataOf(client.POST('/knowledge/upload-url', { body: { fileName: 'report.txt', contentType: 'text/plain' } }));
    const put = await fetch(url.uploadUrl, { method: url.method, headers: url.headers, body: 'Quarterly report' });
    await platform.running.storageEvents.idle();
    const listed = await dataOf(client.GET('/knowledge/list', { params: { query: { prefix: 'docs' } } }));
    const found = await dataOf(client.POST('/knowledge/search', { body: { query: 'typed clients' } }));
    const removed = await dataOf(client.GET('/knowledge/delete', { params: { query: { key: uploaded.key } } }));
    // Assess: each value is read through its generated type
    const size: number = uploaded.size;
    expect(size).toBe(Buffer.byteLength('# Typed\nclients are checked'));
    expect(put.status).toBeLessThan(300);
    expect(listed.files.map((file) => file.fileName)).toEqual(['notes.md']);
    expect(found.results[0]?.key).toBe(uploaded.key);
    expect(removed).toEqual({ key: uploaded.key, deleted: true });
  });

  it("runs an action by GET with its own parameters as the query string (the document's free-form `form` object)", async () => {
    // Prepare
    const sourceCode = 'def handler(event, context):\n    return {"statusCode": 200, "body": {"city": event.get("city"), "days": event.get("days")}}\n';
    const created = await dataOf(
      client.POST('/action/create', { body: { actionName: 'Typed query', description: 'echoes', runtime: 'python3.12', sourceCode, category: 'testing' } }),
    );
    // Act
    const run = await client.GET('/action/{actionId}', {
      params: { path: { actionId: created.actionId }, query: { parameters: { city: 'Paris', days: '3' } } },
    });
    // Assess: sent as `city=Paris&days=3`, not `parameters[city]=...`
    expect(new URL(run.response.url).search).toBe('?city=Paris&days=3');
    expect(run.error, JSON.stringify(run.error)).toBeUndefined();
    expect(run.data?.data.body).toEqual({ city: 'Paris', days: '3' });
  });

  it('publishes a site file through the PUT upload URL and reads the site info', async () => {
    // Act
    const url = await dataOf(client.POST('/website/upload-url', { body: { fileName: 'index.html' } }));
    if (url.method !== 'PUT') throw new Error('expected a PUT URL');
    await fetch(url.uploadUrl, { method: 'PUT', headers: url.headers, body: '<h1>typed</h1>' });
    await platform.running.storageEvents.idle();
    const info = await dataOf(client.GET('/website/info'));
    // Assess
    expect(info.hasIndexHtml).toBe(true);
    expect(info.status).toBe('published');
  });

  it('creates a skill and reads its SKILL.md as text; a refusal is a PlatformApiError with the code', async () => {
    // Act
    const created = await dataOf(client.POST('/skills/create', { body: { skillMd: '---\nname: typed-skill\n---\n# Steps\n', description: 'Typed' } }));
    const raw = await client.GET('/skills/s/{owner}/{slug}/SKILL.md', { params: { path: { owner: 'typed', slug: 'typed-skill' } }, parseAs: 'text' });
    const refused = await dataOf(client.POST('/skills/create', { body: { skillMd: 'no frontmatter' } })).catch((error: unknown) => error);
    // Assess
    expect(created.skill.slug).toBe('typed/typed-skill');
    expect(raw.response.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(raw.data).toContain('description: "Typed"');
    expect(refused).toBeInstanceOf(PlatformApiError);
    expect((refused as PlatformApiError).status).toBe(400);
  });
});
