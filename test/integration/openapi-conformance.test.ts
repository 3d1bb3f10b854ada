/**
 * Live traffic against the OpenAPI document (issue 38): the guide's walkthrough (docs/walkthrough.sh)
 * runs with curl's HTTP proxy set to a recording proxy, so every request it makes is kept: those to
 * the platform's hosts, and the presigned uploads, the site and the OAuth provider's consent. Each
 * answer of the platform is checked against the operation the document declares for it, with Ajv
 * (JSON Schema 2020-12, OpenAPI 3.1's dialect) over the document as the platform serves it: the
 * status, the media type, and the body against the schema of that status. The same calls are then
 * written as calls of the generated client, their answers as values of its types, for tsc to check
 * (test/support/typed-calls.ts).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { CLIENT_ID, CLIENT_SECRET, FakeProvider } from '../support/oauth-provider.ts';
import {
  callLabel,
  formatDiagnostic,
  operationFor,
  operationsOf,
  responseFor,
  typedCallsSource,
  typeErrorsOf,
  type Operation,
  type RecordedExchange,
} from '../support/typed-calls.ts';

const script = fileURLToPath(new URL('../../docs/walkthrough.sh', import.meta.url));
/** Under .tmp/ (never committed: the calls hold the walkthrough's tokens), one per process, so runs side by side keep theirs; kept when the check fails. */
const typedCallsFile = fileURLToPath(new URL(`../../.tmp/typed-calls/walkthrough-${process.pid}.ts`, import.meta.url));

type Json = Record<string, any>;

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'transfer-encoding', 'content-length', 'upgrade', 'te', 'trailer'];

