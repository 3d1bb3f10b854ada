import { createRequire } from 'node:module';
import { request, type Agent, type Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { lineageOf } from '../../functions/core/http/lineage.ts';
import { TOOL_CALL_CREDITS } from '../../functions/mcp/mcp.schema.ts';
import type { Ports } from '../../functions/ports.ts';
import type { McpRuntime, McpSource } from '../../functions/runtimes/mcp-runtime.ts';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform } from '../support/local-platform.ts';
import { elapsedSince, repoRoot, type BenchModule } from './harness.ts';
import { closeServer, keepAliveAgent } from './http-load.ts';
import { admitPaidRun, startBareServer } from './same-calls.ts';
import { measured, versus } from './stats.ts';
import { attachTracer, describeStoreCalls, spanOf, type Trace } from './trace.ts';

/** The trivial server: what is measured is everything around one `add`. */
const SOURCE = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'bench', version: '1.0.0' });
  server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
  }));
  return server;
};
`;

// The MCP endpoint allows 600 requests a minute per caller; the HTTP cases together stay below it.
const WARM_UP = 20;
const BLOCKS = 5;
const PER_BLOCK = 40;
/** Raw calls traced store call by store call, after the measured ones, in a fresh rate-limit window. */
const TRACED = 60;
const RATE_WINDOW_MS = 60_000;

const IN_MEMORY = 'SDK client, in-memory transport';
const RUNTIME = 'mcpRuntime.handle (host process)';
const RAW = 'POST /mcp/{id} tools/call (raw)';
const SAME_CALLS = 'bare http, same store calls + mcpRuntime.handle';
const CLIENT = 'SDK client over /mcp/{id}';
const TO_RUNTIME = 'POST /mcp/{id}: to mcpRuntime.handle';
const IN_RUNTIME = 'POST /mcp/{id}: in mcpRuntime.handle';
const AFTER_RUNTIME = 'POST /mcp/{id}: after mcpRuntime.handle';

const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add', arguments: { a: 2, b: 3 } } });

/** The same source, evaluated in this process the way the host does for CommonJS. */
function buildInProcess(): McpServer {
  const requireFromRepo = createRequire(repoRoot);
  const module = { exports: {} as { createMcpServer?: () => McpServer } };
  new Function('exports', 'require', 'module', SOURCE)(module.exports, requireFromRepo, module);
  return module.exports.createMcpServer!();
}

async function inMemoryClient(): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await buildInProcess().connect(serverSide);
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

async function clientCall(client: Client): Promise<number> {
  const startedAt = performance.now();
  const result = (await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) as { content?: { text?: string }[] };
  const ms = elapsedSince(startedAt);
  if (result.content?.[0]?.text !== '5') throw new Error(`unexpected tool result ${JSON.stringify(result).slice(0, 200)}`);
  return ms;
}

function post(agent: Agent, url: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(CALL),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(CALL);
  });
}

async function rawCall(agent: Agent, url: string, token: string): Promise<number> {
  const startedAt = performance.now();
  const reply = await post(agent, url, token);
  const ms = elapsedSince(startedAt);
  // A fast error page must not pass for a fast answer.
  if (reply.status !== 200 || !reply.body.includes('"text":"5"')) throw new Error(`POST /mcp: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
  return ms;
}

async function runtimeCall(runtime: McpRuntime, tenantId: string, source: McpSource): Promise<number> {
  const startedAt = performance.now();
  const reply = await runtime.handle(
    tenantId,
    source,
    { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: CALL },
    {},
  );
  const ms = elapsedSince(startedAt);
  if (reply.status !== 200 || !reply.body.includes('"text":"5"')) throw new Error(`mcpRuntime.handle: ${reply.status} ${reply.body.slice(0, 200)}`);
  return ms;
}

