/**
 * Live traffic against the OpenAPI document (issue 38): the guide's walkthrough (docs/walkthrough.sh)
 * runs through a proxy that checks every answer against the operation the document declares for
 * it, with Ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect) over the document as the platform
 * serves it: the status, the media type, and the body against the schema of that status.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { CLIENT_ID, CLIENT_SECRET, FakeProvider } from '../support/oauth-provider.ts';

const script = fileURLToPath(new URL('../../docs/walkthrough.sh', import.meta.url));

type Json = Record<string, any>;

interface Operation {
  readonly method: string;
  readonly template: string;
  readonly pattern: RegExp;
  /** Literal segments first: `/agent/s/{owner}/{slug}` before `/agent/{agentId}/...`, as the router does. */
  readonly literals: number;
  readonly pointer: string;
  readonly operation: Json;
}

/** Every operation of the document, with the full path (its server's path prefix and its template) as a pattern. */
function operationsOf(document: Json): Operation[] {
  const operations: Operation[] = [];
  // An operation served on several hosts (buffered and streaming chat) lists a server for each.
  const prefixesOf = (servers: Json[] | undefined) =>
    (servers ?? document['servers']).map((server: Json) => new URL(server['url']).pathname.replace(/\/$/, ''));
  for (const [template, item] of Object.entries(document['paths'] as Json)) {
    for (const [method, operation] of Object.entries(item as Json)) {
      for (const prefix of prefixesOf(operation.servers)) {
        const full = `${prefix}${template}`;
        const pattern = new RegExp(`^${full.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
        const literals = full.split('/').filter((segment) => segment !== '' && !segment.startsWith('{')).length;
        const pointer = `#/paths/${template.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}`;
        operations.push({ method: method.toUpperCase(), template, pattern, literals, pointer, operation });
      }
    }
  }
  return operations.sort((a, b) => b.literals - a.literals);
}

/** The response object for `status`: its own code, its class (`2XX`), else `default`; `$ref`s to components followed. */
function responseFor(document: Json, operation: Json, status: number): { key: string; response: Json } | null {
  for (const key of [String(status), `${String(status)[0]}XX`, 'default']) {
    const found = operation['responses'][key];
    if (found === undefined) continue;
    const ref = found['$ref'] as string | undefined;
    return { key, response: ref === undefined ? found : document['components']['responses'][ref.split('/').pop()!] };
  }
  return null;
}

interface Exchange {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer;
}

/** A proxy in front of the platform that keeps every exchange. */
async function startRecordingProxy(target: string, exchanges: Exchange[]): Promise<{ url: string; server: Server }> {
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers))
        if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers.set(name, value);
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(`${target}${request.url}`, { method: request.method, headers, body, redirect: 'manual' })
        .then(async (answer) => {
          const bytes = Buffer.from(await answer.arrayBuffer());
          const url = new URL(request.url ?? '/', target);
          exchanges.push({
            method: request.method ?? 'GET',
            path: url.pathname,
            status: answer.status,
            contentType: answer.headers.get('content-type') ?? '',
            body: bytes,
          });
          const out: Record<string, string> = {};
          answer.headers.forEach((value, name) => {
            if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name)) out[name] = value;
          });
          response.writeHead(answer.status, out).end(bytes);
        })
        .catch((error: Error) => response.writeHead(502).end(error.message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no proxy address');
  return { url: `http://127.0.0.1:${address.port}`, server };
}

function runScript(cwd: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** What is wrong with one exchange by the document: null when it conforms. */
function problemOf(document: Json, ajv: Ajv2020, operations: readonly Operation[], exchange: Exchange): string | null {
  const label = `${exchange.method} ${exchange.path} -> ${exchange.status}`;
  const method = exchange.method === 'HEAD' ? 'GET' : exchange.method;
  const match = operations.find((o) => o.method === method && o.pattern.test(exchange.path));
  if (match === undefined) return `${label}: no operation of the document`;
  const found = responseFor(document, match.operation, exchange.status);
  if (found === null) return `${label}: status not declared by ${match.method} ${match.template}`;
  const content = found.response['content'] as Json | undefined;
  if (content === undefined || exchange.body.length === 0) return null;
  const mediaType = exchange.contentType.split(';')[0]!.trim();
  if (!(mediaType in content)) return `${label}: ${mediaType} is not among ${Object.keys(content).join(', ')} of ${match.template}`;
  if (!mediaType.endsWith('json')) return null;
  const pointer =
    found.key in match.operation['responses'] && !('$ref' in match.operation['responses'][found.key])
      ? `${match.pointer}/responses/${found.key}/content/${mediaType.replace('/', '~1')}/schema`
      : `#/components/responses/${(match.operation['responses'][found.key]['$ref'] as string).split('/').pop()}/content/${mediaType.replace('/', '~1')}/schema`;
  const validate = ajv.getSchema(`openapi.json${encodeURI(pointer).replaceAll('%25', '%')}`);
  if (validate === undefined) return `${label}: cannot compile ${pointer}`;
  const body: unknown = JSON.parse(exchange.body.toString('utf8'));
  if (validate(body)) return null;
  return `${label} (${match.template}): ${ajv.errorsText(validate.errors, { dataVar: 'body' })}; body: ${exchange.body.toString('utf8').slice(0, 300)}`;
}

describe('the walkthrough against the OpenAPI document', () => {
  const provider = new FakeProvider();
  const exchanges: Exchange[] = [];
  let platform: TestPlatform;
  let proxy: { url: string; server: Server };
  let elsewhere: string;

  beforeAll(async () => {
    provider.autoConsent = true;
    await provider.start();
    platform = await startTestPlatform({
      env: {
        OAUTH_PROVIDER_A_AUTHORIZE_URL: `${provider.url}/authorize`,
        OAUTH_PROVIDER_A_TOKEN_URL: `${provider.url}/token`,
        OAUTH_PROVIDER_A_CLIENT_ID: CLIENT_ID,
        OAUTH_PROVIDER_A_CLIENT_SECRET: CLIENT_SECRET,
      },
    });
    proxy = await startRecordingProxy(platform.url, exchanges);
    elsewhere = await mkdtemp(join(tmpdir(), 'conformance-cwd-'));
  });
  afterAll(async () => {
    await new Promise((resolve) => proxy?.server.close(resolve));
    await platform?.stop({ removeData: true });
    await provider.stop();
    if (elsewhere) await rm(elsewhere, { recursive: true, force: true });
  });

  it('answers every call of the walkthrough as its operation declares: status, media type and body schema', { timeout: 300_000 }, async () => {
    // Prepare
    const served = await platform.api<Json>('GET', '/openapi.json');
    expect(served.status, served.text.slice(0, 500)).toBe(200);
    const document = served.body;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema(document, 'openapi.json');
    const operations = operationsOf(document);

    // Act
    const { code, output } = await runScript(elsewhere, { BASE: proxy.url, ADMIN: platform.adminToken, OAUTH_AUTO_CONSENT: '1' });

    // Assess
    expect(code, output).toBe(0);
    const typed = new Set<string>();
    for (const exchange of exchanges) {
      const match = operations.find((o) => o.method === (exchange.method === 'HEAD' ? 'GET' : exchange.method) && o.pattern.test(exchange.path));
      const schema = match?.operation['responses']['2XX']?.['content']?.['application/json']?.['schema'];
      if (schema?.['allOf'] !== undefined) typed.add(`${match!.method} ${match!.template}`);
    }
    const problems = exchanges.map((exchange) => problemOf(document, ajv, operations, exchange)).filter((p) => p !== null);
    expect(problems).toEqual([]);
    expect(exchanges.length).toBeGreaterThan(80);
    expect(typed.size, 'operations of the walkthrough whose data is typed').toBeGreaterThan(0);
  });
});
