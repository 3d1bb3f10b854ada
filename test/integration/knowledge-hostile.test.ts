/**
 * Hostile knowledge uploads (issue 30) on the real local platform: a PDF whose pages all draw one
 * compressed stream of megabytes of text, and 5 MB of text without a blank. Each is read in a
 * worker thread within the reading limits, ends with a clear `indexStatus`, and leaves the request
 * loop free: another caller's `GET /health` is answered while the upload is still being read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blankFreeText, pdfBomb } from '../support/hostile-inputs.ts';
import { createUser, startTestPlatform, type ApiResponse, type TestPlatform } from '../support/local-platform.ts';

const PAGES = 40;
const MAX_PAGES = 4;

interface Uploaded {
  key: string;
  indexStatus: string;
  indexMessage?: string;
}

let platform: TestPlatform;

beforeAll(async () => {
  // A page limit under the bomb's page count; the other limits as configured by default.
  platform = await startTestPlatform({ env: { KNOWLEDGE_MAX_PDF_PAGES: String(MAX_PAGES) } });
});
afterAll(() => platform.stop({ removeData: true }));

/** Starts `upload`, then asks `GET /health` as an anonymous caller: which of the two was answered first. */
async function healthDuring(upload: () => Promise<ApiResponse<{ data: Uploaded }>>) {
  const order: string[] = [];
  const uploading = upload().then((response) => {
    order.push('upload');
    return response;
  });
  const health = await fetch(`${platform.url}/health`).then((response) => {
    order.push('health');
    return response.status;
  });
  return { response: await uploading, health, order };
}

describe('hostile knowledge uploads', () => {
  it('reads a PDF bomb up to the reading limits in a worker, answering /health meanwhile, and says it was cut', async () => {
    // Prepare
    const user = await createUser(platform, { credits: 10 });
    const bomb = pdfBomb(PAGES, 1_000);
    expect(bomb.length).toBeLessThan(64 * 1024);

    // Act
    const { response, health, order } = await healthDuring(() =>
      platform.api<{ data: Uploaded }>('POST', '/knowledge/upload', {
        token: user.token,
        body: { fileName: 'bomb.pdf', content: bomb.toString('base64'), isBase64: true },
      }),
    );
    const listed = await platform.api<{ data: { files: Uploaded[] } }>('GET', '/knowledge/list', { token: user.token });
    const found = await platform.api<{ data: { count: number } }>('POST', '/knowledge/search', { token: user.token, body: { query: 'bomb' } });

    // Assess
    expect(health).toBe(200);
    expect(order).toEqual(['health', 'upload']);
    expect(response.status).toBe(200);
    expect(response.body.data.indexStatus).toBe('truncated');
    expect(response.body.data.indexMessage).toBe(`only the first ${MAX_PAGES} of its ${PAGES} pages are indexed`);
    expect(listed.body.data.files[0]).toMatchObject({ indexStatus: 'truncated', indexMessage: response.body.data.indexMessage });
    expect(found.body.data.count).toBeGreaterThan(0);
  }, 120_000);

  it('chunks 5 MB of text without a blank in a worker, answering /health meanwhile, and indexes all of it', async () => {
    // Prepare
    const user = await createUser(platform, { credits: 10 });
    const text = blankFreeText(5 * 1024 * 1024 - 1024);
    const tail = text.slice(-600, -400);

    // Act
    const { response, health, order } = await healthDuring(() =>
      platform.api<{ data: Uploaded }>('POST', '/knowledge/upload', { token: user.token, body: { fileName: 'blob.txt', content: text } }),
    );
    const found = await platform.api<{ data: { results: { chunk: string }[] } }>('POST', '/knowledge/search', { token: user.token, body: { query: tail } });

    // Assess
    expect(health).toBe(200);
    expect(order).toEqual(['health', 'upload']);
    expect(response.status).toBe(200);
    expect(response.body.data.indexStatus).toBe('indexed');
    expect(found.body.data.results.some((result) => result.chunk.includes(tail))).toBe(true);
  }, 120_000);
});