/**
 * What the endpoint's store calls cost without the platform's kernel: a bare `node:http` server in
 * this process that makes the calls a `tools/call` makes, in the same steps, through the platform's
 * own store code (`ports`), then the same runtime call, and answers the runtime's body. No routing,
 * schema parsing, envelope, access rules or error handling: what the platform adds over this row is
 * its own cost; what this row adds over `mcpRuntime.handle` is the store's.
 */
async function startSameCallsServer(ports: Ports, token: string, serverId: string, source: McpSource): Promise<{ server: Server; url: string }> {
  const admit = admitPaidRun(ports, token, () => ports.mcpServers.get(serverId), TOOL_CALL_CREDITS);
  const answer = async (body: string): Promise<string> => {
    // auth > rate limit | server > keys | debit > the run | ledger line > usage record
    const { requestId, userId, keys, ledgerLine } = await admit();
    const startedAt = performance.now();
    const [reply] = await Promise.all([
      ports.mcpRuntime.handle(
        userId,
        source,
        { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body },
        keys,
      ),
      ledgerLine,
    ]);
    await ports.usageLogs.write({
      lineage: lineageOf(requestId, undefined),
      userId,
      resourceId: serverId,
      resourceType: 'mcp',
      requestType: 'MCP_TOOLS_CALL',
      status: 'success',
      request: { version: source.version, body: JSON.parse(body) as unknown },
      response: { status: reply.status, body: reply.body },
      durationMs: performance.now() - startedAt,
      creditsUsed: TOOL_CALL_CREDITS,
    });
    return reply.body;
  };
  return startBareServer(answer, 'application/json');
}

/**
 * One `tools/call` of a trivial tool four ways: the same server in this process over the SDK's
 * in-memory transport (the floor: JSON-RPC and the tool, no HTTP, no process hop); the platform's
 * MCP runtime port directly (the loopback hop into the tenant's host process, whose built server is
 * reused under the same keys); the same store calls as the endpoint's around that port, without the
 * platform's kernel (`startSameCallsServer`); and through the platform's MCP endpoint, raw and with
 * the official client (HTTP, auth, the server and version reads, the credit debit with its ledger
 * line, the usage record).
 */
