/**
 * The knowledge area over HTTP (SPEC 4.6, issue 13) on the real local platform: dynalite and
 * s3rver behind it, presigned URLs PUT to for real, their storage events run by the local
 * dispatcher, and search through the shared engine. A small quota and upload-URL limit (settings)
 * make the limits reachable with small files.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Access } from '../../functions/core/blobs.ts';
import { createUser, startTestPlatform, type ApiResponse, type TestPlatform } from '../support/local-platform.ts';

const MB = 1024 * 1024;
const QUOTA_MB = 2;
const UPLOAD_URL_MAX_MB = 1;

interface User {
  readonly userId: string;
  readonly token: string;
}

interface ListedFile {
  key: string;
  fileName: string;
  size: number;
  contentType: string;
  lastModified: string;
  indexStatus: string;
}

interface Listing {
  files: ListedFile[];
  folders: { key: string; fileName: string }[];
  prefix: string;
  nextCursor: string | null;
  storageUsedMb: number;
  storageQuotaMb: number;
  storageUsedBytes: number;
}

interface SearchResult {
  results: { fileName: string; chunk: string; score: number; key: string }[];
  query: string;
  count: number;
  mode: string;
}

/**
 * A one-page PDF written by hand (catalog, page tree, page, content stream, font, cross-reference
 * table), so the test needs no PDF tool: the text is drawn with the standard Helvetica font.
 */
function tinyPdf(lines: readonly string[]): Buffer {
  const text = lines.map((line, i) => `BT /F1 12 Tf 72 ${720 - i * 16} Td (${line}) Tj ET`).join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${text.length} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform({ env: { KNOWLEDGE_QUOTA_MB: String(QUOTA_MB), KNOWLEDGE_UPLOAD_URL_MAX_MB: String(UPLOAD_URL_MAX_MB) } });
});
afterAll(() => platform.stop({ removeData: true }));

let users = 0;
async function newUser(): Promise<User> {
  const user = await createUser(platform, { alias: `knowledge-${++users}` });
  return { userId: user.userId, token: user.token };
}

function upload(user: User, body: Record<string, unknown>) {
  return platform.api('POST', '/knowledge/upload', { token: user.token, body });
}

async function list(user: User, query = ''): Promise<ApiResponse<{ data: Listing }>> {
  return platform.api('GET', `/knowledge/list${query}`, { token: user.token });
}

async function search(user: User, body: Record<string, unknown>): Promise<ApiResponse<{ data: SearchResult }>> {
  return platform.api('POST', '/knowledge/search', { token: user.token, body });
}

