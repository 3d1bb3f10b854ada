/**
 * A loopback stand-in for the AWS Lambda Invoke API, so the cloud adapters (adapters/compute/aws.ts,
 * adapters/mcp-runtime/aws.ts) can be tested with the real `LambdaClient` against the real code their
 * functions run. moto cannot run Lambda invocations without Docker, and has neither response
 * streaming nor tenant isolation.
 *
 * What it emulates, on one HTTP server on 127.0.0.1:
 * - `Invoke` (`POST /2015-03-31/functions/{name}/invocations`, types `RequestResponse` and
 *   `DryRun`): the function's output as the response body; a failure of the function as
 *   `X-Amz-Function-Error: Unhandled` with the body `{errorType, errorMessage, trace}`.
 * - `InvokeWithResponseStream` (`POST /2021-11-15/functions/{name}/response-streaming-invocations`):
 *   a 200 answer in the AWS event-stream encoding (`application/vnd.amazon.eventstream`), each
 *   piece of output as a `PayloadChunk` event written as the code produces it, then one
 *   `InvokeComplete` event whose `ErrorCode`/`ErrorDetails` carry a failure of the function.
 * - Function failures as Lambda names them: `Runtime.ExitError` when the environment's process
 *   exits during init or an invocation, `Sandbox.Timedout` past the function's timeout (the
 *   environment is then destroyed), `Runtime.InitError` when init takes over 10 s; an exception
 *   thrown by a Node handler as its own `errorType`. Init (the server starting, the handler module
 *   loading) is not counted against the invocation's timeout.
 * - Service errors as restJson1 error responses (`x-amzn-ErrorType`), which the SDK turns into its
 *   exception classes: `ResourceNotFoundException` (unknown function, or a qualifier other than
 *   `$LATEST`), `InvalidParameterValueException` (no tenant id for a function in tenant-isolation
 *   mode, a tenant id for one that is not, an invocation type other than the two above),
 *   `InvalidRequestContentException` (a payload that is not JSON), `RequestTooLargeException`
 *   (a request payload over 6 MB); a buffered answer over 6 MB is the function error
 *   `Function.ResponseSizeTooLarge`.
 * - Execution environments: each runs one invocation at a time, is kept warm and reused, and a
 *   new one is started when all are busy. With `tenantIsolation` (TenancyConfig PER_TENANT) an
 *   environment belongs to one tenant id and only ever serves that tenant. Each environment is a
 *   process group of its own, started with a Lambda-like environment: the function's variables,
 *   `AWS_REGION`, `AWS_LAMBDA_FUNCTION_NAME`, `LAMBDA_TASK_ROOT`, and dummy role credentials
 *   (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), never the test's own.
 *
 * Two kinds of function code:
 * - `web-adapter`: the Lambda Web Adapter in response-stream mode in front of the handler script
 *   (`run.sh`), run with `/bin/sh` from the code directory with `AWS_LWA_PORT=0`; the server's
 *   `{"event":"listening","port"}` line tells the stand-in where it listens. Each invocation's
 *   payload, an HTTP API v2 / function URL event, becomes the HTTP request `method rawPath?query`
 *   with its headers and body (base64-decoded when `isBase64Encoded`) plus `x-amzn-request-context`;
 *   any other payload is POSTed to `/events` as LWA's pass-through does. The answer is framed as
 *   LWA frames it: the JSON prelude `{statusCode, headers, cookies}`, eight NUL bytes, then the
 *   body bytes as the server sends them.
 * - `node`: the Node.js managed runtime: a Node process (with the function's `NODE_OPTIONS`)
 *   imports the handler module (`file.export`, `.mjs`/`.js`/`.cjs`) once and calls the handler
 *   in-process for each invocation with a context whose `getRemainingTimeInMillis()` counts down
 *   to the function's timeout; the result is returned as JSON.
 *
 * What it does not emulate: request signatures, IAM and resource policies (any credentials
 * pass); account and region in ARNs; versions and aliases (only `$LATEST`); asynchronous (`Event`)
 * invocations; throttling, reserved and account concurrency; the function's memory size (not
 * enforced: only the code's own limits apply); init retries; freezing environments between
 * invocations and reaping idle ones (they live until `close()`); log tails (`LogType: Tail` gives
 * no `LogResult`); the size limit of streamed answers; LWA's readiness polling (replaced by the
 * `listening` line), its other event shapes and its configuration variables. A client that hangs
 * up does not stop an invocation: the environment stays busy until the code finishes or times
 * out. That is our reading of Lambda, which documents no signal of a disconnect to the function;
 * it has not been checked against the real service.
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

interface FunctionBase {
  /** The function's code, as deployed (LAMBDA_TASK_ROOT and the working directory). */
  readonly codeDir: string;
  /** Longest invocation (the function's `Timeout`). */
  readonly timeoutMs: number;
  /** The function's own environment variables. */
  readonly environment?: Readonly<Record<string, string>>;
  /** TenancyConfig PER_TENANT: every invoke must name a tenant, whose environments are its own. */
  readonly tenantIsolation: boolean;
  /** Directories put first on PATH: where the managed runtime's interpreter lives. */
  readonly runtimePath?: readonly string[];
}