export const mcpBench: BenchModule = {
  name: 'mcp',
  async run({ progress, defer }) {
    progress('mcp: starting the platform');
    const platform = await startTestPlatform({ ...DEFAULT_SPARES });
    defer(() => platform.stop({ removeData: true }));
    const user = await createUser(platform, { alias: 'benchmcp', credits: 1_000_000 });
    const created = await platform.api('POST', '/mcp-admin/create', {
      token: user.token,
      body: { serverName: 'bench', description: 'trivial', sourceCode: SOURCE },
    });
    if (created.status !== 200) throw new Error(`creating the MCP server failed: ${created.status} ${created.text}`);
    const serverId = created.body.data.serverId as string;
    const url = `${platform.url}/mcp/${serverId}`;
    const agent = keepAliveAgent();
    defer(() => agent.destroy());

    const memory = await inMemoryClient();
    defer(() => memory.close());
    const http = new Client({ name: 'bench', version: '1.0.0' });
    await http.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${user.token}` } } }));
    defer(() => http.close());
    const runtime = platform.running.ports.mcpRuntime;
    const source: McpSource = { serverId, version: 1, sourceCode: SOURCE };
    const { server: sameCalls, url: sameCallsUrl } = await startSameCallsServer(platform.running.ports, user.token, serverId, source);
    defer(() => closeServer(sameCalls));

    progress('mcp: warm-up');
    for (let i = 0; i < WARM_UP; i++) {
      await clientCall(memory);
      await runtimeCall(runtime, user.userId, source);
      await rawCall(agent, url, user.token);
      await rawCall(agent, sameCallsUrl, user.token);
      await clientCall(http);
    }

    const samples = new Map<string, number[]>([IN_MEMORY, RUNTIME, SAME_CALLS, RAW, CLIENT].map((k) => [k, []]));
    const steps: [string, () => Promise<number>][] = [
      [IN_MEMORY, () => clientCall(memory)],
      [RUNTIME, () => runtimeCall(runtime, user.userId, source)],
      [SAME_CALLS, () => rawCall(agent, sameCallsUrl, user.token)],
      [RAW, () => rawCall(agent, url, user.token)],
      [CLIENT, () => clientCall(http)],
    ];
    // Alternating blocks, rotating which goes first, so drift falls on every case alike.
    for (let block = 0; block < BLOCKS; block++) {
      progress(`mcp: block ${block + 1} of ${BLOCKS}`);
      for (let i = 0; i < steps.length; i++) {
        const [name, once] = steps[(block + i) % steps.length]!;
        for (let n = 0; n < PER_BLOCK; n++) samples.get(name)!.push(await once());
      }
    }

    // Where the raw call's milliseconds go, traced apart so the rows above carry no instrumentation.
    progress(`mcp: ${TRACED} traced calls`);
    platform.clock.alignToWindow(RATE_WINDOW_MS);
    await rawCall(agent, url, user.token);
    const tracer = attachTracer(platform.running.ports);
    const traces: Trace[] = [];
    try {
      for (let n = 0; n < TRACED; n++) traces.push(await tracer.trace(() => rawCall(agent, url, user.token)));
    } finally {
      tracer.detach();
    }
    const runtimeSpan = (trace: Trace) => spanOf(trace, 'mcpRuntime.handle');
    const stage = (name: string, of: (trace: Trace) => number, note: string) => measured(name, traces.map(of), { note });
    const breakdown = [
      stage(
        TO_RUNTIME,
        (t) => runtimeSpan(t).start,
        `request sent to the runtime call: HTTP, auth, rate limit, server and version reads, debit, keys; ${describeStoreCalls(traces, (t, s) => s.end <= runtimeSpan(t).start)}; still in flight when it starts: ${describeStoreCalls(traces, (t, s) => s.start < runtimeSpan(t).start && s.end > runtimeSpan(t).start)}`,
      ),
      stage(IN_RUNTIME, (t) => runtimeSpan(t).end - runtimeSpan(t).start, 'the port as the endpoint calls it (owner keys as env), in the same traced requests'),
      stage(
        AFTER_RUNTIME,
        (t) => t.end - runtimeSpan(t).end,
        `runtime answer to the response read in full: usage record, reply; ${describeStoreCalls(traces, (t, s) => s.start >= runtimeSpan(t).end)}`,
      ),
    ];

    const floor = measured(IN_MEMORY, samples.get(IN_MEMORY)!, {
      note: 'same source evaluated in the bench process; Client <-> McpServer over InMemoryTransport',
    });
    const port = versus(
      measured(RUNTIME, samples.get(RUNTIME)!, {
        note: 'loopback HTTP to the tenant host, built server reused (same keys); no platform HTTP, auth, credits or logs',
      }),
      floor,
    );
    const sameCallsRow = measured(SAME_CALLS, samples.get(SAME_CALLS)!);
    const same = {
      ...sameCallsRow,
      note: `the endpoint's 7 store calls in its 4 steps (auth > limiter | server > keys | debit > run | ledger line > usage record), no kernel: +${(sameCallsRow.p50 - port.p50).toFixed(1)} ms p50 over mcpRuntime.handle`,
    };
    const raw = measured(RAW, samples.get(RAW)!);
    const client = measured(CLIENT, samples.get(CLIENT)!);
    const overhead = (row: typeof raw) =>
      `platform overhead over mcpRuntime.handle: p50 ${(row.p50 - port.p50).toFixed(1)} ms, p99 ${(row.p99 - port.p99).toFixed(1)} ms`;
    return [
      floor,
      port,
      versus(same, port),
      versus(versus(versus({ ...raw, note: overhead(raw) }, floor), port), same),
      versus(versus({ ...client, note: overhead(client) }, floor), port),
      ...breakdown,
    ];
  },
};
