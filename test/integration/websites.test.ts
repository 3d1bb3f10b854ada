/**
 * Website hosting over HTTP (SPEC 4.11, issue 15) on the real local platform: the API on its port,
 * users' sites served on the site port (another origin), s3rver behind both, presigned POSTs sent
 * for real and their storage events run by the local dispatcher. A 1 MB free tier (a setting)
 * makes the quota reachable with small files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type ApiResponse, type TestPlatform } from '../support/local-platform.ts';
import { siteFetch } from '../support/site-fetch.ts';

const MB = 1024 * 1024;
const QUOTA_MB = 1;

interface User {
  readonly userId: string;
  readonly alias: string;
  readonly token: string;
}

let platform: TestPlatform;
let siteUrl: string;

beforeAll(async () => {
  platform = await startTestPlatform({ env: { WEBSITE_FREE_QUOTA_MB: String(QUOTA_MB) } });
  siteUrl = platform.siteUrl!;
});
afterAll(() => platform.stop({ removeData: true }));

let users = 0;
async function newUser(credits = 100): Promise<User> {
  const alias = `site-${++users}`;
  const user = await createUser(platform, { alias, credits });
  return { userId: user.userId, alias, token: user.token };
}

/**
 * A website call; a success's body is its `data`, after checking the envelope around it (SPEC 4.11
 * answers `data: {...}` with the request ids), and an error's body is as sent (`{error}` alone).
 */
async function call<T = any>(user: User, method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
  const answer = await platform.api<any>(method, path, { token: user.token, ...(body === undefined ? {} : { body }) });
  if (answer.status >= 300) return answer;
  expect(Object.keys(answer.body).sort()).toEqual(['data', 'parentRequestId', 'requestId', 'rootRequestId']);
  return { ...answer, body: answer.body.data as T };
}

function upload(user: User, body: Record<string, unknown>) {
  return call(user, 'POST', '/website/upload', body);
}

/** The origin of `alias`'s site: a name of its own under the site host (`http://{alias}.localhost:PORT`). */
function originOf(alias: string): string {
  const host = new URL(siteUrl);
  return `${host.protocol}//${alias}.${host.host}`;
}

/** A request to `alias`'s site, on its own origin, as a browser sends it (by name; redirects not followed). */
function site(alias: string, path: string, init: RequestInit = {}): Promise<Response> {
  return siteFetch(originOf(alias) + path, init as never);
}

/** Posts `bytes` through a presigned upload URL as a browser form would: the signed fields, then the file. */
async function postUpload(answer: { uploadUrl: string; fields: Record<string, string> }, bytes: Buffer, contentType: string): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(answer.fields)) form.append(name, value);
  form.append('file', new Blob([bytes], { type: contentType }));
  return fetch(answer.uploadUrl, { method: 'POST', body: form });
}

