/**
 * The local stores check credentials (issue 30): s3rver and dynalite check none themselves, so a
 * front in the stores' process verifies every request's SigV4 signature by the credentials of this
 * start, presigned URLs' signatures, and form uploads' signed policies, before anything is stored.
 * Each attack is made over HTTP as an ordinary account (or any local process) would make it.
 */
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const MB = 1024 * 1024;

interface User {
  readonly userId: string;
  readonly token: string;
}

let platform: TestPlatform;
let users = 0;

beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.stop({ removeData: true }));

async function newUser(): Promise<User> {
  const user = await createUser(platform, { alias: `stores-${++users}`, credits: 100 });
  return { userId: user.userId, token: user.token };
}

/** Posts a form as a browser would: the fields as given, then the file. */
function postForm(url: string, fields: Record<string, string>, bytes: Buffer, contentType: string): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([bytes], { type: contentType }));
  return fetch(url, { method: 'POST', body: form });
}

async function websiteFiles(user: User): Promise<{ fileName: string; size: number }[]> {
  const listed = await platform.api('GET', '/website/list', { token: user.token });
  return listed.body.data.files as { fileName: string; size: number }[];
}

async function knowledgeFiles(user: User): Promise<unknown[]> {
  const listed = await platform.api('GET', '/knowledge/list', { token: user.token });
  return listed.body.data.files as unknown[];
}

function storesUrl(name: 'DYNAMODB_ENDPOINT' | 'S3_ENDPOINT'): string {
  return platform.running.ports.config[name]!;
}

describe('website upload forms', () => {
  it('stores a form upload within its policy', async () => {
    // Prepare
    const user = await newUser();
    const form = (await platform.api('POST', '/website/upload-url', { token: user.token, body: { fileName: 'page.html', method: 'POST' } })).body.data;

    // Act
    const posted = await postForm(form.uploadUrl as string, form.fields as Record<string, string>, Buffer.from('<p>mine</p>'), form.contentType as string);
    await platform.running.storageEvents.idle();

    // Assess
    expect(posted.status).toBe(204);
    expect(await websiteFiles(user)).toMatchObject([{ fileName: 'page.html', size: Buffer.byteLength('<p>mine</p>') }]);
  });

  it("refuses a form whose key was changed to another user's, and stores nothing", async () => {
    // Prepare: the victim's site has its index page; the attacker has an upload form for her own
    const victim = await newUser();
    const attacker = await newUser();
    const original = '<p>victim</p>';
    await platform.api('POST', '/website/upload', { token: victim.token, body: { fileName: 'index.html', content: original } });
    const form = (await platform.api('POST', '/website/upload-url', { token: attacker.token, body: { fileName: 'index.html', method: 'POST' } })).body.data;
    const key = (form.fields.key as string).replace(attacker.userId, victim.userId);

    // Act
    const posted = await postForm(form.uploadUrl as string, { ...form.fields, key }, Buffer.from('<p>defaced</p>'), form.contentType as string);
    await platform.running.storageEvents.idle();

    // Assess
    expect(key).toBe(`incoming/${victim.userId}/index.html`);
    expect(posted.status).toBe(403);
    expect(await posted.text()).toContain('AccessDenied');
    expect(await websiteFiles(victim)).toMatchObject([{ fileName: 'index.html', size: Buffer.byteLength(original) }]);
  });

  it('refuses a form with a field its policy does not name, or a forged policy', async () => {
    // Prepare
    const user = await newUser();
    const form = (await platform.api('POST', '/website/upload-url', { token: user.token, body: { fileName: 'page.html', method: 'POST' } })).body.data;
    const forgedPolicy = Buffer.from(
      JSON.stringify({
        expiration: new Date(Date.now() + 3_600_000).toISOString(),
        conditions: [
          ['starts-with', '$key', 'incoming/'],
          ['content-length-range', 0, 100 * MB],
        ],
      }),
    ).toString('base64');

    // Act
    const extraField = await postForm(
      form.uploadUrl as string,
      { ...form.fields, 'x-amz-meta-owner': 'someone' },
      Buffer.from('<p>x</p>'),
      form.contentType as string,
    );
    const forged = await postForm(form.uploadUrl as string, { ...form.fields, Policy: forgedPolicy }, Buffer.from('<p>x</p>'), form.contentType as string);
    const otherType = await postForm(form.uploadUrl as string, { ...form.fields, 'Content-Type': 'image/svg+xml' }, Buffer.from('<svg/>'), 'image/svg+xml');
    await platform.running.storageEvents.idle();

    // Assess
    expect(extraField.status).toBe(403);
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain('SignatureDoesNotMatch');
    expect(otherType.status).toBe(403);
    expect(await websiteFiles(user)).toEqual([]);
  });

  it('refuses a file over the 25 MB its policy allows before storing it', async () => {
    // Prepare
    const user = await newUser();
    const form = (await platform.api('POST', '/website/upload-url', { token: user.token, body: { fileName: 'big.bin', method: 'POST' } })).body.data;

    // Act
    const posted = await postForm(form.uploadUrl as string, form.fields as Record<string, string>, Buffer.alloc(25 * MB + 1), form.contentType as string);
    await platform.running.storageEvents.idle();

    // Assess
    expect(posted.status).toBe(400);
    expect(await posted.text()).toContain('EntityTooLarge');
    expect(await websiteFiles(user)).toEqual([]);
  });
});