describe('uploads', () => {
  it('stores a text upload, lists it and finds it by search as soon as the call returns', async () => {
    // Prepare
    const user = await newUser();
    const content = 'Quarterly forecasting for the zebra crossing project.\n\nBudget figures follow in the appendix.';

    // Act
    const uploaded = await upload(user, { fileName: 'plan.md', content, folder: 'projects/zebra' });
    const listed = await list(user, '?prefix=projects/zebra');
    const found = await search(user, { query: 'zebra forecasting' });

    // Assess
    expect(uploaded.status).toBe(200);
    const key = `users/${user.userId}/projects/zebra/plan.md`;
    expect(uploaded.body.data).toEqual({
      key,
      fileName: 'plan.md',
      size: Buffer.byteLength(content),
      contentType: 'text/markdown',
      storageUsedMb: expect.any(Number),
      storageQuotaMb: QUOTA_MB,
      storageUsedBytes: Buffer.byteLength(content),
      indexStatus: 'indexed',
    });
    expect(listed.body.data.files).toEqual([
      { key, fileName: 'plan.md', size: Buffer.byteLength(content), contentType: 'text/markdown', lastModified: expect.any(String), indexStatus: 'indexed' },
    ]);
    expect(new Date(listed.body.data.files[0]!.lastModified).toISOString()).toBe(listed.body.data.files[0]!.lastModified);
    expect(listed.body.data.prefix).toBe('projects/zebra/');
    expect(found.status).toBe(200);
    expect(found.body.data.count).toBe(1);
    expect(found.body.data.results[0]).toMatchObject({ fileName: 'plan.md', key, chunk: expect.stringContaining('zebra') });
    expect(found.body.data.results[0]!.score).toBeGreaterThan(0);
    expect(found.body.data).toMatchObject({ query: 'zebra forecasting', mode: 'lexical' });
  });

  it('decodes base64 uploads, stores files without text as unsupported, and serves them back through a download URL', async () => {
    // Prepare
    const user = await newUser();
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3, 255]);

    // Act
    const uploaded = await upload(user, { fileName: 'logo.png', content: bytes.toString('base64'), isBase64: true });
    const link = await platform.api('POST', '/knowledge/download-url', { token: user.token, body: { key: uploaded.body.data.key } });
    const downloaded = await fetch(link.body.data.downloadUrl as string);
    const badBase64 = await upload(user, { fileName: 'broken.bin', content: 'not base64!', isBase64: true });

    // Assess
    expect(uploaded.body.data).toMatchObject({ size: bytes.length, contentType: 'image/png', indexStatus: 'unsupported' });
    expect(link.body.data).toMatchObject({ key: `users/${user.userId}/logo.png`, expiresIn: expect.any(Number) });
    expect(Buffer.from(await downloaded.arrayBuffer())).toEqual(bytes);
    expect(downloaded.headers.get('content-disposition')).toContain('logo.png');
    expect(badBase64.status).toBe(400);
  });

  it('stores an empty file and a CSV, each indexed', async () => {
    // Prepare
    const user = await newUser();

    // Act
    const empty = await upload(user, { fileName: 'empty.txt', content: '' });
    const csv = await upload(user, { fileName: 'stock.csv', content: 'item,count\ncapybara plush,12\n' });
    const found = await search(user, { query: 'capybara', fileType: 'csv' });

    // Assess
    expect(empty.body.data).toMatchObject({ size: 0, indexStatus: 'indexed' });
    expect(csv.body.data).toMatchObject({ contentType: 'text/csv', indexStatus: 'indexed' });
    expect(found.body.data.results.map((r) => r.fileName)).toEqual(['stock.csv']);
  });

  it('refuses a file over 5 MB once decoded, naming the limit, and stores nothing', async () => {
    // Prepare
    const user = await newUser();
    const content = Buffer.alloc(5 * MB + 1, 7).toString('base64');

    // Act
    const refused = await upload(user, { fileName: 'big.bin', content, isBase64: true });
    const listed = await list(user);

    // Assess
    expect(refused.status).toBe(413);
    expect(refused.text).toContain('5 MB');
    expect(listed.body.data.files).toEqual([]);
    expect(listed.body.data.storageUsedBytes).toBe(0);
  });

  it('extracts the text of PDF, HTML and JSON files, and filters search by file type', async () => {
    // Prepare
    const user = await newUser();
    const pdf = tinyPdf(['Heliotrope harvest report', 'The heliotrope yield doubled this season.']);
    const html =
      '<html><head><title>Garden notes</title><script>var heliotrope = "hidden";</script></head><body><p>Heliotrope &amp; lavender beds</p></body></html>';

    // Act
    const fromPdf = await upload(user, { fileName: 'harvest.pdf', content: pdf.toString('base64'), isBase64: true, contentType: 'application/pdf' });
    const fromHtml = await upload(user, { fileName: 'garden.html', content: html });
    const fromJson = await upload(user, { fileName: 'beds.json', content: JSON.stringify({ plant: 'heliotrope', rows: [3, 4] }) });
    const all = await search(user, { query: 'heliotrope', limit: 20 });
    const pdfOnly = await search(user, { query: 'heliotrope', fileType: 'pdf' });
    const htmlOnly = await search(user, { query: 'heliotrope', fileType: '.HTML' });
    const hiddenText = await search(user, { query: 'hidden' });

    // Assess
    expect([fromPdf.body.data.indexStatus, fromHtml.body.data.indexStatus, fromJson.body.data.indexStatus]).toEqual(['indexed', 'indexed', 'indexed']);
    expect(new Set(all.body.data.results.map((r) => r.fileName))).toEqual(new Set(['harvest.pdf', 'garden.html', 'beds.json']));
    const scores = all.body.data.results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(pdfOnly.body.data.results.map((r) => r.fileName)).toEqual(['harvest.pdf']);
    expect(pdfOnly.body.data.results[0]!.chunk).toContain('heliotrope yield doubled');
    expect(htmlOnly.body.data.results.map((r) => r.fileName)).toEqual(['garden.html']);
    expect(htmlOnly.body.data.results[0]!.chunk).toContain('Heliotrope & lavender');
    // Script content is not visible text.
    expect(hiddenText.body.data.results).toEqual([]);
  });

  it("replaces a file's chunks and its bytes in the usage when its key is uploaded again", async () => {
    // Prepare
    const user = await newUser();
    await upload(user, { fileName: 'notes.txt', content: 'The marmalade recipe needs oranges.' });

    // Act
    const again = await upload(user, { fileName: 'notes.txt', content: 'Now about quinces.' });
    const old = await search(user, { query: 'marmalade' });
    const current = await search(user, { query: 'quinces' });
    const listed = await list(user);

    // Assess
    expect(again.body.data.storageUsedBytes).toBe(Buffer.byteLength('Now about quinces.'));
    expect(old.body.data.results).toEqual([]);
    expect(current.body.data.results.map((r) => r.fileName)).toEqual(['notes.txt']);
    expect(listed.body.data.files.map((f) => f.size)).toEqual([Buffer.byteLength('Now about quinces.')]);
  });
});