describe('the site host', () => {
  it('is another origin than the API, published in discovery with the address of each site', async () => {
    // Act
    const discovery = await platform.api('GET', '/.well-known/platform.json');

    // Assess
    expect(new URL(siteUrl).origin).not.toBe(new URL(platform.url).origin);
    expect(siteUrl).toBe(`http://localhost:${new URL(siteUrl).port}`);
    expect(discovery.body.data.siteUrl).toBe(siteUrl);
    expect(discovery.body.data.siteUrlTemplate).toBe(`http://{alias}.localhost:${new URL(siteUrl).port}/`);
  });

  it('serves index pages, nested indexes, files by extension, with nosniff and cache headers', async () => {
    // Prepare
    const user = await newUser();
    await upload(user, { fileName: 'index.html', content: '<h1>home</h1>' });
    await upload(user, { fileName: 'index.html', content: '<h1>about</h1>', folder: 'about' });
    await upload(user, { fileName: 'site.css', content: 'body{}', folder: 'assets' });
    await upload(user, { fileName: 'app.js', content: 'console.log(1)', folder: 'assets', contentType: 'text/plain' });
    await upload(user, { fileName: 'logo.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64'), encoding: 'base64', folder: 'assets' });

    // Act
    const root = await site(user.alias, `/`);
    const about = await site(user.alias, `/about/`);
    const aboutBare = await site(user.alias, `/about`);
    const css = await site(user.alias, `/assets/site.css`);
    const js = await site(user.alias, `/assets/app.js`);
    const png = await site(user.alias, `/assets/logo.png`);

    // Assess
    expect(root.status).toBe(200);
    expect(await root.text()).toBe('<h1>home</h1>');
    expect(root.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(root.headers.get('x-content-type-options')).toBe('nosniff');
    expect(root.headers.get('cache-control')).toBe('public, max-age=60, s-maxage=31536000');
    expect(root.headers.get('etag')).toMatch(/^"[^"]+"$/);
    expect(await about.text()).toBe('<h1>about</h1>');
    expect(aboutBare.status).toBe(301);
    expect(new URL(aboutBare.headers.get('location')!, aboutBare.url).href).toBe(`${originOf(user.alias)}/about/`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await png.arrayBuffer())).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  });

  it('answers HEAD with headers only and If-None-Match with 304', async () => {
    // Prepare
    const user = await newUser();
    await upload(user, { fileName: 'index.html', content: '<p>cached</p>' });
    const first = await site(user.alias, `/`);
    const etag = first.headers.get('etag')!;

    // Act
    const head = await site(user.alias, `/`, { method: 'HEAD' });
    const conditional = await site(user.alias, `/`, { headers: { 'if-none-match': etag } });
    const stale = await site(user.alias, `/`, { headers: { 'if-none-match': '"other"' } });

    // Assess
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String('<p>cached</p>'.length));
    expect(head.headers.get('etag')).toBe(etag);
    expect(await head.text()).toBe('');
    expect(conditional.status).toBe(304);
    expect(conditional.headers.get('etag')).toBe(etag);
    expect(stale.status).toBe(200);
  });

  it("serves the site's 404.html with status 404, a plain 404 without one, and 404 for an unknown alias", async () => {
    // Prepare
    const withPage = await newUser();
    const without = await newUser();
    await upload(withPage, { fileName: '404.html', content: '<h1>lost</h1>' });
    await upload(without, { fileName: 'index.html', content: 'x' });

    // Act
    const custom = await site(withPage.alias, `/nope.html`);
    const plain = await site(without.alias, `/nope.html`);
    const unknown = await site('no-such-alias-here', '/');

    // Assess
    expect(custom.status).toBe(404);
    expect(await custom.text()).toBe('<h1>lost</h1>');
    expect(custom.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(plain.status).toBe(404);
    expect(plain.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(unknown.status).toBe(404);
  });

  it("never leaves the site: encoded slashes, backslashes, dots and control characters are 400s, and dot segments stay within the visitor's own site", async () => {
    // Prepare
    const victim = await newUser();
    const visitor = await newUser();
    await upload(victim, { fileName: 'secret.html', content: 'victim' });
    await upload(visitor, { fileName: 'index.html', content: 'visitor' });

    // Act
    const refused = await Promise.all(
      [
        `/..%2f${victim.alias}%2fsecret.html`,
        `/..%5c${victim.alias}%5csecret.html`,
        `/%2e%2e%2f%2e%2e%2fsites%2f${victim.userId}%2fsecret.html`,
        `/a%00b`,
        `/%ZZ`,
      ].map(async (path) => ({ path, res: await site(visitor.alias, path) })),
    );
    // A client resolves `..` and `%2e%2e` before sending (WHATWG URL): on the visitor's own origin,
    // what arrives names a folder of the visitor's site, never the victim's.
    const dotted = await site(visitor.alias, `/%2e%2e/${victim.alias}/secret.html`);

    // Assess
    for (const { path, res } of refused) {
      expect(res.status, path).toBe(400);
      expect(await res.text(), path).not.toContain('victim');
    }
    expect(new URL(dotted.url).pathname).toBe(`/${victim.alias}/secret.html`);
    expect(dotted.status).toBe(404);
    expect(await dotted.text()).not.toContain('victim');
  });
});

