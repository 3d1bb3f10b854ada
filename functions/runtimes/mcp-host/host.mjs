// @ts-check
/**
 * The local MCP host: one process per tenant, started by ../../adapters/mcp-runtime/local.ts.
 *
 *   node [limits and permission flags] host.mjs --modules-from <dir> [--max-modules N]
 *        [--request-timeout-ms N] [--max-body-bytes N] [--socket PATH] [--egress-socket PATH]
 *
 * - stdin: the first line is the bearer token every request must carry (a token in the argument
 *   list or the environment would be readable by other local processes); with --egress-socket the
 *   second line is the host's egress-proxy credential. When stdin ends (the platform stopped or
 *   died, however), the host exits: it never outlives its supervisor.
 * - --egress-socket: the sandbox has no network; the platform's egress proxy listens on this Unix
 *   socket. The host forwards a loopback port to it and points `fetch` at it, so servers reach
 *   what the operator allows (and nothing on the platform's machine) with no change to their code.
 * - stdout: the first line is `{"event":"listening","socket":PATH}` with --socket (the platform's
 *   sandbox shares that directory with the platform alone), else `{"event":"listening","port":N}`
 *   (127.0.0.1, an ephemeral port).
 *   Anything later on stdout or stderr is the servers' own console output and the host's log lines.
 * - HTTP: `POST /inspect {serverId, version, sourceCode, timeoutMs?}` -> `{ok, tools}` or
 *   `{ok: false, error}`; `POST /handle {serverId, version, sourceCode, request: {method, headers,
 *   body}, env, timeoutMs?}` -> `{status, headers, body}`; `GET /health` -> `{ok, active, modules}`.
 *   Errors of the exchange itself (auth, size, JSON) are 4xx `{error}`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createHost } from './core.mjs';

const { values } = parseArgs({
  options: {
    'modules-from': { type: 'string' },
    'max-modules': { type: 'string' },
    'request-timeout-ms': { type: 'string' },
    'max-body-bytes': { type: 'string' },
    socket: { type: 'string' },
    'egress-socket': { type: 'string' },
  },
});
const maxBodyBytes = positive(values['max-body-bytes']) ?? 16 * 1024 * 1024;

/** @param {string} message @param {Record<string, unknown>} [fields] */
function log(message, fields = {}) {
  process.stderr.write(`${JSON.stringify({ event: 'host', message, ...fields })}\n`);
}

// A rejection nobody handled (a server's stray promise) is logged; it does not take down the
// requests of the same tenant that are in flight. An uncaught exception still ends the process
// (Node's default: its state is unknown), and the supervisor starts a fresh one.
process.on('unhandledRejection', (reason) => {
  log('unhandled rejection in server code', { reason: reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason) });
});

// The iterator queues lines that arrive together (token and credential come in one write).
const stdinLines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const token = await nextLine(stdinLines);
if (!token) {
  log('no token on stdin');
  process.exit(2);
}
const tokenDigest = digest(`Bearer ${token}`);
if (values['egress-socket'] !== undefined) {
  const credential = await nextLine(stdinLines);
  if (!credential) {
    log('no egress credential on stdin');
    process.exit(2);
  }
  await routeFetchThroughProxy(values['egress-socket'], credential);
}
process.stdin.on('end', () => process.exit(0));

const host = createHost({
  modulesFrom: values['modules-from'] ?? import.meta.url,
  maxModules: positive(values['max-modules']),
  defaultTimeoutMs: positive(values['request-timeout-ms']),
  log,
});

const server = http.createServer((req, res) => {
  void serve(req, res).catch((error) => {
    log('request failed', { error: error instanceof Error ? error.message : String(error) });
    if (!res.headersSent) reply(res, 500, { error: 'the MCP host failed' });
    else res.destroy();
  });
});
server.keepAliveTimeout = 60_000;
const socketPath = values.socket;
if (socketPath !== undefined) {
  server.listen(socketPath, () => process.stdout.write(`${JSON.stringify({ event: 'listening', socket: socketPath })}\n`));
} else {
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    const port = address !== null && typeof address === 'object' ? address.port : 0;
    process.stdout.write(`${JSON.stringify({ event: 'listening', port })}\n`);
  });
}

/**
 * @param {http.IncomingMessage} req
 * @param {http.ServerResponse} res
 */
async function serve(req, res) {
  const presented = req.headers.authorization;
  if (typeof presented !== 'string' || !timingSafeEqual(digest(presented), tokenDigest)) {
    req.resume();
    return reply(res, 401, { error: 'unauthorized' });
  }
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === '/health') return reply(res, 200, { ok: true, ...host.stats() });
  if (req.method !== 'POST' || (path !== '/inspect' && path !== '/handle')) {
    req.resume();
    return reply(res, 404, { error: `no route ${req.method} ${path}` });
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBodyBytes) {
    req.resume();
    return reply(res, 413, { error: `the request body exceeds ${maxBodyBytes} bytes` });
  }
  const text = await readBody(req);
  if (text === null) return reply(res, 413, { error: `the request body exceeds ${maxBodyBytes} bytes` });
  /** @type {any} */
  let input;
  try {
    input = JSON.parse(text);
  } catch {
    return reply(res, 400, { error: 'the request body is not JSON' });
  }
  // The supervisor gave up on this request (timeout, caller gone): stop working on it.
  const cancelled = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) cancelled.abort();
  });
  const answer = path === '/inspect' ? await host.inspect(input, cancelled.signal) : await host.handle(input, cancelled.signal);
  reply(res, 200, answer);
}

/**
 * @param {http.ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 */
function reply(res, status, body) {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The whole body, or null when it is larger than allowed.
 * @param {http.IncomingMessage} req
 * @returns {Promise<string | null>}
 */
async function readBody(req) {
  /** @type {Buffer[]} */
  const parts = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > maxBodyBytes) {
      req.resume();
      return null;
    }
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString('utf8');
}

/**
 * The next line of stdin (empty once it has ended); lines after the ones the host reads are ignored.
 * @param {AsyncIterator<string>} lines
 * @returns {Promise<string>}
 */
async function nextLine(lines) {
  const next = await lines.next();
  return next.done ? '' : String(next.value).trim().slice(0, 4096);
}

/**
 * Forwards a loopback port (the sandbox's own) to the platform's egress proxy socket and makes it
 * the global dispatcher of `fetch`, with this host's credential.
 * @param {string} socketPath
 * @param {string} credential
 */
async function routeFetchThroughProxy(socketPath, credential) {
  const forwarder = net.createServer((client) => {
    const upstream = net.connect(socketPath);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise((resolve) => forwarder.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = forwarder.address();
  const port = address !== null && typeof address === 'object' ? address.port : 0;
  // Loaded only here: the cloud host (lambda.mjs) has no proxy and does not ship undici.
  const { ProxyAgent, setGlobalDispatcher } = await import('undici');
  setGlobalDispatcher(new ProxyAgent({ uri: `http://127.0.0.1:${port}`, token: `Basic ${Buffer.from(`run:${credential}`).toString('base64')}` }));
}

/** @param {string} text */
function digest(text) {
  return createHash('sha256').update(text).digest();
}

/** @param {string | undefined} text */
function positive(text) {
  const value = Number(text);
  return text !== undefined && Number.isInteger(value) && value > 0 ? value : undefined;
}