/** One request to where its absolute URL points: `*.localhost` (sites) at the loopback address, the Host header as sent. */
function forward(
  url: URL,
  method: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  const out: IncomingHttpHeaders = {};
  // accept-encoding dropped: the recorded body is the body as sent, not compressed.
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.includes(name) && name !== 'accept-encoding') out[name] = value;
  if (body.length > 0) out['content-length'] = String(body.length);
  const host = url.hostname === 'localhost' || url.hostname.endsWith('.localhost') ? '127.0.0.1' : url.hostname;
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host, port: url.port || 80, path: `${url.pathname}${url.search}`, method, headers: out, agent: false }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks) }));
      answer.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** An HTTP forward proxy (curl's `http_proxy`) that keeps every exchange. */
async function startRecordingProxy(exchanges: RecordedExchange[]): Promise<{ url: string; server: Server }> {
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const method = request.method ?? 'GET';
      const target = URL.canParse(request.url ?? '') ? new URL(request.url!) : null;
      if (target === null || target.protocol !== 'http:') return void response.writeHead(400).end('a forward proxy: absolute http URLs only');
      const requestBody = Buffer.concat(chunks);
      forward(target, method, request.headers, requestBody)
        .then((answer) => {
          exchanges.push({
            method,
            url: target.href,
            requestContentType: request.headers['content-type'] ?? '',
            requestBody,
            status: answer.status,
            contentType: String(answer.headers['content-type'] ?? ''),
            body: answer.body,
          });
          const out: IncomingHttpHeaders = {};
          for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.includes(name)) out[name] = value;
          response.writeHead(answer.status, out).end(answer.body);
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
function problemOf(document: Json, ajv: Ajv2020, operations: readonly Operation[], exchange: RecordedExchange): string | null {
  const label = callLabel(exchange);
  const match = operationFor(operations, exchange.method, exchange.url);
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

/** What a request the typed calls leave out is, when it is not the API's: null for anything else. */
function notTheApi(exchange: RecordedExchange, handedOut: ReadonlySet<string>, site: URL, provider: URL): string | null {
  const url = new URL(exchange.url);
  if (exchange.method === 'PUT' && handedOut.has(exchange.url)) return 'a presigned upload to the storage URL the platform handed out';
  if (url.port === site.port && url.hostname.endsWith(`.${site.hostname}`)) return 'a site on the site host';
  if (url.origin === provider.origin) return "the OAuth provider's consent page";
  return null;
}

describe('the walkthrough against the OpenAPI document', () => {
  const provider = new FakeProvider();
  const exchanges: RecordedExchange[] = [];
  let platform: TestPlatform;
  let proxy: { url: string; server: Server };
  let elsewhere: string;
  let document: Json;
  let walkthrough: { code: number | null; output: string };

  // The walkthrough runs once; each test below reads its recorded traffic.
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
    proxy = await startRecordingProxy(exchanges);
    elsewhere = await mkdtemp(join(tmpdir(), 'conformance-cwd-'));
    const served = await platform.api<Json>('GET', '/openapi.json');
    if (served.status !== 200) throw new Error(`GET /openapi.json: ${served.status} ${served.text.slice(0, 500)}`);
    document = served.body;
    // Every request through the proxy, whatever its host: a no_proxy from the environment would let some pass by.
    walkthrough = await runScript(elsewhere, {
      BASE: platform.url,
      ADMIN: platform.adminToken,
      OAUTH_AUTO_CONSENT: '1',
      http_proxy: proxy.url,
      no_proxy: '',
      NO_PROXY: '',
    });
  }, 300_000);
  afterAll(async () => {
    await new Promise((resolve) => proxy?.server.close(resolve));
    await platform?.stop({ removeData: true });
    await provider.stop();
    if (elsewhere) await rm(elsewhere, { recursive: true, force: true });
  });

  it('answers every call of the walkthrough as its operation declares: status, media type and body schema', () => {
    // Prepare
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema(document, 'openapi.json');
    const operations = operationsOf(document);
    const apiOrigins = new Set(operations.map((operation) => new URL(operation.server).origin));
    const platformCalls = exchanges.filter((exchange) => apiOrigins.has(new URL(exchange.url).origin));

    // Act
    const problems = platformCalls.map((exchange) => problemOf(document, ajv, operations, exchange)).filter((p) => p !== null);

    // Assess
    expect(walkthrough.code, walkthrough.output).toBe(0);
    expect(problems).toEqual([]);
    expect(platformCalls.length).toBeGreaterThan(80);
    const typed = new Set<string>();
    for (const exchange of platformCalls) {
      const match = operationFor(operations, exchange.method, exchange.url);
      const schema = match?.operation['responses']['2XX']?.['content']?.['application/json']?.['schema'];
      if (schema?.['allOf'] !== undefined) typed.add(`${match!.method} ${match!.template}`);
    }
    expect(typed.size, 'operations of the walkthrough whose data is typed').toBeGreaterThan(0);
  });

  it('makes every call of the walkthrough through the generated client, and its answers type-check as the generated types', async () => {
    // Prepare
    const source = typedCallsSource(document, exchanges, typedCallsFile);

    // Act
    const errors = await typeErrorsOf(source);

    // Assess
    expect(walkthrough.code, walkthrough.output).toBe(0);
    expect(source.unmatched.map(callLabel), 'requests to a host of the document that no typed call makes').toEqual([]);
    expect(errors.map(formatDiagnostic)).toEqual([]);
    expect(source.typed.length).toBeGreaterThan(80);
    await rm(typedCallsFile);
  });

  it("leaves out of the typed calls only requests that are not the API's: uploads to storage, the site, the OAuth provider", () => {
    // Prepare
    const handedOut = new Set(
      exchanges.flatMap((exchange) => {
        if (!exchange.contentType.includes('json') || exchange.body.length === 0) return [];
        const uploadUrl: unknown = (JSON.parse(exchange.body.toString('utf8')) as Json)['data']?.['uploadUrl'];
        return typeof uploadUrl === 'string' ? [uploadUrl] : [];
      }),
    );
    const site = new URL(platform.siteUrl ?? 'http://site.invalid');

    // Act
    const { skipped } = typedCallsSource(document, exchanges, typedCallsFile);

    // Assess
    expect(walkthrough.code, walkthrough.output).toBe(0);
    const kinds = skipped.map(({ exchange }) => notTheApi(exchange, handedOut, site, new URL(provider.url)));
    expect(skipped.filter((_, i) => kinds[i] === null).map(({ exchange, reason }) => `${callLabel(exchange)}: ${reason}`)).toEqual([]);
    // Each kind shows at least once: a proxy that stopped seeing them would show here.
    expect(new Set(kinds)).toEqual(
      new Set(['a presigned upload to the storage URL the platform handed out', 'a site on the site host', "the OAuth provider's consent page"]),
    );
  });
});
