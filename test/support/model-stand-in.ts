import { EventStreamCodec } from '@smithy/core/event-streams';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest } from 'node:http2';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { Duplex } from 'node:stream';

/**
 * A loopback model server speaking two real provider protocols, so that provider clients (Strands'
 * model classes, boto3, the AWS SDK, httpx) run unchanged against it:
 * - OpenAI chat completions: `POST /v1/chat/completions`, streamed (SSE) or not, with tool calls;
 * - Bedrock runtime: `POST /model/{modelId}/converse-stream` (AWS event-stream frames) and
 *   `POST /model/{modelId}/converse`.
 * The test scripts the model: each request takes the next reply from one queue (whichever
 * protocol asks). Every request is recorded, so a test can assert what the model was sent (the
 * tool results of the turn before, the key that arrived).
 */

/** One tool call the model makes; `input` is sent as the call's JSON arguments. */
export interface ScriptedToolCall {
  readonly name: string;
  readonly input: Record<string, unknown>;
  /** Default `call_<n>` (OpenAI) or `tooluse_<n>` (Bedrock), numbered over the server's life. */
  readonly id?: string;
}

/** One model turn: text, tool calls (after the text, if both), or both. */
export type ScriptedReply =
  { readonly text: string; readonly toolCalls?: readonly ScriptedToolCall[] } | { readonly text?: string; readonly toolCalls: readonly ScriptedToolCall[] };

/** A reply computed from the request it answers (e.g. from the tool result the model was sent). */
export type ReplyFunction = (request: ModelRequest) => ScriptedReply;

export type ModelApi = 'openai-chat' | 'bedrock-converse-stream' | 'bedrock-converse';

export interface ModelRequest {
  readonly api: ModelApi;
  /** Bedrock's model id from the path, OpenAI's `model` field. */
  readonly model: string;
  readonly stream: boolean;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: any;
}

export interface ModelStandInOptions {
  /** OpenAI requests must carry `Authorization: Bearer <openaiKey>` (401 otherwise). */
  readonly openaiKey?: string;
  /** Bedrock requests must be SigV4-signed with this access key id (403 otherwise). */
  readonly awsAccessKeyId?: string;
}

export interface ModelStandIn {
  /** `http://127.0.0.1:<port>`: OpenAI clients take `${url}/v1` as their base URL, Bedrock clients `url` as endpoint. */
  readonly url: string;
  /** `127.0.0.1:<port>`, as an egress allow entry (AGENT_MODEL_HOSTS) names it. */
  readonly host: string;
  /** Requests answered or refused, in order of arrival. */
  readonly requests: ModelRequest[];
  /** Queues replies; a request finding the queue empty is answered 500 (a test that under-scripted fails loudly). */
  reply(...replies: (ScriptedReply | ReplyFunction)[]): void;
  /** Replies still queued. */
  pending(): number;
  /** Forgets queued replies and recorded requests, so a failed test leaves nothing to the next. */
  reset(): void;
  close(): Promise<void>;
}

/** Deterministic token counts: words, so tests can assert the usage the platform bills. */
function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => Buffer.from(text, 'utf8'),
);

/** One ConverseStream event as the service frames it: `:event-type` names the union member, the body is its JSON. */
function eventFrame(eventType: string, body: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: Buffer.from(JSON.stringify(body), 'utf8'),
  });
}

type AnyRequest = IncomingMessage | Http2ServerRequest;
/** What the handlers use of a response, the same on HTTP/1.1 and HTTP/2. */
interface AnyResponse {
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string | Uint8Array): boolean;
  end(chunk?: string | Uint8Array): unknown;
}

