import { describe, expect, it } from 'vitest';
import type { UserActor } from '../../functions/core/auth/actor.ts';
import { anonymous } from '../../functions/core/auth/actor.ts';
import { parseConfig } from '../../functions/core/config.ts';
import { AccessDeniedError, AuthenticationRequiredError, InsufficientCreditsError, NotFoundError } from '../../functions/core/errors.ts';
import { lineageOf } from '../../functions/core/http/lineage.ts';
import type { HttpRequest } from '../../functions/core/http/request.ts';
import type { UsageLogInput } from '../../functions/core/usage-log.ts';
import { callMcpServer, OwnerCreditsExhaustedError, type McpEndpointPorts } from '../../functions/mcp/endpoint.service.ts';
import type { McpServerRecord, McpVersion } from '../../functions/mcp/mcp.schema.ts';
import type { McpHttpRequest, McpHttpResponse, McpSource } from '../../functions/runtimes/mcp-runtime.ts';
import { scopeOf } from '../support/request-scope.ts';
import { areas } from '../../lib/manifest/areas.ts';
import { deferred, settled } from '../support/deferred.ts';

const OWNER = 'user-owner';

function user(userId: string, extra: Partial<UserActor> = {}): UserActor {
  return { kind: 'user', userId, alias: userId, isAdmin: false, via: 'user-token', tokenId: 'tok', scope: 'full', roleKeys: null, ...extra };
}

function server(visibility: 'private' | 'public'): McpServerRecord {
  return {
    serverId: 'mcp-abc',
    ownerId: OWNER,
    serverName: 'calc',
    description: 'd',
    visibility,
    sourceVisibility: 'visible',
    authorPricing: null,
    latestVersion: 2,
    tools: ['add'],
    sourceSha256: 'x',
    sourceSizeBytes: 1,
    createdAt: 1,
    updatedAt: 1,
  };
}

function version(n: number): McpVersion {
  return {
    serverId: 'mcp-abc',
    version: n,
    createdAt: 1,
    createdBy: OWNER,
    sizeBytes: 1,
    changeNote: '',
    rollbackOf: null,
    tools: ['add'],
    sourceSha256: 'x',
    sourceCode: `source v${n}`,
  };
}

function request(body: unknown, headers: Record<string, string> = {}, method = 'POST'): HttpRequest {
  return {
    method,
    path: '/mcp/mcp-abc',
    pathParams: { serverId: 'mcp-abc' },
    query: {},
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: body === undefined ? null : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
    sourceIp: '127.0.0.1',
    requestId: 'req-1',
    baseUrl: 'http://local',
  };
}

/** In-memory ports recording what the endpoint did. */
function fakePorts(
  options: {
    visibility?: 'private' | 'public';
    answer?: McpHttpResponse | Error;
    balance?: number;
    /** When the debit's ledger line is written (or fails): at once unless given. */
    ledgerWrite?: Promise<void>;
  } = {},
) {
  const calls = {
    handled: [] as { tenantId: string; source: McpSource; request: McpHttpRequest; env: Record<string, string> }[],
    debits: [] as { userId: string; amount: number }[],
    /** Ledger lines written, and whether the runtime had been called when the write started. */
    lines: [] as { userId: string; amount: number; startedWithRun: boolean }[],
    grants: [] as { userId: string; amount: number }[],
    records: [] as UsageLogInput[],
    keysReadAs: [] as UserActor[],
  };
  const record = server(options.visibility ?? 'private');
  const ports = {
    config: parseConfig({ TABLE_PREFIX: 't-', BUCKET_PREFIX: 'b-' }, areas),
    clock: { now: () => 1000 },
    log: { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined, child: () => ports.log },
    mcpServers: {
      get: async (id: string) => (id === record.serverId ? record : null),
      getVersion: async (_id: string, n: number) => (n <= 2 ? version(n) : null),
    },
    users: { getAliasClaim: async () => null, get: async () => null },
    keysReader: {
      readAllKeys: async (caller: UserActor) => {
        calls.keysReadAs.push(caller);
        return Object.fromEntries(['weather', 'maps-api'].map((n) => [n, `value-of-${n}`]));
      },
    },
    credits: {
      debitWithPendingLine: async (userId: string, amount: number) => {
        if ((options.balance ?? 100) < amount) throw new InsufficientCreditsError(amount, options.balance ?? 0);
        calls.debits.push({ userId, amount });
        const write = options.ledgerWrite ?? Promise.resolve();
        const line = write.then(() => void calls.lines.push({ userId, amount: -amount, startedWithRun: calls.handled.length > 0 }));
        line.catch(() => undefined);
        return { balanceAfter: 0, line };
      },
      grant: async (userId: string, amount: number) => void calls.grants.push({ userId, amount }),
    },
    usageLogs: { write: async (input: UsageLogInput) => void calls.records.push(input) },
    mcpRuntime: {
      inspect: async () => ({ ok: true, tools: [] }),
      handle: async (tenantId: string, source: McpSource, req: McpHttpRequest, env: Record<string, string>) => {
        calls.handled.push({ tenantId, source, request: req, env });
        if (options.answer instanceof Error) throw options.answer;
        return (
          options.answer ?? {
            status: 200,
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }] } }),
          }
        );
      },
    },
  };
  return { ports: ports as unknown as McpEndpointPorts, calls };
}

