/**
 * The local site host's cache (issue 33) on the real local platform: files served from memory once
 * read, and never older than a write already answered, whichever path made it (the API, a write
 * straight to the bucket, a presigned upload published by its storage event); alias owners cached
 * and cleared by claims and releases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBucketObjects, type BucketObjects } from '../../functions/core/files/bucket-objects.ts';
import { siteObjectKey } from '../../functions/websites/websites-paths.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { siteFetch } from '../support/site-fetch.ts';

let platform: TestPlatform;
/** The keys the site host read from the bucket, in order (the platform's own port, wrapped). */
const bucketReads: string[] = [];

beforeAll(async () => {
  platform = await startTestPlatform();
  const ports = platform.running.ports as unknown as { websiteObjects: BucketObjects };
  const real = ports.websiteObjects;
  ports.websiteObjects = {
    ...real,
    open: (key, options) => {
      bucketReads.push(key);
      return real.open(key, options);
    },
  };
});
afterAll(() => platform.stop({ removeData: true }));

let users = 0;
async function newUser(prefix = 'cached') {
  const alias = `${prefix}-${++users}`;
  const user = await createUser(platform, { alias, credits: 100 });
  return { userId: user.userId, alias, token: user.token };
}

function upload(token: string, fileName: string, content: string) {
  return platform.api('POST', '/website/upload', { token, body: { fileName, content } });
}

async function page(alias: string, path = '/'): Promise<{ status: number; text: string; etag: string | null }> {
  const host = new URL(platform.siteUrl!);
  const answer = await siteFetch(`${host.protocol}//${alias}.${host.host}${path}`);
  return { status: answer.status, text: await answer.text(), etag: answer.headers.get('etag') };
}

describe('site files from memory', () => {
  it('serves a file read once without reading the bucket again, then the new one after a re-upload', async () => {
    // Prepare
    const user = await newUser();
    await upload(user.token, 'index.html', '<p>one</p>');
    const key = siteObjectKey(user.userId, 'index.html');

    // Act
    const first = await page(user.alias);
    const readsAfterFirst = bucketReads.filter((read) => read === key).length;
    const second = await page(user.alias);
    const readsAfterSecond = bucketReads.filter((read) => read === key).length;
    await upload(user.token, 'index.html', '<p>two</p>');
    const third = await page(user.alias);

    // Assess
    expect([first.status, first.text]).toEqual([200, '<p>one</p>']);
    expect([second.status, second.text, second.etag]).toEqual([200, '<p>one</p>', first.etag]);
    expect(readsAfterFirst).toBe(1);
    expect(readsAfterSecond).toBe(1);
    expect([third.status, third.text]).toEqual([200, '<p>two</p>']);
    expect(third.etag).not.toBe(first.etag);
  });

  it('sees a write made straight to the bucket, by no route of the platform, as soon as it was answered', async () => {
    // Prepare
    const user = await newUser();
    await upload(user.token, 'index.html', '<p>by the API</p>');
    const before = await page(user.alias);
    const bucket = createBucketObjects(platform.running.ports.config, 'websites');

    // Act
    await bucket.put(siteObjectKey(user.userId, 'index.html'), Buffer.from('<p>by another writer</p>'), 'text/html');
    const after = await page(user.alias);

    // Assess
    expect(before.text).toBe('<p>by the API</p>');
    expect([after.status, after.text]).toEqual([200, '<p>by another writer</p>']);
  });

  it('answers 404 once a served file is deleted, and serves a file uploaded after a remembered miss', async () => {
    // Prepare
    const user = await newUser();
    await upload(user.token, 'gone.html', '<p>here</p>');
    const served = await page(user.alias, '/gone.html');
    const missing = await page(user.alias, '/later.html');

    // Act
    const deleted = await platform.api('POST', '/website/delete', { token: user.token, body: { key: 'gone.html' } });
    const afterDelete = await page(user.alias, '/gone.html');
    await upload(user.token, 'later.html', '<p>later</p>');
    const afterUpload = await page(user.alias, '/later.html');

    // Assess
    expect([served.status, served.text]).toEqual([200, '<p>here</p>']);
    expect(missing.status).toBe(404);
    expect(deleted.status).toBe(200);
    expect(afterDelete.status).toBe(404);
    expect([afterUpload.status, afterUpload.text]).toEqual([200, '<p>later</p>']);
  });

  it('serves a presigned upload once its storage event has published it', async () => {
    // Prepare
    const user = await newUser();
    await upload(user.token, 'posted.html', '<p>old</p>');
    const before = await page(user.alias, '/posted.html');
    const answer = await platform.api('POST', '/website/upload-url', { token: user.token, body: { fileName: 'posted.html', method: 'POST' } });
    const form = new FormData();
    for (const [name, value] of Object.entries(answer.body.data.fields as Record<string, string>)) form.append(name, value);
    form.append('file', new Blob(['<p>new</p>'], { type: 'text/html' }));

    // Act
    const posted = await fetch(answer.body.data.uploadUrl as string, { method: 'POST', body: form });
    await platform.running.storageEvents.idle();
    const after = await page(user.alias, '/posted.html');

    // Assess
    expect(before.text).toBe('<p>old</p>');
    expect(posted.status).toBe(204);
    expect([after.status, after.text]).toEqual([200, '<p>new</p>']);
  });
});

describe('alias owners from memory', () => {
  it('serves the new owner of an alias once it changed hands, and no site at a released one', async () => {
    // Prepare
    const first = await newUser('moving');
    const second = await newUser('other');
    await upload(first.token, 'index.html', '<p>first</p>');
    await upload(second.token, 'index.html', '<p>second</p>');
    const oldAlias = first.alias;
    const before = await page(oldAlias);

    // Act
    const moved = await platform.api('POST', '/user/alias', { token: first.token, body: { alias: `${oldAlias}-new` } });
    const released = await page(oldAlias);
    const atNew = await page(`${oldAlias}-new`);
    const taken = await platform.api('POST', '/user/alias', { token: second.token, body: { alias: oldAlias } });
    const retaken = await page(oldAlias);

    // Assess
    expect(before.text).toBe('<p>first</p>');
    expect(moved.status).toBe(200);
    expect(released.status).toBe(404);
    expect([atNew.status, atNew.text]).toEqual([200, '<p>first</p>']);
    expect(taken.status).toBe(200);
    expect([retaken.status, retaken.text]).toEqual([200, '<p>second</p>']);
  });
});