export async function startModelStandIn(options: ModelStandInOptions = {}): Promise<ModelStandIn> {
  const queue: (ScriptedReply | ReplyFunction)[] = [];
  const next = (request: ModelRequest): ScriptedReply | undefined => {
    const reply = queue.shift();
    return typeof reply === 'function' ? reply(request) : reply;
  };
  const requests: ModelRequest[] = [];
  let callNumber = 0;

  const withIds = (reply: ScriptedReply, prefix: string) =>
    (reply.toolCalls ?? []).map((call) => ({ ...call, id: call.id ?? `${prefix}_${++callNumber}`, json: JSON.stringify(call.input) }));

  function sendJson(res: AnyResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  function openAi(req: AnyRequest, res: AnyResponse, body: any): void {
    const stream = body?.stream === true;
    const request: ModelRequest = { api: 'openai-chat', model: String(body?.model ?? ''), stream, headers: req.headers, body };
    requests.push(request);
    if (options.openaiKey !== undefined && req.headers['authorization'] !== `Bearer ${options.openaiKey}`) {
      sendJson(res, 401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
      return;
    }
    const reply = next(request);
    if (reply === undefined) {
      sendJson(res, 500, { error: { message: 'model stand-in: no scripted reply left', type: 'server_error', param: null, code: null } });
      return;
    }
    const calls = withIds(reply, 'call');
    const text = reply.text ?? '';
    const finishReason = calls.length > 0 ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: words(JSON.stringify(body.messages ?? [])), completion_tokens: words(text) + calls.length, total_tokens: 0 };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    const id = `chatcmpl-standin${requests.length}`;
    const created = Math.floor(Date.now() / 1000);
    const model = String(body.model ?? 'stand-in');
    if (!stream) {
      const message = {
        role: 'assistant',
        content: text === '' && calls.length > 0 ? null : text,
        ...(calls.length > 0 ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.json } })) } : {}),
      };
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
        usage,
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    // Intermediate chunks leave `usage` out (as llama.cpp's and vLLM's servers do) rather than
    // sending OpenAI's `"usage": null`: Strands' LlamaCppModel skips every chunk holding the key.
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`);
    const delta = (d: Record<string, unknown>, finish: string | null = null) => chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
    delta({ role: 'assistant', content: '' });
    // Text in word-sized pieces, arguments in two halves: clients must join deltas, as with a real model.
    for (const piece of text.match(/\S+\s*|\s+/g) ?? []) delta({ content: piece });
    calls.forEach((call, index) => {
      delta({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
      const half = Math.ceil(call.json.length / 2);
      for (const part of [call.json.slice(0, half), call.json.slice(half)]) if (part !== '') delta({ tool_calls: [{ index, function: { arguments: part } }] });
    });
    delta({}, finishReason);
    if (body.stream_options?.include_usage === true) chunk([], { usage });
    res.end('data: [DONE]\n\n');
  }

  function bedrock(req: AnyRequest, res: AnyResponse, modelId: string, streaming: boolean, body: any): void {
    const request: ModelRequest = {
      api: streaming ? 'bedrock-converse-stream' : 'bedrock-converse',
      model: modelId,
      stream: streaming,
      headers: req.headers,
      body,
    };
    requests.push(request);
    const authorization = String(req.headers['authorization'] ?? '');
    const accessKeyId = /^AWS4-HMAC-SHA256 Credential=([^/]+)\//.exec(authorization)?.[1];
    if (accessKeyId === undefined || (options.awsAccessKeyId !== undefined && accessKeyId !== options.awsAccessKeyId)) {
      sendJson(res, 403, { message: 'The security token included in the request is invalid.' }, { 'x-amzn-errortype': 'UnrecognizedClientException' });
      return;
    }
    const reply = next(request);
    if (reply === undefined) {
      sendJson(res, 500, { message: 'model stand-in: no scripted reply left' }, { 'x-amzn-errortype': 'InternalServerException' });
      return;
    }
    const calls = withIds(reply, 'tooluse');
    const text = reply.text ?? '';
    const stopReason = calls.length > 0 ? 'tool_use' : 'end_turn';
    const inputTokens = words(JSON.stringify(body?.messages ?? []));
    const outputTokens = words(text) + calls.length;
    const usage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
    const metrics = { latencyMs: 1 };
    const requestId = `standin-${requests.length}`;
    if (!streaming) {
      const content = [...(text !== '' ? [{ text }] : []), ...calls.map((c) => ({ toolUse: { toolUseId: c.id, name: c.name, input: c.input } }))];
      sendJson(res, 200, { output: { message: { role: 'assistant', content } }, stopReason, usage, metrics }, { 'x-amzn-requestid': requestId });
      return;
    }
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': requestId });
    res.write(eventFrame('messageStart', { role: 'assistant' }));
    let index = 0;
    if (text !== '') {
      for (const piece of text.match(/\S+\s*|\s+/g) ?? []) res.write(eventFrame('contentBlockDelta', { contentBlockIndex: index, delta: { text: piece } }));
      res.write(eventFrame('contentBlockStop', { contentBlockIndex: index }));
      index++;
    }
    for (const call of calls) {
      res.write(eventFrame('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: call.id, name: call.name } } }));
      res.write(eventFrame('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: call.json } } }));
      res.write(eventFrame('contentBlockStop', { contentBlockIndex: index }));
      index++;
    }
    res.write(eventFrame('messageStop', { stopReason }));
    res.end(eventFrame('metadata', { usage, metrics }));
  }

  function handle(req: AnyRequest, res: AnyResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any = null;
      try {
        body = raw === '' ? null : JSON.parse(raw);
      } catch {
        sendJson(res, 400, { error: { message: 'body is not JSON' } });
        return;
      }
      const path = (req.url ?? '').split('?')[0] ?? '';
      const bedrockMatch = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(path);
      if (req.method === 'POST' && path === '/v1/chat/completions') openAi(req, res, body);
      else if (req.method === 'POST' && bedrockMatch) bedrock(req, res, decodeURIComponent(bedrockMatch[1]!), bedrockMatch[2] === 'converse-stream', body);
      else sendJson(res, 404, { error: { message: `model stand-in: no route ${req.method} ${path}` } });
    });
  }

  // boto3 and httpx speak HTTP/1.1; the AWS SDK for JavaScript's Bedrock client speaks HTTP/2 with
  // prior knowledge. One port serves both, told apart by the HTTP/2 connection preface.
  const http1 = createHttpServer(handle);
  const http2 = createHttp2Server(handle);
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', (first: Buffer) => {
      if (first.subarray(0, 3).toString('latin1') !== 'PRI') {
        socket.unshift(first);
        http1.emit('connection', socket);
        return;
      }
      // An HTTP/2 session reads the socket's native handle, past anything unshifted in JavaScript:
      // hand it a plain stream that starts with the bytes already read.
      const relay = new Duplex({
        read: () => socket.resume(),
        write: (chunk: Buffer, _encoding, done) => socket.write(chunk, done),
        final: (done) => socket.end(done),
        destroy: (error, done) => {
          socket.destroy();
          done(error);
        },
      });
      relay.push(first);
      socket.on('data', (chunk: Buffer) => {
        if (!relay.push(chunk)) socket.pause();
      });
      socket.on('end', () => relay.push(null));
      socket.on('close', () => relay.destroy());
      http2.emit('connection', relay);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    requests,
    reply: (...replies) => void queue.push(...replies),
    pending: () => queue.length,
    reset: () => {
      queue.length = 0;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