describe('one origin per site', () => {
  it("serves two users' sites on two origins, each site by its own name, as the API reports them", async () => {
    // Prepare
    const a = await newUser();
    const b = await newUser();
    await upload(a, { fileName: 'index.html', content: 'site A' });
    await upload(b, { fileName: 'index.html', content: 'site B' });
    const infoA = await call(a, 'GET', '/website/info');
    const infoB = await call(b, 'GET', '/website/info');

    // Act
    const servedA = await siteFetch(infoA.body.siteUrl);
    const servedB = await siteFetch(infoB.body.siteUrl);
    // On A's name, B's alias is only a folder of A's site.
    const bOnA = await site(a.alias, `/${b.alias}/`);

    // Assess
    expect(new URL(infoA.body.siteUrl).origin).toBe(originOf(a.alias));
    expect(new URL(infoB.body.siteUrl).origin).toBe(originOf(b.alias));
    expect(new URL(infoA.body.siteUrl).origin).not.toBe(new URL(infoB.body.siteUrl).origin);
    expect(await servedA.text()).toBe('site A');
    expect(await servedB.text()).toBe('site B');
    expect(bOnA.status).toBe(404);
    expect(await bOnA.text()).not.toContain('site B');
  });

  it("redirects the path form {site_url}/{alias}/{path} to the site's own origin, query included, and serves no page on the shared name", async () => {
    // Prepare
    const user = await newUser();
    await upload(user, { fileName: 'index.html', content: '<h1>about</h1>', folder: 'about' });

    // Act
    const folder = await siteFetch(`${siteUrl}/${user.alias}/about/?ref=x`);
    const bare = await siteFetch(`${siteUrl}/${user.alias}`);
    const file = await siteFetch(`${siteUrl}/${user.alias}/about/index.html`);
    const followed = await siteFetch(`${siteUrl}/${user.alias}/about/`, { redirect: 'follow' });
    const top = await siteFetch(`${siteUrl}/`);
    const encoded = await siteFetch(`${siteUrl}/${encodeURIComponent(user.alias).replace(/^./, (c) => `%${c.charCodeAt(0).toString(16)}`)}/about/`);

    // Assess
    expect(folder.status).toBe(301);
    expect(folder.headers.get('location')).toBe(`${originOf(user.alias)}/about/?ref=x`);
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe(`${originOf(user.alias)}/`);
    expect(file.headers.get('location')).toBe(`${originOf(user.alias)}/about/index.html`);
    expect(followed.status).toBe(200);
    expect(await followed.text()).toBe('<h1>about</h1>');
    expect(top.status).toBe(404);
    // An encoded alias is decoded before the redirect: it lands on the site's origin, not on the shared one.
    expect(encoded.status).toBe(301);
    expect(encoded.headers.get('location')).toBe(`${originOf(user.alias)}/about/`);
  });
});

describe('aliases', () => {
  it('moves a site with its owner when the alias changes, without copying a file', async () => {
    // Prepare
    const user = await newUser();
    await upload(user, { fileName: 'index.html', content: 'moving' });
    const renamed = `${user.alias}-new`;

    // Act
    const changed = await call(user, 'POST', '/user/alias', { alias: renamed });
    const atNew = await site(renamed, `/`);
    const atOld = await site(user.alias, `/`);

    // Assess
    expect(changed.status).toBe(200);
    expect(atNew.status).toBe(200);
    expect(await atNew.text()).toBe('moving');
    expect(atOld.status).toBe(404);
  });
});