/** A function whose handler script starts an HTTP server behind the Lambda Web Adapter (response-stream mode). */
export interface WebAdapterFunction extends FunctionBase {
  readonly runtime: 'web-adapter';
  /** The script the adapter runs, relative to `codeDir` (e.g. `run.sh`). */
  readonly handler: string;
}

/** A function of the Node.js managed runtime with a buffered handler `module.export`. */
export interface NodeFunction extends FunctionBase {
  readonly runtime: 'node';
  /** `file.export`, e.g. `lambda.handler`. */
  readonly handler: string;
}

export type StandInFunction = WebAdapterFunction | NodeFunction;

/** One execution environment, as `environments()` reports it. */
export interface EnvironmentInfo {
  readonly id: string;
  readonly functionName: string;
  readonly tenantId: string | null;
  /** The environment's process (and process group) id. */
  readonly pid: number;
  readonly alive: boolean;
  readonly busy: boolean;
  readonly invocations: number;
}

export interface LambdaStandIn {
  /** `http://127.0.0.1:<port>`, for the client's `endpoint`. */
  readonly endpoint: string;
  /** A real LambdaClient pointed at the stand-in, with dummy credentials. */
  client(): LambdaClient;
  /** Every environment started so far, in order, dead ones included. */
  environments(functionName?: string): EnvironmentInfo[];
  /** SIGKILLs an environment's process group, as a crash of the function would. */
  kill(environmentId: string): void;
  close(): Promise<void>;
}

const REGION = 'us-east-1';
const ACCOUNT = '123456789012';
/** Lambda's limit on a synchronous request or response payload. */
const MAX_SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024;
const PRELUDE_DELIMITER = Buffer.alloc(8);
/** Lambda's limit on an environment's init phase. */
const INIT_LIMIT_MS = 10_000;
/** Response headers LWA does not copy into the prelude (hop-by-hop). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => Buffer.from(text, 'utf8'),
);

/** How an invocation ended: normally, or with a function error as Lambda names it. */
type Outcome = { readonly error?: { readonly type: string; readonly message: string } };

interface Environment {
  readonly id: string;
  readonly functionName: string;
  readonly tenantId: string | null;
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once the code is initialised (server listening, handler imported); rejects otherwise. */
  ready: Promise<void>;
  alive: boolean;
  busy: boolean;
  invocations: number;
  /** web-adapter: the server's port. */
  port: number | null;
  /** node: the control channel and the answers awaited on it. */
  control: Socket | null;
  readonly pending: Map<string, (answer: NodeAnswer) => void>;
  /** The last lines the process printed, for failure messages. */
  readonly output: string[];
}

type NodeAnswer = { readonly result: unknown } | { readonly error: { readonly errorType: string; readonly errorMessage: string } };

/**
 * The Node.js runtime's part: import the handler once, then answer one invocation at a time over
 * fd 3 (JSON lines), calling the handler in this process. stdout and stderr stay the code's own.
 */
const NODE_BOOTSTRAP = `
import net from 'node:net';
import { createInterface } from 'node:readline';
const control = new net.Socket({ fd: 3, readable: true, writable: true });
const send = (value) => control.write(JSON.stringify(value) + '\\n');
const [file, name] = JSON.parse(process.argv[1]);
let handler;
try {
  handler = (await import(file))[name];
  if (typeof handler !== 'function') throw Object.assign(new Error(name + ' is undefined or not exported'), { name: 'Runtime.HandlerNotFound' });
} catch (error) {
  send({ init: { errorType: error?.name ?? 'Error', errorMessage: String(error?.message ?? error) } });
  process.exit(1);
}
send({ ready: true });
for await (const line of createInterface({ input: control })) {
  const { id, event, deadline, functionName } = JSON.parse(line);
  const context = { awsRequestId: id, functionName, getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
  try {
    send({ id, result: (await handler(event, context)) ?? null });
  } catch (error) {
    send({ id, error: { errorType: error?.name ?? 'Error', errorMessage: String(error?.message ?? error) } });
  }
}
`;