describe('keys and paths', () => {
  it('refuses traversal, absolute paths, backslashes, control characters and empty segments with 400', async () => {
    // Prepare
    const user = await newUser();
    await upload(user, { fileName: 'safe.txt', content: 'safe', folder: 'docs' });
    const badFolders = ['../up', 'a/../../b', '/etc', 'a\\b', 'a//b', 'a/\u0000/b', './a', '..'];
    const badNames = ['..', 'a/b.txt', 'x\u0007.txt', 'c:\\boot.ini'];
    const badKeys = [
      `users/${user.userId}/../other/x.txt`,
      `users/${user.userId}/docs/../safe.txt`,
      `/users/${user.userId}/docs/safe.txt`,
      `users/${user.userId}//docs/safe.txt`,
      `users\\${user.userId}\\docs\\safe.txt`,
      '../../etc/passwd',
    ];

    // Act
    const results = [
      ...badFolders.map((folder) => upload(user, { fileName: 'x.txt', content: 'x', folder })),
      ...badNames.map((fileName) => upload(user, { fileName, content: 'x' })),
      ...badFolders.map((folder) => platform.api('POST', '/knowledge/upload-url', { token: user.token, body: { fileName: 'x.txt', folder } })),
      ...badKeys.map((key) => platform.api('POST', '/knowledge/delete', { token: user.token, body: { key } })),
      ...badKeys.map((key) => platform.api('POST', '/knowledge/download-url', { token: user.token, body: { key } })),
      ...badFolders.map((prefix) => platform.api('GET', `/knowledge/list?prefix=${encodeURIComponent(prefix)}`, { token: user.token })),
      ...badFolders.map((folder) => search(user, { query: 'safe', folder })),
      ...badFolders.map((folderName) => platform.api('POST', '/knowledge/create-folder', { token: user.token, body: { folderName } })),
      ...badFolders.map((key) => platform.api('POST', '/knowledge/delete-folder', { token: user.token, body: { key } })),
    ];
    const statuses = (await Promise.all(results)).map((r) => r.status);
    const listed = await list(user, '?prefix=docs');

    // Assess: every one refused, and the file is untouched
    expect(statuses.filter((s) => s !== 400)).toEqual([]);
    expect(listed.body.data.files.map((f) => f.fileName)).toEqual(['safe.txt']);
  });

  it("answers 404 for another user's keys and folders, and never shows one user's files to another", async () => {
    // Prepare
    const owner = await newUser();
    const other = await newUser();
    const uploaded = await upload(owner, { fileName: 'secret.txt', content: 'The vault code is pelican.', folder: 'private' });
    const key = uploaded.body.data.key as string;
    const folder = `users/${owner.userId}/private/`;

    // Act
    const download = await platform.api('POST', '/knowledge/download-url', { token: other.token, body: { key } });
    const remove = await platform.api('DELETE', '/knowledge/delete', { token: other.token, body: { key } });
    const removeFolder = await platform.api('POST', '/knowledge/delete-folder', { token: other.token, body: { key: folder } });
    const listing = await platform.api('GET', `/knowledge/list?prefix=${encodeURIComponent(folder)}`, { token: other.token });
    const searched = await search(other, { query: 'pelican vault' });
    const searchedInFolder = await search(other, { query: 'pelican', folder });
    const ownerSearch = await search(owner, { query: 'pelican' });

    // Assess
    expect([download.status, remove.status, removeFolder.status, listing.status, searchedInFolder.status]).toEqual([404, 404, 404, 404, 404]);
    expect(searched.body.data.results).toEqual([]);
    expect(ownerSearch.body.data.results.map((r) => r.key)).toEqual([key]);
  });

  it('accepts a full key of the caller and a path relative to their space alike', async () => {
    // Prepare
    const user = await newUser();
    await upload(user, { fileName: 'a.txt', content: 'alpha', folder: 'x/y' });

    // Act
    const byPath = await platform.api('POST', '/knowledge/download-url', { token: user.token, body: { key: 'x/y/a.txt' } });
    const byKey = await list(user, `?prefix=${encodeURIComponent(`users/${user.userId}/x/`)}`);

    // Assess
    expect(byPath.body.data.key).toBe(`users/${user.userId}/x/y/a.txt`);
    expect(byKey.body.data.folders).toEqual([{ key: `users/${user.userId}/x/y/`, fileName: 'y' }]);
  });
});