describe('the API', () => {
  it('uploads, lists with pagination, downloads, creates and deletes folders and files, with keys relative to the site', async () => {
    // Prepare
    const user = await newUser();
    const uploaded = await upload(user, { fileName: 'index.html', content: '<h1>hi</h1>' });
    for (const name of ['a.html', 'b.html', 'c.html']) await upload(user, { fileName: name, content: name, folder: 'pages' });
    const folder = await call(user, 'POST', '/website/create-folder', { folder: 'empty', parent: 'pages' });

    // Act
    const rootList = await call(user, 'GET', '/website/list');
    const page1 = await call(user, 'GET', '/website/list?prefix=pages&limit=2');
    const page2 = await call(user, 'GET', `/website/list?prefix=pages&limit=2&cursor=${page1.body.nextCursor}`);
    const download = await call(user, 'POST', '/website/download-url', { key: 'pages/a.html' });
    const downloaded = await fetch(download.body.downloadUrl);
    const deleted = await call(user, 'POST', '/website/delete', { key: 'pages/a.html' });
    const deletedAgain = await call(user, 'POST', '/website/delete', { key: 'pages/a.html' });
    const folderDeleted = await call(user, 'POST', '/website/delete-folder', { folder: 'pages' });
    const after = await call(user, 'GET', '/website/list');

    // Assess
    expect(uploaded.status).toBe(200);
    expect(uploaded.body).toEqual({
      message: expect.any(String),
      key: 'index.html',
      size: 11,
      contentType: 'text/html; charset=utf-8',
      url: `${originOf(user.alias)}/index.html`,
    });
    expect(folder.body).toEqual({ key: 'pages/empty/' });
    expect(rootList.body).toMatchObject({ prefix: '', storageQuotaMb: QUOTA_MB, tier: 'free', nextCursor: null });
    expect(rootList.body.files).toEqual([
      { key: 'index.html', fileName: 'index.html', size: 11, contentType: 'text/html; charset=utf-8', lastModified: expect.any(String), type: 'file' },
    ]);
    expect(rootList.body.folders).toEqual([{ key: 'pages/', fileName: 'pages', type: 'folder' }]);
    expect([...page1.body.files, ...page1.body.folders, ...page2.body.files, ...page2.body.folders].map((e: { key: string }) => e.key).sort()).toEqual([
      'pages/a.html',
      'pages/b.html',
      'pages/c.html',
      'pages/empty/',
    ]);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    expect(page2.body.nextCursor).toBeNull();
    expect(download.body).toEqual({ downloadUrl: expect.any(String), key: 'pages/a.html', expiresIn: 900 });
    expect(await downloaded.text()).toBe('a.html');
    expect(deleted.body).toEqual({ key: 'pages/a.html', deleted: true });
    expect(deletedAgain.status).toBe(404);
    expect(deletedAgain.body).toEqual({ error: expect.any(String) });
    expect(folderDeleted.body).toEqual({ folder: 'pages/', deletedCount: 2 });
    expect(after.body.folders).toEqual([]);
    expect((await site(user.alias, `/pages/b.html`)).status).toBe(404);
  });

  it('reports usage and info, published once the account has an alias and index.html', async () => {
    // Prepare
    const user = await newUser();
    const noAlias = await createUser(platform, {});
    const anonymousSite = { userId: noAlias.userId, alias: '', token: noAlias.token };
    await upload(anonymousSite, { fileName: 'index.html', content: 'x' });

    // Act
    const before = await call(user, 'GET', '/website/info');
    await upload(user, { fileName: 'index.html', content: 'x'.repeat(1024) });
    const after = await call(user, 'GET', '/website/info');
    const usage = await call(user, 'GET', '/website/usage');
    const withoutAlias = await call(anonymousSite, 'GET', '/website/info');

    // Assess
    expect(before.body).toEqual({
      siteUrl: `${originOf(user.alias)}/`,
      alias: user.alias,
      hasIndexHtml: false,
      fileCount: 0,
      storageUsedMb: 0,
      status: 'not_published',
    });
    expect(after.body).toEqual({
      siteUrl: `${originOf(user.alias)}/`,
      alias: user.alias,
      hasIndexHtml: true,
      fileCount: 1,
      storageUsedMb: 0.000977,
      status: 'published',
    });
    expect(usage.body).toEqual({ storageUsedMb: 0.000977, storageQuotaMb: QUOTA_MB, percentUsed: 0.1, tier: 'free' });
    expect(withoutAlias.body).toMatchObject({ siteUrl: null, alias: null, hasIndexHtml: true, status: 'not_published' });
  });

  it('refuses traversal, absolute paths, backslashes, control characters and encoded dots with 400 {error}', async () => {
    // Prepare
    const user = await newUser();
    const bad = ['../x.html', '/etc/passwd', 'a\\b.html', 'a\u0001b.html', '%2e%2e/x.html', 'a/%2E%2E/b.html', 'a//b.html', './x.html'];

    // Act
    const answers = await Promise.all(
      bad.flatMap((key) => [
        call(user, 'POST', '/website/delete', { key }),
        call(user, 'POST', '/website/download-url', { key }),
        upload(user, { fileName: 'x.html', content: 'x', folder: key }),
        call(user, 'POST', '/website/upload-url', { fileName: 'x.html', folder: key }),
        call(user, 'GET', `/website/list?prefix=${encodeURIComponent(key)}`),
      ]),
    );
    const badName = await upload(user, { fileName: '..', content: 'x' });

    // Assess
    for (const answer of [...answers, badName]) {
      expect(answer.status, answer.text).toBe(400);
      expect(Object.keys(answer.body)).toEqual(['error']);
    }
  });

  it("keeps users apart: B cannot read, overwrite or delete A's files", async () => {
    // Prepare
    const a = await newUser();
    const b = await newUser();
    await upload(a, { fileName: 'index.html', content: 'A' });

    // Act
    const read = await call(b, 'POST', '/website/download-url', { key: 'index.html' });
    const readByKey = await call(b, 'POST', '/website/download-url', { key: `sites/${a.userId}/index.html` });
    const removed = await call(b, 'POST', '/website/delete', { key: 'index.html' });
    const written = await upload(b, { fileName: 'index.html', content: 'B' });
    const listed = await call(b, 'GET', '/website/list');

    // Assess
    expect(read.status).toBe(404);
    expect(readByKey.status).toBe(404);
    expect(removed.status).toBe(404);
    expect(written.status).toBe(200);
    expect(listed.body.files.map((f: { key: string }) => f.key)).toEqual(['index.html']);
    expect(await (await site(a.alias, `/`)).text()).toBe('A');
    expect(await (await site(b.alias, `/`)).text()).toBe('B');
  });
});

