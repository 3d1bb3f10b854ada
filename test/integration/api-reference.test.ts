import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { compileErrors, validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lib/manifest/routes.ts';
import { startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const viewerDir = fileURLToPath(new URL('../../node_modules/swagger-ui-dist/', import.meta.url));

describe('the API reference of the running platform', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('serves a valid OpenAPI 3.1 document listing every route, with this platform as its servers', async () => {
    // Act
    const res = await fetch(`${platform.url}/openapi.json`);
    const document: any = await res.json();
    // Assess
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const result = await validate(structuredClone(document));
    expect(result.valid ? '' : compileErrors(result)).toBe('');
    const listed = Object.values(document.paths).flatMap((item: any) =>
      Object.values(item).flatMap((op: any) => op['x-platform-routes'].map((r: any) => r.id)),
    );
    expect(new Set(listed)).toEqual(new Set(routes.map((r) => r.id)));
    expect(document.servers).toEqual([{ url: platform.url, description: expect.any(String) }]);
    expect(document.paths['/agent/{agentId}/chat'].get.servers).toEqual([{ url: `${platform.url}/stream`, description: expect.any(String) }]);
  });

  it('describes the envelopes the platform really answers with', async () => {
    // Prepare: the document's envelope schemas, and one answer of each kind
    const document: any = await (await fetch(`${platform.url}/openapi.json`)).json();
    const ajv = new Ajv2020({ strict: false });
    for (const [name, schema] of Object.entries(document.components.schemas)) ajv.addSchema(schema as object, `#/components/schemas/${name}`);
    const matches = (name: string, body: unknown) => {
      const check = ajv.getSchema(`#/components/schemas/${name}`)!;
      return check(body) ? '' : `${name}: ${ajv.errorsText(check.errors)} in ${JSON.stringify(body)}`;
    };
    // Act
    const successB = await platform.api('GET', '/health');
    const errorB = await platform.api('GET', '/user/info');
    const errorA = await platform.api('POST', '/agent/create', { body: {} });
    const listA = await platform.api('GET', '/agent/list');
    // Assess
    expect([errorB.status, errorA.status]).toEqual([401, 401]);
    expect(matches('SuccessB', successB.body)).toBe('');
    expect(matches('ErrorB', errorB.body)).toBe('');
    expect(matches('ErrorA', errorA.body)).toBe('');
    expect(matches('SuccessA', listA.body)).toBe('');
    // And the schemas are strict enough to tell the envelopes apart.
    expect(matches('SuccessA', successB.body)).not.toBe('');
    expect(matches('ErrorA', errorB.body)).not.toBe('');
  });

  it('serves the reference page with the viewer from the platform itself, so it works offline', async () => {
    // Act
    const page = await fetch(`${platform.url}/docs`);
    const html = await page.text();
    // Assess: every script and stylesheet is a relative URL the platform serves, byte for byte the npm package's file
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html).toContain("url: 'openapi.json'");
    const references = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(references).toHaveLength(2);
    for (const reference of references) {
      expect(reference).toMatch(/^docs\/[\w.-]+\?v=[\d.]+$/);
      const asset = await fetch(new URL(reference, `${platform.url}/docs`));
      const file = reference.slice('docs/'.length).split('?')[0]!;
      expect(asset.status, reference).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(file.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(await asset.text()).toBe(await readFile(viewerDir + file, 'utf8'));
    }
  });

  it('answers 404 for a file the viewer does not have, and never reads outside it', async () => {
    // Act
    const missing = await platform.api('GET', '/docs/index.html');
    const traversal = await platform.api('GET', '/docs/..%2Fpackage.json');
    // Assess
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('NOT_FOUND');
    expect(traversal.status).toBe(404);
  });

  it('lists the document and the page in the discovery document', async () => {
    // Act
    const res = await platform.api('GET', '/.well-known/platform.json');
    // Assess
    expect(res.body.data).toMatchObject({ openApiUrl: `${platform.url}/openapi.json`, docsUrl: `${platform.url}/docs` });
    expect((await fetch(res.body.data.openApiUrl)).status).toBe(200);
    expect((await fetch(res.body.data.docsUrl)).status).toBe(200);
  });
});