describe('listing and folders', () => {
  it('pages through a folder with limit and cursor, each entry once, folders apart from files', async () => {
    // Prepare
    const user = await newUser();
    for (const name of ['e.txt', 'a.txt', 'c.txt', 'b.txt', 'd.txt']) await upload(user, { fileName: name, content: name, folder: 'box' });
    await platform.api('POST', '/knowledge/create-folder', { token: user.token, body: { folderName: 'inner', parentFolder: 'box' } });
    await upload(user, { fileName: 'deep.txt', content: 'deep', folder: 'box/nested/more' });

    // Act
    const pages: Listing[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?prefix=box&limit=3${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page = await list(user, query);
      expect(page.status).toBe(200);
      pages.push(page.body.data);
      cursor = page.body.data.nextCursor;
    } while (cursor !== null);
    const foreignCursor = await list(user, `?prefix=elsewhere&cursor=${encodeURIComponent(pages[0]!.nextCursor!)}`);
    const root = await list(user);

    // Assess: 5 files and 2 folders in pages of 3, the last one saying it is the last
    expect(pages.map((p) => p.files.length + p.folders.length)).toEqual([3, 3, 1]);
    expect(pages.flatMap((p) => p.files.map((f) => f.fileName))).toEqual(['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']);
    expect(pages.flatMap((p) => p.folders)).toEqual([
      { key: `users/${user.userId}/box/inner/`, fileName: 'inner' },
      { key: `users/${user.userId}/box/nested/`, fileName: 'nested' },
    ]);
    expect(foreignCursor.status).toBe(400);
    expect(root.body.data.folders.map((f) => f.fileName)).toEqual(['box']);
    expect(root.body.data.files).toEqual([]);
  });

  it('creates nested folders, and deletes a folder with everything in it, out of search and usage', async () => {
    // Prepare
    const user = await newUser();
    const created = await platform.api('POST', '/knowledge/create-folder', { token: user.token, body: { folderName: 'q1/drafts', parentFolder: 'reports' } });
    await upload(user, { fileName: 'one.txt', content: 'Walrus migration data.', folder: 'reports/q1' });
    await upload(user, { fileName: 'two.txt', content: 'More walrus sightings.', folder: 'reports/q1/drafts' });
    const kept = await upload(user, { fileName: 'keep.txt', content: 'A walrus outside the folder.', folder: 'reportsarchive' });

    // Act
    const deleted = await platform.api('POST', '/knowledge/delete-folder', { token: user.token, body: { key: `users/${user.userId}/reports/q1/` } });
    const found = await search(user, { query: 'walrus' });
    const reports = await list(user, '?prefix=reports');
    const again = await platform.api('POST', '/knowledge/delete-folder', { token: user.token, body: { key: 'reports/q1/' } });

    // Assess
    expect(created.body.data).toEqual({ key: `users/${user.userId}/reports/q1/drafts/` });
    expect(deleted.body.data).toEqual({ key: `users/${user.userId}/reports/q1/`, deletedCount: 2 });
    expect(found.body.data.results.map((r) => r.fileName)).toEqual(['keep.txt']);
    expect(reports.body.data.folders).toEqual([]);
    expect(reports.body.data.storageUsedBytes).toBe(kept.body.data.size);
    expect(again.status).toBe(404);
  });

  it('deletes a file by POST and by DELETE: gone from the list, from search and from the usage', async () => {
    // Prepare
    const user = await newUser();
    const first = await upload(user, { fileName: 'first.txt', content: 'Kumquat inventory.' });
    const second = await upload(user, { fileName: 'second.txt', content: 'Kumquat prices.' });

    // Act
    const byPost = await platform.api('POST', '/knowledge/delete', { token: user.token, body: { key: first.body.data.key } });
    const byDelete = await platform.api('DELETE', '/knowledge/delete', { token: user.token, body: { key: second.body.data.key } });
    const again = await platform.api('POST', '/knowledge/delete', { token: user.token, body: { key: first.body.data.key } });
    const found = await search(user, { query: 'kumquat' });
    const listed = await list(user);

    // Assess
    expect(byPost.body.data).toEqual({ key: first.body.data.key, deleted: true });
    expect(byDelete.body.data).toEqual({ key: second.body.data.key, deleted: true });
    expect(again.status).toBe(404);
    expect(found.body.data.results).toEqual([]);
    expect(listed.body.data.files).toEqual([]);
    expect(listed.body.data.storageUsedBytes).toBe(0);
  });
});

describe('role tokens', () => {
  it("may list, search and download the owner's files, and not change them", async () => {
    // Prepare
    const user = await newUser();
    const uploaded = await upload(user, { fileName: 'guide.txt', content: 'Ocelot care guide.' });
    const created = await platform.api('POST', '/role-token/create', { token: user.token, body: { name: 'reader' } });
    const role: User = { userId: user.userId, token: created.body.data.token as string };

    // Act
    const listed = await list(role);
    const found = await search(role, { query: 'ocelot' });
    const link = await platform.api('POST', '/knowledge/download-url', { token: role.token, body: { key: uploaded.body.data.key } });
    const write = await upload(role, { fileName: 'other.txt', content: 'x' });
    const remove = await platform.api('POST', '/knowledge/delete', { token: role.token, body: { key: uploaded.body.data.key } });

    // Assess
    expect([listed.status, found.status, link.status]).toEqual([200, 200, 200]);
    expect(found.body.data.count).toBe(1);
    expect([write.status, remove.status]).toEqual([403, 403]);
  });
});

describe('search', () => {
  it('limits results to a folder, to at most `limit` (default 5, at most 20)', async () => {
    // Prepare
    const user = await newUser();
    for (let i = 0; i < 7; i++) await upload(user, { fileName: `n${i}.txt`, content: `Narwhal note number ${i}.`, folder: i < 2 ? 'sea/arctic' : 'sea' });

    // Act
    const byDefault = await search(user, { query: 'narwhal' });
    const inFolder = await search(user, { query: 'narwhal', folder: 'sea/arctic', limit: 20 });
    const tooMany = await search(user, { query: 'narwhal', limit: 21 });
    const empty = await search(user, { query: '   ' });

    // Assess
    expect(byDefault.body.data.count).toBe(5);
    expect(inFolder.body.data.results.map((r) => r.fileName).sort()).toEqual(['n0.txt', 'n1.txt']);
    expect(tooMany.status).toBe(400);
    expect(empty.status).toBe(400);
  });
});

describe('the storage quota', () => {
  it('lets exactly as many concurrent uploads through as fit, and keeps storageUsedMb exact', async () => {
    // Prepare: twelve files of 200 KiB against a 2 MiB quota: ten fit
    const user = await newUser();
    const size = 200 * 1024;

    // Act
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => upload(user, { fileName: `part-${i}.txt`, content: 'q'.repeat(size) })));
    const listed = await list(user);

    // Assess
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    const refused = results.filter((r) => r.status !== 200);
    expect(refused.map((r) => r.status)).toEqual([403, 403]);
    expect(refused[0]!.text.toLowerCase()).toContain('storage quota exceeded');
    expect(listed.body.data.files).toHaveLength(10);
    expect(listed.body.data.storageUsedBytes).toBe(10 * size);
    expect(listed.body.data.storageUsedMb).toBeCloseTo((10 * size) / MB, 6);
  });

  it('ends with the usage of the last of concurrent uploads to one key', async () => {
    // Prepare: five versions of one file, of different sizes
    const user = await newUser();
    const sizes = [1000, 2000, 3000, 4000, 5000];

    // Act
    const results = await Promise.all(sizes.map((size) => upload(user, { fileName: 'same.txt', content: 's'.repeat(size) })));
    const listed = await list(user);

    // Assess: one entry, and the usage is exactly its size, whichever won
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(listed.body.data.files).toHaveLength(1);
    expect(listed.body.data.storageUsedBytes).toBe(listed.body.data.files[0]!.size);
  });

  it('frees room when files are deleted', async () => {
    // Prepare
    const user = await newUser();
    const big = await upload(user, { fileName: 'big.txt', content: 'b'.repeat(1.5 * MB) });
    const refused = await upload(user, { fileName: 'more.txt', content: 'm'.repeat(MB) });

    // Act
    await platform.api('POST', '/knowledge/delete', { token: user.token, body: { key: big.body.data.key } });
    const accepted = await upload(user, { fileName: 'more.txt', content: 'm'.repeat(MB) });

    // Assess
    expect(refused.status).toBe(403);
    expect(accepted.status).toBe(200);
    expect(accepted.body.data.storageUsedBytes).toBe(MB);
  });
});