describe('quotas and upload URLs', () => {
  it('refuses a direct upload past the quota with 403 storage quota exceeded, and over 5 MB with 413', async () => {
    // Prepare
    const user = await newUser();
    const big = 'x'.repeat(700 * 1024);
    await upload(user, { fileName: 'one.txt', content: big });

    // Act
    const over = await upload(user, { fileName: 'two.txt', content: big });
    const tooLarge = await upload(user, { fileName: 'huge.txt', content: Buffer.alloc(5 * MB + 1).toString('base64'), encoding: 'base64' });

    // Assess
    expect(over.status).toBe(403);
    expect(over.body.error.toLowerCase()).toContain('storage quota exceeded');
    expect(tooLarge.status).toBe(413);
  });

  it('publishes a file posted through an upload URL, and refuses the URL once the quota is used', async () => {
    // Prepare
    const user = await newUser();
    const answer = await call(user, 'POST', '/website/upload-url', { fileName: 'page.html', folder: 'docs', method: 'POST' });

    // Act
    const posted = await postUpload(answer.body, Buffer.from('<p>posted</p>'), answer.body.contentType);
    await platform.running.storageEvents.idle();
    const served = await site(user.alias, `/docs/page.html`);
    await upload(user, { fileName: 'fill.txt', content: 'x'.repeat(QUOTA_MB * MB - 13) });
    const refused = await call(user, 'POST', '/website/upload-url', { fileName: 'more.html' });

    // Assess
    expect(answer.body).toMatchObject({
      uploadUrl: expect.any(String),
      key: 'docs/page.html',
      contentType: 'text/html; charset=utf-8',
      expiresIn: 3600,
      maxSize: 26214400,
      siteUrl: `${originOf(user.alias)}/`,
    });
    expect(posted.status).toBeLessThan(300);
    expect(await served.text()).toBe('<p>posted</p>');
    expect(refused.status).toBe(403);
    expect(refused.body.error.toLowerCase()).toContain('storage quota exceeded');
  });

  it('publishes a file sent with a plain PUT to uploadUrl, as SPEC 4.11 shows, and refuses another content type than the signed one', async () => {
    // Prepare: a client that knows only SPEC's answer {uploadUrl, key, contentType, expiresIn, maxSize, siteUrl}
    const user = await newUser();
    const answer = await call(user, 'POST', '/website/upload-url', { fileName: 'put.html', folder: 'docs' });
    const other = await call(user, 'POST', '/website/upload-url', { fileName: 'other.html' });

    // Act
    const put = await fetch(answer.body.uploadUrl, { method: 'PUT', headers: { 'content-type': answer.body.contentType }, body: '<p>put</p>' });
    const wrongType = await fetch(other.body.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: 'x' });
    await platform.running.storageEvents.idle();
    const served = await site(user.alias, '/docs/put.html');
    const listed = await call(user, 'GET', '/website/list');

    // Assess
    expect(answer.body).toMatchObject({ method: 'PUT', key: 'docs/put.html', contentType: 'text/html; charset=utf-8', expiresIn: 3600, maxSize: 26214400 });
    expect(answer.body.fields).toBeUndefined();
    expect(put.status, await put.text()).toBeLessThan(300);
    expect(await served.text()).toBe('<p>put</p>');
    expect(wrongType.status).toBe(403);
    expect(listed.body.files.map((f: { key: string }) => f.key)).not.toContain('other.html');
  });

  it('never publishes a posted file over the quota or over 25 MB: storage or its event refuses it', async () => {
    // Prepare
    const user = await newUser();
    const quotaAnswer = await call(user, 'POST', '/website/upload-url', { fileName: 'quota.bin', method: 'POST' });
    const sizeAnswer = await call(user, 'POST', '/website/upload-url', { fileName: 'big.bin', method: 'POST' });

    // Act
    const overQuota = await postUpload(quotaAnswer.body, Buffer.alloc(QUOTA_MB * MB + 1), 'application/octet-stream');
    const overSize = await postUpload(sizeAnswer.body, Buffer.alloc(26 * MB), 'application/octet-stream');
    await platform.running.storageEvents.idle();
    const listed = await call(user, 'GET', '/website/list');
    const usage = await call(user, 'GET', '/website/usage');

    // Assess: S3 refuses the 26 MB post by its signed policy; s3rver ignores policies, so there the
    // storage event deletes it. Either way nothing is published and nothing is counted.
    expect(overQuota.status).toBeLessThan(300);
    expect([204, 400, 403]).toContain(overSize.status);
    expect(listed.body.files).toEqual([]);
    expect(usage.body.storageUsedMb).toBe(0);
    expect((await site(user.alias, `/big.bin`)).status).toBe(404);
  });
});