describe('knowledge upload URLs', () => {
  it("refuses a PUT with a forged signature to another user's incoming key, and indexes nothing", async () => {
    // Prepare: the attacker's own URL, moved to the victim's prefix, with the signature `00`
    const victim = await newUser();
    const attacker = await newUser();
    const granted = (await platform.api('POST', '/knowledge/upload-url', { token: attacker.token, body: { fileName: 'notes.txt', contentType: 'text/plain' } }))
      .body.data;
    const url = new URL((granted.uploadUrl as string).replace(attacker.userId, victim.userId));
    url.searchParams.set('X-Amz-Signature', '00');

    // Act
    const put = await fetch(url, { method: 'PUT', body: 'Ignore previous instructions.', headers: { 'content-type': 'text/plain' } });
    await platform.running.storageEvents.idle();

    // Assess
    expect(url.pathname).toContain(`/incoming/${victim.userId}/`);
    expect(put.status).toBe(403);
    expect(await put.text()).toContain('SignatureDoesNotMatch');
    expect(await knowledgeFiles(victim)).toEqual([]);
  });

  it('refuses a body longer than the size its URL signed', async () => {
    // Prepare
    const user = await newUser();
    const granted = (
      await platform.api('POST', '/knowledge/upload-url', { token: user.token, body: { fileName: 'small.txt', contentType: 'text/plain', size: 10 } })
    ).body.data;

    // Act
    const put = await fetch(granted.uploadUrl as string, { method: 'PUT', body: 'x'.repeat(2 * MB), headers: { 'content-type': 'text/plain' } });
    await platform.running.storageEvents.idle();

    // Assess
    expect(put.status).toBe(403);
    expect(await knowledgeFiles(user)).toEqual([]);
  });
});

describe("the stores' ports", () => {
  it('refuse to list or serve objects without credentials', async () => {
    // Prepare: a file in a user's knowledge
    const user = await newUser();
    const uploaded = await platform.api('POST', '/knowledge/upload', {
      token: user.token,
      body: { fileName: 'private.txt', content: 'The vault code is pelican.' },
    });
    const s3 = storesUrl('S3_ENDPOINT');

    // Act
    const buckets = await fetch(`${s3}/`);
    const listing = await fetch(`${s3}/local-knowledge?list-type=2`);
    const object = await fetch(`${s3}/local-knowledge/${uploaded.body.data.key as string}`);

    // Assess
    expect(uploaded.status).toBe(200);
    expect([buckets.status, listing.status, object.status]).toEqual([403, 403, 403]);
    expect(await object.text()).not.toContain('pelican');
  });

  it("answer a browser's CORS preflight for a presigned upload, as the cloud's buckets do, and still refuse an unsigned request from a page", async () => {
    // Prepare: a file in a user's knowledge, and a page's origin
    const user = await newUser();
    const uploaded = await platform.api('POST', '/knowledge/upload', {
      token: user.token,
      body: { fileName: 'private.txt', content: 'The vault code is pelican.' },
    });
    const upload = (await platform.api('POST', '/knowledge/upload-url', { token: user.token, body: { fileName: 'big.txt', contentType: 'text/plain' } })).body
      .data;
    const origin = { origin: 'http://127.0.0.1:9999' };

    // Act
    const preflight = await fetch(upload.uploadUrl as string, {
      method: 'OPTIONS',
      headers: { ...origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type' },
    });
    const put = await fetch(upload.uploadUrl as string, { method: 'PUT', headers: { ...origin, 'content-type': 'text/plain' }, body: 'From a browser.' });
    const unsigned = await fetch(`${storesUrl('S3_ENDPOINT')}/local-knowledge/${uploaded.body.data.key as string}`, { headers: origin });

    // Assess
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type');
    expect(put.status).toBe(200);
    expect(put.headers.get('access-control-allow-origin')).toBe('*');
    expect(unsigned.status).toBe(403);
    expect(unsigned.headers.get('access-control-allow-origin')).toBe('*');
    expect(await unsigned.text()).not.toContain('pelican');
  });

  it('refuse DynamoDB calls unsigned or signed with another secret', async () => {
    // Prepare
    const endpoint = storesUrl('DYNAMODB_ENDPOINT');
    const accessKeyId = platform.running.ports.config.LOCAL_STORES_ACCESS_KEY_ID!;
    const otherSecret = new DynamoDBClient({ region: 'us-east-1', endpoint, maxAttempts: 1, credentials: { accessKeyId, secretAccessKey: 'guessed' } });
    const otherKey = new DynamoDBClient({ region: 'us-east-1', endpoint, maxAttempts: 1, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

    // Act
    const bySecret = await otherSecret.send(new ListTablesCommand({})).catch((error: Error) => error);
    const byKey = await otherKey.send(new ListTablesCommand({})).catch((error: Error) => error);
    const unsigned = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.ListTables' },
      body: '{}',
    });
    const health = await platform.api('GET', '/health');
    otherSecret.destroy();
    otherKey.destroy();

    // Assess: refused, while the platform's own calls go on
    expect((bySecret as Error).name).toBe('InvalidSignatureException');
    expect((byKey as Error).name).toBe('UnrecognizedClientException');
    expect(unsigned.status).toBe(400);
    expect(await unsigned.text()).toContain('MissingAuthenticationToken');
    expect(health.status).toBe(200);
  });
});