describe('presigned uploads', () => {
  async function uploadUrl(user: User, body: Record<string, unknown>) {
    return platform.api('POST', '/knowledge/upload-url', { token: user.token, body });
  }

  it('indexes a file PUT to the upload URL without another call', async () => {
    // Prepare
    const user = await newUser();
    const content = 'Flamingo census: four hundred birds at the lagoon.';
    const granted = await uploadUrl(user, { fileName: 'census.txt', folder: 'birds', contentType: 'text/plain' });

    // Act
    const put = await fetch(granted.body.data.uploadUrl as string, { method: 'PUT', body: content, headers: { 'content-type': 'text/plain' } });
    await platform.running.storageEvents.idle();
    const found = await search(user, { query: 'flamingo' });
    const listed = await list(user, '?prefix=birds');

    // Assess
    expect(granted.body.data).toMatchObject({
      key: `users/${user.userId}/birds/census.txt`,
      contentType: 'text/plain',
      expiresIn: 3600,
      maxSize: UPLOAD_URL_MAX_MB * MB,
    });
    expect(put.status).toBe(200);
    expect(found.body.data.results.map((r) => r.key)).toEqual([`users/${user.userId}/birds/census.txt`]);
    expect(listed.body.data.files).toMatchObject([{ fileName: 'census.txt', size: Buffer.byteLength(content), indexStatus: 'indexed' }]);
    expect(listed.body.data.storageUsedBytes).toBe(Buffer.byteLength(content));
  });

  it('signs the content type and the size when given, and no checksum of a body it does not have', async () => {
    // Prepare
    const user = await newUser();

    // Act
    const granted = await uploadUrl(user, { fileName: 'exact.txt', contentType: 'text/plain', size: 10 });
    const url = new URL(granted.body.data.uploadUrl as string);
    const put = await fetch(url, { method: 'PUT', body: 'ten bytes!', headers: { 'content-type': 'text/plain' } });
    await platform.running.storageEvents.idle();
    const listed = await list(user);

    // Assess: S3 refuses a PUT whose signed headers differ (s3rver does not check them, so the URL is read)
    expect(granted.body.data.headers).toEqual({ 'content-type': 'text/plain', 'content-length': '10' });
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toEqual(['content-length', 'content-type', 'host']);
    // A CRC32 signed in would be the empty body's, and S3 would refuse every upload through the URL.
    expect([...url.searchParams.keys()].filter((name) => name.toLowerCase().includes('checksum'))).toEqual([]);
    expect(put.status).toBe(200);
    expect(listed.body.data.files).toMatchObject([{ fileName: 'exact.txt', size: 10, indexStatus: 'indexed' }]);
  });

  it('deletes an object under incoming/ that no upload URL names, and indexes nothing of it', async () => {
    // Prepare: written with the store's own credentials, as only the platform could
    const user = await newUser();
    const { client: s3 } = await createS3Access(platform.running.ports.config)();
    const Bucket = `${platform.running.ports.config.BUCKET_PREFIX}knowledge`;
    const Key = `incoming/${user.userId}/bad\\name.txt`;

    // Act
    await s3.send(new PutObjectCommand({ Bucket, Key, Body: 'Axolotl stray text.', ContentType: 'text/plain' }));
    await platform.running.storageEvents.idle();
    const left = await platform.running.ports.knowledgeObjects.get(Key);
    const found = await search(user, { query: 'axolotl' });
    const listed = await list(user);

    // Assess
    expect(left).toBeNull();
    expect(found.body.data.results).toEqual([]);
    expect(listed.body.data.files).toEqual([]);
    expect(listed.body.data.folders).toEqual([]);
  });

  it('rejects an object over the URL size limit or the quota when it arrives, deleting it and keeping the usage', async () => {
    // Prepare
    const user = await newUser();
    await upload(user, { fileName: 'filler.txt', content: 'f'.repeat(1.5 * MB) });
    const tooBig = await uploadUrl(user, { fileName: 'huge.txt' });
    const overQuota = await uploadUrl(user, { fileName: 'over.txt' });

    // Act: neither says its size, so only the storage event can tell
    await fetch(tooBig.body.data.uploadUrl as string, {
      method: 'PUT',
      body: 'h'.repeat(UPLOAD_URL_MAX_MB * MB + 1),
      headers: { 'content-type': 'text/plain' },
    });
    await fetch(overQuota.body.data.uploadUrl as string, { method: 'PUT', body: 'o'.repeat(0.75 * MB), headers: { 'content-type': 'text/plain' } });
    await platform.running.storageEvents.idle();
    const listed = await list(user);
    const download = await platform.api('POST', '/knowledge/download-url', { token: user.token, body: { key: 'huge.txt' } });
    const sized = await uploadUrl(user, { fileName: 'sized.txt', size: MB });

    // Assess
    const byName = Object.fromEntries(listed.body.data.files.map((f) => [f.fileName, f]));
    expect(byName['huge.txt']).toMatchObject({ indexStatus: 'rejected', size: 0 });
    expect(byName['over.txt']).toMatchObject({ indexStatus: 'rejected', size: 0 });
    expect(listed.body.data.storageUsedBytes).toBe(1.5 * MB);
    expect(download.status).toBe(404);
    // Asked with its size, a file over the quota is refused before any upload.
    expect(sized.status).toBe(403);
  });
});