/** An error of the Lambda service itself (the function was not run). */
class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startLambdaStandIn(functions: Readonly<Record<string, StandInFunction>>): Promise<LambdaStandIn> {
  const all: Environment[] = [];
  let closed = false;

  const server = http.createServer((req, res) => {
    void serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) serviceErrorResponse(res, error instanceof ServiceError ? error : new ServiceError(500, 'ServiceException', String(error)));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', endpoint);
    const match = /^\/(2015-03-31|2021-11-15)\/functions\/([^/]+)\/(invocations|response-streaming-invocations)$/.exec(url.pathname);
    const streaming = match?.[1] === '2021-11-15' && match[3] === 'response-streaming-invocations';
    if (req.method !== 'POST' || !match || (!streaming && (match[1] !== '2015-03-31' || match[3] !== 'invocations'))) {
      throw new ServiceError(404, 'UnknownOperationException', `the stand-in does not emulate ${req.method} ${url.pathname}`);
    }
    const payload = await readPayload(req);
    const { name, definition } = resolveFunction(decodeURIComponent(match[2]!), url.searchParams.get('Qualifier'));
    const invocationType = header(req, 'x-amz-invocation-type') ?? 'RequestResponse';
    if (invocationType === 'DryRun' && !streaming) {
      res.writeHead(204, { 'x-amzn-requestid': randomUUID() }).end();
      return;
    }
    if (invocationType !== 'RequestResponse')
      throw new ServiceError(400, 'InvalidParameterValueException', `the stand-in does not emulate invocation type ${invocationType}`);
    const tenantId = header(req, 'x-amz-tenant-id') ?? null;
    if (definition.tenantIsolation && tenantId === null)
      throw new ServiceError(400, 'InvalidParameterValueException', `The tenant ID is required to invoke function ${name}, which uses tenant isolation mode.`);
    if (!definition.tenantIsolation && tenantId !== null)
      throw new ServiceError(400, 'InvalidParameterValueException', `Function ${name} does not use tenant isolation mode; remove the tenant ID.`);
    let event: unknown;
    try {
      event = JSON.parse(payload.length === 0 ? 'null' : payload.toString('utf8'));
    } catch {
      throw new ServiceError(400, 'InvalidRequestContentException', 'Could not parse request body into json: the payload is not JSON');
    }

    const requestId = randomUUID();
    if (streaming) {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amz-executed-version': '$LATEST', 'x-amzn-requestid': requestId });
      const send = (headers: Record<string, string>, body: Uint8Array) => {
        if (res.destroyed || res.writableEnded) return;
        const encoded = codec.encode({
          headers: Object.fromEntries(Object.entries({ ':message-type': 'event', ...headers }).map(([k, v]) => [k, { type: 'string' as const, value: v }])),
          body,
        });
        res.write(encoded);
      };
      const outcome = await invoke(name, definition, tenantId, requestId, event, (bytes) =>
        send({ ':event-type': 'PayloadChunk', ':content-type': 'application/octet-stream' }, bytes),
      );
      const complete = outcome.error ? { ErrorCode: outcome.error.type, ErrorDetails: outcome.error.message } : {};
      send({ ':event-type': 'InvokeComplete', ':content-type': 'application/json' }, Buffer.from(JSON.stringify(complete)));
      if (!res.destroyed) res.end();
      return;
    }
    const parts: Buffer[] = [];
    let size = 0;
    const outcome = await invoke(name, definition, tenantId, requestId, event, (bytes) => {
      parts.push(Buffer.from(bytes));
      size += bytes.byteLength;
    });
    const error =
      outcome.error ??
      (size > MAX_SYNC_PAYLOAD_BYTES
        ? {
            type: 'Function.ResponseSizeTooLarge',
            message: `Response payload size (${size} bytes) exceeded maximum allowed payload size (${MAX_SYNC_PAYLOAD_BYTES} bytes).`,
          }
        : undefined);
    const headers = { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST', 'x-amzn-requestid': requestId };
    if (error) {
      res
        .writeHead(200, { ...headers, 'x-amz-function-error': 'Unhandled' })
        .end(JSON.stringify({ errorType: error.type, errorMessage: error.message, trace: [] }));
    } else {
      res.writeHead(200, headers).end(Buffer.concat(parts));
    }
  }

  function resolveFunction(nameOrArn: string, qualifierParam: string | null): { name: string; definition: StandInFunction } {
    // A name, a partial ARN (account:function:name) or a full ARN, each with an optional :qualifier.
    const parts = nameOrArn.split(':');
    const at = parts.indexOf('function');
    const name = at >= 0 ? parts[at + 1] : parts[0];
    const qualifier = qualifierParam ?? (at >= 0 ? parts[at + 2] : parts[1]) ?? '$LATEST';
    const definition = name === undefined ? undefined : functions[name];
    if (name === undefined || definition === undefined || qualifier !== '$LATEST') {
      throw new ServiceError(
        404,
        'ResourceNotFoundException',
        `Function not found: arn:aws:lambda:${REGION}:${ACCOUNT}:function:${nameOrArn}${qualifierParam ? `:${qualifierParam}` : ''}`,
      );
    }
    return { name, definition };
  }

  /** Runs one invocation in a free environment of the tenant; `write` receives the output as it comes. */
  async function invoke(
    name: string,
    definition: StandInFunction,
    tenantId: string | null,
    requestId: string,
    event: unknown,
    write: (bytes: Uint8Array) => void,
  ): Promise<Outcome> {
    const env = acquire(name, definition, tenantId);
    env.invocations++;
    const exitError = (exit: { code: number | null; signal: NodeJS.Signals | null }): Outcome => ({
      error: {
        type: 'Runtime.ExitError',
        message: `RequestId: ${requestId} Error: Runtime exited with error: ${exit.signal ? `signal: ${signalName(exit.signal)}` : `exit status ${exit.code}`}`,
      },
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      // Init (starting the server, importing the handler) is not part of the invocation's time.
      const init = await Promise.race([
        env.ready.then(
          () => 'ready' as const,
          () => 'failed' as const,
        ),
        new Promise<'slow'>((resolve) => (timer = setTimeout(() => resolve('slow'), INIT_LIMIT_MS))),
      ]);
      clearTimeout(timer);
      // A failed init ends with the process's exit (the bootstrap exits after reporting it).
      if (init === 'failed') return exitError(await env.exited);
      if (init === 'slow') {
        destroy(env);
        return { error: { type: 'Runtime.InitError', message: `RequestId: ${requestId} Error: init did not finish within ${INIT_LIMIT_MS / 1000} s` } };
      }
      const deadline = Date.now() + definition.timeoutMs;
      const timedOut = new Promise<Outcome>((resolve) => {
        timer = setTimeout(() => {
          destroy(env);
          resolve({
            error: {
              type: 'Sandbox.Timedout',
              message: `RequestId: ${requestId} Error: Task timed out after ${(definition.timeoutMs / 1000).toFixed(2)} seconds`,
            },
          });
        }, definition.timeoutMs);
      });
      const work = definition.runtime === 'web-adapter' ? forwardToServer(env, event, write) : callHandler(env, name, requestId, event, deadline, write);
      return await Promise.race([work, env.exited.then(exitError), timedOut]);
    } finally {
      clearTimeout(timer);
      env.busy = false;
    }
  }

  function acquire(name: string, definition: StandInFunction, tenantId: string | null): Environment {
    if (closed) throw new ServiceError(503, 'ServiceException', 'the stand-in is closed');
    const free = all.find((env) => env.functionName === name && env.tenantId === tenantId && env.alive && !env.busy);
    const env = free ?? startEnvironment(name, definition, tenantId);
    env.busy = true;
    return env;
  }

  function startEnvironment(name: string, definition: StandInFunction, tenantId: string | null): Environment {
    const variables: Record<string, string> = {
      PATH: [...(definition.runtimePath ?? []), '/usr/local/bin', '/usr/bin', '/bin'].join(delimiter),
      LANG: 'C.UTF-8',
      TZ: ':UTC',
      HOME: '/tmp',
      LAMBDA_TASK_ROOT: definition.codeDir,
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_LAMBDA_FUNCTION_NAME: name,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_ACCESS_KEY_ID: 'ASIASTANDINROLEKEY',
      AWS_SECRET_ACCESS_KEY: 'stand-in-role-secret-access-key',
      AWS_SESSION_TOKEN: 'stand-in-role-session-token',
      ...definition.environment,
    };
    const child =
      definition.runtime === 'web-adapter'
        ? spawn('/bin/sh', [join(definition.codeDir, definition.handler)], {
            cwd: definition.codeDir,
            env: { ...variables, AWS_LWA_PORT: '0' },
            stdio: ['ignore', 'pipe', 'pipe'],
            detached: true,
          })
        : spawn(process.execPath, ['--input-type=module', '-e', NODE_BOOTSTRAP, JSON.stringify(handlerLocation(definition))], {
            cwd: definition.codeDir,
            env: variables,
            stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
            detached: true,
          });
    const output: string[] = [];
    const keep = (line: string) => {
      output.push(line);
      if (output.length > 20) output.shift();
    };
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', (error) => {
        keep(String(error));
        resolve({ code: 127, signal: null });
      });
    });
    const env: Environment = {
      id: `env-${all.length + 1}`,
      functionName: name,
      tenantId,
      child,
      exited,
      ready: Promise.resolve(),
      alive: true,
      busy: false,
      invocations: 0,
      port: null,
      control: null,
      pending: new Map(),
      output,
    };
    void exited.then(() => {
      env.alive = false;
    });
    createInterface({ input: child.stderr! }).on('line', keep);
    const stdout = createInterface({ input: child.stdout! });
    let ready: Promise<void>;
    if (definition.runtime === 'web-adapter') {
      ready = new Promise<void>((resolve, reject) => {
        stdout.on('line', (line) => {
          if (env.port === null) {
            try {
              const announced = JSON.parse(line) as { event?: unknown; port?: unknown };
              if (announced.event === 'listening' && typeof announced.port === 'number') {
                env.port = announced.port;
                resolve();
                return;
              }
            } catch {
              // not the announcement
            }
          }
          keep(line);
        });
        void exited.then(() => reject(new Error(`the server exited before listening: ${output.join(' | ')}`)));
      });
    } else {
      stdout.on('line', keep);
      const control = child.stdio[3] as unknown as Socket;
      env.control = control;
      ready = new Promise<void>((resolve, reject) => {
        createInterface({ input: control }).on('line', (line) => {
          const message = JSON.parse(line) as { ready?: true; init?: { errorType: string; errorMessage: string }; id?: string } & Partial<NodeAnswer>;
          if (message.ready) resolve();
          else if (message.init) reject(new Error(`${message.init.errorType}: ${message.init.errorMessage}`));
          else if (message.id !== undefined) {
            const answer = env.pending.get(message.id);
            env.pending.delete(message.id);
            answer?.(message as NodeAnswer);
          }
        });
        void exited.then(() => reject(new Error('the runtime exited during init')));
      });
    }
    ready.catch(() => undefined);
    env.ready = ready;
    all.push(env);
    return env;
  }

  function destroy(env: Environment): void {
    env.alive = false;
    if (env.child.pid !== undefined) {
      try {
        process.kill(-env.child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  async function close(): Promise<void> {
    closed = true;
    for (const env of all) destroy(env);
    await Promise.all(all.map((env) => env.exited));
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  return {
    endpoint,
    client: () => new LambdaClient({ endpoint, region: REGION, credentials: { accessKeyId: 'AKIASTANDIN', secretAccessKey: 'stand-in' } }),
    environments: (functionName) =>
      all
        .filter((env) => functionName === undefined || env.functionName === functionName)
        .map((env) => ({
          id: env.id,
          functionName: env.functionName,
          tenantId: env.tenantId,
          pid: env.child.pid ?? -1,
          alive: env.alive,
          busy: env.busy,
          invocations: env.invocations,
        })),
    kill: (environmentId) => {
      const env = all.find((candidate) => candidate.id === environmentId);
      if (!env) throw new Error(`no environment ${environmentId}`);
      destroy(env);
    },
    close,
  };
}

/**
 * The Lambda Web Adapter's part of one invocation: the event becomes an HTTP request to the
 * server, and the answer is written as prelude, eight NUL bytes and the body, as it arrives.
 */
function forwardToServer(env: Environment, event: unknown, write: (bytes: Uint8Array) => void): Promise<Outcome> {
  const request = httpRequestOf(event);
  return new Promise<Outcome>((resolve) => {
    const upstream = http.request(
      { host: '127.0.0.1', port: env.port!, method: request.method, path: request.path, headers: request.headers, agent: false },
      (response) => {
        const headers: Record<string, string> = {};
        let cookies: string[] = [];
        for (const [name, value] of Object.entries(response.headers)) {
          if (value === undefined || HOP_BY_HOP.has(name)) continue;
          if (name === 'set-cookie') cookies = Array.isArray(value) ? value : [value];
          else headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        write(Buffer.concat([Buffer.from(JSON.stringify({ statusCode: response.statusCode ?? 502, headers, cookies })), PRELUDE_DELIMITER]));
        response.on('data', (chunk: Buffer) => write(chunk));
        response.on('end', () => resolve({}));
        // A server that dies mid-answer: the environment's exit reports it (Runtime.ExitError).
        response.on('error', () => undefined);
      },
    );
    upstream.on('error', () => undefined);
    upstream.end(request.body);
  });
}

/** The request LWA makes of an invocation event: HTTP API v2 / function URL events, else the pass-through. */
function httpRequestOf(event: unknown): { method: string; path: string; headers: Record<string, string>; body: Buffer } {
  const e = (typeof event === 'object' && event !== null ? event : {}) as {
    rawPath?: unknown;
    rawQueryString?: unknown;
    headers?: unknown;
    body?: unknown;
    isBase64Encoded?: unknown;
    requestContext?: { http?: { method?: unknown } };
  };
  const method = e.requestContext?.http?.method;
  if (typeof method !== 'string' || typeof e.rawPath !== 'string') {
    const body = Buffer.from(JSON.stringify(event ?? null));
    return { method: 'POST', path: '/events', headers: { 'content-type': 'application/json', 'content-length': String(body.length) }, body };
  }
  const headers: Record<string, string> = {};
  if (typeof e.headers === 'object' && e.headers !== null)
    for (const [name, value] of Object.entries(e.headers)) if (typeof value === 'string') headers[name.toLowerCase()] = value;
  headers['x-amzn-request-context'] = JSON.stringify(e.requestContext);
  const text = typeof e.body === 'string' ? e.body : '';
  const body = e.isBase64Encoded === true ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8');
  const query = typeof e.rawQueryString === 'string' && e.rawQueryString !== '' ? `?${e.rawQueryString}` : '';
  return { method, path: `${e.rawPath}${query}`, headers, body };
}

/** The Node.js runtime's part of one invocation: the handler's answer, or its exception. */
function callHandler(
  env: Environment,
  functionName: string,
  requestId: string,
  event: unknown,
  deadline: number,
  write: (bytes: Uint8Array) => void,
): Promise<Outcome> {
  return new Promise<Outcome>((resolve) => {
    env.pending.set(requestId, (answer) => {
      if ('error' in answer) {
        resolve({ error: { type: answer.error.errorType, message: answer.error.errorMessage } });
        return;
      }
      write(Buffer.from(JSON.stringify(answer.result)));
      resolve({});
    });
    env.control!.write(`${JSON.stringify({ id: requestId, event, deadline, functionName })}\n`);
  });
}

/** `file.export` of a Node handler, resolved as the runtime does (.mjs, .js, .cjs). */
function handlerLocation(definition: NodeFunction): [string, string] {
  const dot = definition.handler.lastIndexOf('.');
  const module = definition.handler.slice(0, dot);
  const name = definition.handler.slice(dot + 1);
  const file = ['.mjs', '.js', '.cjs'].map((ext) => join(definition.codeDir, `${module}${ext}`)).find((candidate) => existsSync(candidate));
  if (dot <= 0 || file === undefined) throw new Error(`the handler ${definition.handler} is not in ${definition.codeDir}`);
  return [pathToFileURL(file).href, name];
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readPayload(req: http.IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MAX_SYNC_PAYLOAD_BYTES) parts.push(chunk);
  }
  if (size > MAX_SYNC_PAYLOAD_BYTES)
    throw new ServiceError(413, 'RequestTooLargeException', `Request must be smaller than ${MAX_SYNC_PAYLOAD_BYTES} bytes for the InvokeFunction operation`);
  return Buffer.concat(parts);
}

function serviceErrorResponse(res: http.ServerResponse, error: ServiceError): void {
  res.writeHead(error.status, { 'content-type': 'application/json', 'x-amzn-errortype': error.type, 'x-amzn-requestid': randomUUID() });
  res.end(JSON.stringify({ Type: error.status >= 500 ? 'Service' : 'User', Message: error.message }));
}

function signalName(signal: NodeJS.Signals): string {
  return signal === 'SIGKILL' ? 'killed' : signal.toLowerCase();
}