const toolCall = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'add', arguments: {} } });
const signal = new AbortController().signal;

describe('callMcpServer', () => {
  it("runs the live version in the owner's tenant with the owner's keys as SERVICENAME_KEY and only MCP headers", async () => {
    // Prepare
    const { ports, calls } = fakePorts();
    const req = request(toolCall(1), { authorization: 'Bearer svc_ut_secret', 'x-svc-secretkey': 'k', cookie: 'c=1', 'mcp-protocol-version': '2025-06-18' });
    // Act
    const reply = await callMcpServer(
      scopeOf(user(OWNER), { lineage: lineageOf('req-1', undefined), signal: signal }),
      { serverId: 'mcp-abc' },
      undefined,
      req,
      ports,
    );
    // Assess
    expect(reply.status).toBe(200);
    expect(reply.raw?.contentType).toBe('application/json');
    expect(reply.headers['x-mcp-server-version']).toBe('2');
    expect(calls.handled).toHaveLength(1);
    expect(calls.handled[0]!.tenantId).toBe(OWNER);
    expect(calls.handled[0]!.source).toEqual({ serverId: 'mcp-abc', version: 2, sourceCode: 'source v2' });
    expect(Object.keys(calls.handled[0]!.request.headers).sort()).toEqual(['accept', 'content-type', 'mcp-protocol-version']);
    expect(calls.handled[0]!.env).toEqual({ WEATHER_KEY: 'value-of-weather', MAPS_API_KEY: 'value-of-maps-api' });
  });

  it('runs a pinned version and refuses a missing one with 404 before running or charging anything', async () => {
    // Prepare
    const { ports, calls } = fakePorts();
    // Act
    await callMcpServer(scopeOf(user(OWNER), { lineage: lineageOf('r', undefined), signal: signal }), { serverId: 'mcp-abc' }, 1, request(toolCall(1)), ports);
    const missing = callMcpServer(
      scopeOf(user(OWNER), { lineage: lineageOf('r', undefined), signal: signal }),
      { serverId: 'mcp-abc' },
      3,
      request(toolCall(1)),
      ports,
    );
    // Assess
    expect(calls.handled[0]!.source.version).toBe(1);
    await expect(missing).rejects.toBeInstanceOf(NotFoundError);
    expect(calls.handled).toHaveLength(1);
    expect(calls.debits).toHaveLength(1);
  });

  it('keeps private servers to their owner: anonymous 401, another user 403', async () => {
    // Prepare
    const { ports, calls } = fakePorts({ visibility: 'private' });
    // Act
    const asAnonymous = callMcpServer(
      scopeOf(anonymous, { lineage: lineageOf('r', undefined), signal: signal }),
      { serverId: 'mcp-abc' },
      undefined,
      request(toolCall(1)),
      ports,
    );
    const asOther = callMcpServer(
      scopeOf(user('someone-else'), { lineage: lineageOf('r', undefined), signal: signal }),
      { serverId: 'mcp-abc' },
      undefined,
      request(toolCall(1)),
      ports,
    );
    // Assess
    await expect(asAnonymous).rejects.toBeInstanceOf(AuthenticationRequiredError);
    await expect(asOther).rejects.toBeInstanceOf(AccessDeniedError);
    expect(calls.handled).toHaveLength(0);
  });

  it('charges the caller per tools/call in a batch, the owner for anonymous callers, and nothing for tools/list', async () => {
    // Prepare
    const { ports, calls } = fakePorts({ visibility: 'public' });
    const lineage = lineageOf('r', undefined);
    // Act
    await callMcpServer(
      scopeOf(user('caller'), { lineage: lineage, signal: signal }),
      { serverId: 'mcp-abc' },
      undefined,
      request([toolCall(1), toolCall(2), { jsonrpc: '2.0', id: 3, method: 'tools/list' }]),
      ports,
    );
    await callMcpServer(scopeOf(anonymous, { lineage: lineage, signal: signal }), { serverId: 'mcp-abc' }, undefined, request(toolCall(4)), ports);
    await callMcpServer(
      scopeOf(anonymous, { lineage: lineage, signal: signal }),
      { serverId: 'mcp-abc' },
      undefined,
      request({ jsonrpc: '2.0', id: 5, method: 'tools/list' }),
      ports,
    );
    // Assess
    expect(calls.debits).toEqual([
      { userId: 'caller', amount: 2 },
      { userId: OWNER, amount: 1 },
    ]);
    expect(calls.records.map((r) => [r.userId, r.requestType, r.creditsUsed])).toEqual([
      ['caller', 'MCP_BATCH', 2],
      [OWNER, 'MCP_TOOLS_CALL', 1],
      [OWNER, 'MCP_TOOLS_LIST', 0],
    ]);
    // Anonymous callers run without a role-token restriction on the owner's keys.
    expect(calls.keysReadAs[1]).toMatchObject({ scope: 'full', roleKeys: null });
    expect(calls.keysReadAs[1]!.userId).not.toBe(OWNER);
  });

  it('refuses with 402 before running when the payer is short', async () => {
    // Prepare
    const { ports, calls } = fakePorts({ visibility: 'public', balance: 0 });
    // Act
    const refused = callMcpServer(
      scopeOf(user('caller'), { lineage: lineageOf('r', undefined), signal: signal }),
      { serverId: 'mcp-abc' },
      undefined,
      request(toolCall(1)),
      ports,
    );
    // Assess
    await expect(refused).rejects.toBeInstanceOf(InsufficientCreditsError);
    expect(calls.handled).toHaveLength(0);
    expect(calls.records).toHaveLength(0);
  });

  it("refuses an anonymous call the owner cannot pay for without telling the owner's balance", async () => {
    // Prepare
    const { ports, calls } = fakePorts({ visibility: 'public', balance: 0 });
    // Act
    const refused = callMcpServer(
      scopeOf(anonymous, { lineage: lineageOf('r', undefined), signal: signal }),
      { serverId: 'mcp-abc' },
      undefined,
      request(toolCall(1)),
      ports,
    );
    // Assess
    await expect(refused).rejects.toBeInstanceOf(OwnerCreditsExhaustedError);
    await expect(refused).rejects.toMatchObject({ kind: 'insufficient-credits', message: expect.not.stringMatching(/balance/) });
    expect(calls.handled).toHaveLength(0);
  });

  it('keeps the credits of a call handed to the runtime whatever it answered (5xx), gives them back when the platform threw first', async () => {
    // Prepare
    const failing = fakePorts({
      answer: {
        status: 502,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'host crashed' } }),
      },
    });
    const throwing = fakePorts({ answer: new Error('platform bug') });
    // Act
    const reply = await callMcpServer(
      scopeOf(user(OWNER), { lineage: lineageOf('r', undefined), signal: signal }),
      { serverId: 'mcp-abc' },
      undefined,
      request(toolCall(1)),
      failing.ports,
    );
    const thrown = callMcpServer(
      scopeOf(user(OWNER), { lineage: lineageOf('r', undefined), signal: signal }),
      { serverId: 'mcp-abc' },
      undefined,
      request(toolCall(1)),
      throwing.ports,
    );
    // Assess
    expect(reply.status).toBe(502);
    expect(failing.calls.grants).toEqual([]);
    expect(failing.calls.records[0]).toMatchObject({ status: 'error', creditsUsed: 1, error: { code: 'JSONRPC_-32000', message: 'host crashed' } });
    await expect(thrown).rejects.toThrow('platform bug');
    expect(throwing.calls.grants).toEqual([{ userId: OWNER, amount: 1 }]);
  });

  it("writes the debit's ledger line while the server runs, and answers (or fails) only once it is written", async () => {
    // Prepare: ledger writes that finish when the test says so
    const [okWrite, failedRunWrite, brokenWrite] = [deferred(), deferred(), deferred()];
    const ok = fakePorts({ ledgerWrite: okWrite.promise });
    const failedRun = fakePorts({ ledgerWrite: failedRunWrite.promise, answer: new Error('platform bug') });
    const broken = fakePorts({ ledgerWrite: brokenWrite.promise });
    const call = (ports: McpEndpointPorts) =>
      callMcpServer(
        scopeOf(user(OWNER), { lineage: lineageOf('r', undefined), signal: signal }),
        { serverId: 'mcp-abc' },
        undefined,
        request(toolCall(1)),
        ports,
      );
    // Act
    const answered = call(ok.ports);
    const okBeforeLine = await settled(answered);
    const okRunsBeforeLine = ok.calls.handled.length;
    okWrite.resolve();
    const reply = await answered;
    const failed = call(failedRun.ports);
    const failedBeforeLine = await settled(failed);
    failedRunWrite.resolve();
    const failure = await failed.catch((error: unknown) => error);
    const lost = call(broken.ports);
    brokenWrite.reject(new Error('ledger unavailable'));
    const lostFailure = await lost.catch((error: unknown) => error);
    // Assess: the run did not wait for the line, the answer did
    expect(okRunsBeforeLine).toBe(1);
    expect(okBeforeLine).toBe(false);
    expect(reply.status).toBe(200);
    expect(ok.calls.lines).toEqual([{ userId: OWNER, amount: -1, startedWithRun: true }]);
    // A run that failed on the platform's side: the credit goes back, and the debit's line is still written first.
    expect(failedBeforeLine).toBe(false);
    expect((failure as Error).message).toBe('platform bug');
    expect(failedRun.calls.lines).toEqual([{ userId: OWNER, amount: -1, startedWithRun: true }]);
    expect(failedRun.calls.grants).toEqual([{ userId: OWNER, amount: 1 }]);
    // A ledger line that cannot be written fails the request as before (500), the credit kept; the run's record stays.
    expect((lostFailure as Error).message).toBe('ledger unavailable');
    expect(broken.calls.handled).toHaveLength(1);
    expect(broken.calls.grants).toEqual([]);
    expect(broken.calls.records[0]).toMatchObject({ status: 'success', creditsUsed: 1 });
  });

  it('records a tool result marked isError as an error, with the lineage of the request', async () => {
    // Prepare
    const { ports, calls } = fakePorts({
      answer: {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, result: { isError: true, content: [{ type: 'text', text: 'bad input' }] } }),
      },
    });
    const lineage = lineageOf('req-9', 'root=root-1;parent=chat-1;conversation=conv-1;agent=agent-1');
    // Act
    await callMcpServer(scopeOf(user(OWNER), { lineage: lineage, signal: signal }), { serverId: 'mcp-abc' }, undefined, request(toolCall(1)), ports);
    // Assess
    expect(calls.records[0]).toMatchObject({
      status: 'error',
      resourceType: 'mcp',
      resourceId: 'mcp-abc',
      error: { code: 'TOOL_ERROR', message: 'bad input' },
    });
    expect(calls.records[0]!.lineage).toEqual({
      requestId: 'req-9',
      rootRequestId: 'root-1',
      parentRequestId: 'chat-1',
      parentConversationId: 'conv-1',
      parentAgentId: 'agent-1',
    });
  });

  it('answers GET with 405 without running, charging or recording anything', async () => {
    // Prepare
    const { ports, calls } = fakePorts({ visibility: 'public' });
    // Act
    const reply = await callMcpServer(
      scopeOf(anonymous, { lineage: lineageOf('r', undefined), signal: signal }),
      { serverId: 'mcp-abc' },
      undefined,
      request(undefined, { accept: 'text/event-stream' }, 'GET'),
      ports,
    );
    // Assess
    expect(reply.status).toBe(405);
    expect(reply.headers['allow']).toBe('POST');
    expect(calls.handled).toHaveLength(0);
    expect(calls.debits).toHaveLength(0);
    expect(calls.records).toHaveLength(0);
  });
});