describe('invalidation', () => {
  it("scopes paths to the caller's site, defaults to /*, and refuses paths that leave it", async () => {
    // Prepare
    const user = await newUser();

    // Act
    const all = await call(user, 'POST', '/website/invalidate', {});
    const some = await call(user, 'POST', '/website/invalidate', { paths: ['/about/', 'assets/*', '/a b.html'] });
    const escape = await call(user, 'POST', '/website/invalidate', { paths: ['/../other/*'] });
    const wildcardInside = await call(user, 'POST', '/website/invalidate', { paths: ['/a*/b'] });
    const tooMany = await call(user, 'POST', '/website/invalidate', { paths: Array.from({ length: 101 }, (_, i) => `/p${i}.html`) });

    // Assess
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ invalidationId: expect.stringMatching(/^local-/), status: 'Completed', paths: [`/${user.alias}/*`] });
    expect(some.body.paths).toEqual([`/${user.alias}/about/index.html`, `/${user.alias}/assets/*`, `/${user.alias}/a%20b.html`]);
    expect(escape.status).toBe(400);
    expect(wildcardInside.status).toBe(400);
    expect(tooMany.status).toBe(400);
  });

  it('needs an alias (403, as every alias-required refusal)', async () => {
    // Prepare
    const noAlias = await createUser(platform, {});

    // Act
    const answer = await platform.api('POST', '/website/invalidate', { token: noAlias.token, body: {} });

    // Assess
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({ error: expect.stringMatching(/alias/i) });
  });
});
